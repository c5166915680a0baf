import Crypto
import Lock
import Foundation
import TrustModel

/// A site directory (`lockbench trust init DIR`): the issuer key that signs access and revocation
/// documents (locks trust `issuer.pub.pem`), the key that signs access tokens, the settings, and
/// the SQLite database.
///
///   DIR/issuer.key.pem  issuer.pub.pem  token.key.pem  site.json  trust.sqlite
public struct TrustSite: Sendable {
    public let directory: String
    public let issuerKey: P256.Signing.PrivateKey
    public let tokenKey: P256.Signing.PrivateKey
    public var settings: TrustSettings

    public static let issuerKeyFile = "issuer.key.pem"
    public static let issuerPublicFile = "issuer.pub.pem"
    public static let tokenKeyFile = "token.key.pem"
    public static let settingsFile = "site.json"
    public static let databaseFile = "trust.sqlite"

    public var databasePath: String { directory + "/" + Self.databaseFile }
    public var issuerPublicPath: String { directory + "/" + Self.issuerPublicFile }

    /// Creates a new site; refuses a directory that already holds one.
    public static func create(at directory: String, settings: TrustSettings = TrustSettings()) throws(TrustError) -> TrustSite {
        let fm = FileManager.default
        if fm.fileExists(atPath: directory + "/" + issuerKeyFile) {
            throw TrustError(.conflict, "\(directory) already holds a site (\(issuerKeyFile)); pick another directory")
        }
        do {
            try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let issuer = P256.Signing.PrivateKey(), token = P256.Signing.PrivateKey()
            // The lock side's key writer: mode 0600 from the first byte (a new file opened O_EXCL,
            // fsynced, renamed into place), so no one else can read a key at any moment.
            try PrivateKeyFile.write(issuer, to: directory + "/" + issuerKeyFile)
            try Data(issuer.publicKey.pemRepresentation.utf8).write(to: URL(fileURLWithPath: directory + "/" + issuerPublicFile), options: .atomic)
            try PrivateKeyFile.write(token, to: directory + "/" + tokenKeyFile)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(settings).write(to: URL(fileURLWithPath: directory + "/" + settingsFile), options: .atomic)
            return TrustSite(directory: directory, issuerKey: issuer, tokenKey: token, settings: settings)
        } catch {
            throw TrustError(.invalidRequest, "cannot create the site in \(directory): \(error.localizedDescription)")
        }
    }

    public static func open(_ directory: String) throws(TrustError) -> TrustSite {
        func read(_ name: String) throws(TrustError) -> String {
            let path = directory + "/" + name
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw TrustError(.notFound, "\(path) is missing or unreadable: is \(directory) a site from `lockbench trust init`?")
            }
            guard let s = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw TrustError(.invalidRequest, "\(path) is not text (a PEM key or the JSON settings `lockbench trust init` writes): restore it from the site's backup")
            }
            return s
        }
        // The lock side's key checks: readable by the owner only, and a P-256 key (not secp256k1,
        // not explicit curve parameters).
        func key(_ name: String) throws(TrustError) -> P256.Signing.PrivateKey {
            _ = try read(name)
            do throws(LockError) { return try PrivateKeyFile.load(directory + "/" + name) } catch {
                throw TrustError(.invalidRequest, error.reason)
            }
        }
        let issuer = try key(issuerKeyFile), token = try key(tokenKeyFile)
        let settings: TrustSettings
        do { settings = try JSONDecoder().decode(TrustSettings.self, from: Data(try read(settingsFile).utf8)) } catch let e as TrustError { throw e } catch {
            throw TrustError(.invalidRequest, "\(directory)/\(settingsFile): \(error)")
        }
        do { try settings.validate() } catch {
            throw TrustError(.invalidRequest, "\(directory)/\(settingsFile): \(error.message); fix it or set it with `lockbench trust init --set`")
        }
        return TrustSite(directory: directory, issuerKey: issuer, tokenKey: token, settings: settings)
    }

}
