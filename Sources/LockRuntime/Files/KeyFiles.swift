import ByteCore
import Codecs
import Crypto
import Foundation
import Lock
import OfflineUnlock

/// Reading and writing the key and document files users hand LockBench: private keys PEM PKCS#8,
/// public keys PEM SPKI, reader identities JSON, documents CBOR.
public enum KeyFiles {
    public static func readText(_ path: String, what: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UserError(message: "cannot read \(what) \(path): no such file or not readable")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw UserError(message: "\(what) \(path) is not a text (PEM) file") }
        return text
    }

    public static func readBytes(_ path: String, what: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UserError(message: "cannot read \(what) \(path): no such file or not readable")
        }
        return Array(data)
    }

    /// A P-256 private key file readable by its owner only (see `PrivateKeyFile.load`).
    public static func privateKey(_ path: String, what: String) throws -> P256.Signing.PrivateKey {
        _ = try readText(path, what: what)
        do throws(LockError) { return try PrivateKeyFile.load(path) } catch {
            throw UserError(message: "\(what): \(error.reason)\(error.reason.contains("chmod") || error.reason.contains("public key") ? "" : " (expected -----BEGIN PRIVATE KEY-----, as `lockbench key` writes)")")
        }
    }

    /// Writes a private key mode 0600 from the start (`PrivateKeyFile.write`).
    public static func writePrivateKey(_ key: P256.Signing.PrivateKey, to path: String, force: Bool) throws {
        do throws(LockError) { try PrivateKeyFile.write(key, to: path, overwrite: force) } catch {
            throw UserError(message: error.reason, code: error.code.isEnvironment ? ExitCodes.environment : ExitCodes.usage)
        }
    }

    /// A 65-byte public key from a PEM public key file, or from a private key file (its public half).
    public static func publicKey(_ path: String, what: String) throws -> [UInt8] {
        let pem = try readText(path, what: what)
        if pem.contains("PRIVATE KEY") {
            return Primitives.point(of: try privateKey(path, what: what))
        }
        do { return try Primitives.publicKey(spkiPEM: pem) } catch {
            throw UserError(message: "\(what) \(path): \(error.reason) (expected -----BEGIN PUBLIC KEY-----, as `lockbench key` writes)")
        }
    }

    public static func write(_ data: Data, to path: String, force: Bool, mode: Int = 0o644) throws {
        if !force, FileManager.default.fileExists(atPath: path) {
            throw UserError(message: "\(path) exists; pass --force to overwrite it")
        }
        let dir = (path as NSString).deletingLastPathComponent
        if !dir.isEmpty { try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        guard FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: mode]) else {
            throw UserError(message: "cannot write \(path)", code: ExitCodes.environment)
        }
    }

    /// Pretty JSON, keys sorted (a command's `--json` answer).
    public static func json<T: Encodable>(_ value: T) -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! e.encode(value), as: UTF8.self)
    }

    /// One-line JSON (for line-per-event output).
    public static func compactJSON<T: Encodable>(_ value: T) -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! e.encode(value), as: UTF8.self)
    }

    /// `2026-03-02T09:00:00Z` → Date, or a usage error naming the flag.
    public static func time(_ text: String, flag: String) throws -> Date {
        guard let d = RFC3339.parse(text) else {
            throw UserError(message: "\(flag) \"\(text)\" is not an ISO-8601 time like 2026-03-02T09:00:00Z")
        }
        return d
    }

    /// A duration flag within `range` (by default 1 s … `DurationText.maximum`), or a usage error
    /// naming the flag: `inf`, `nan`, `1e300` and out-of-range values are refused here, not trapped on later.
    /// A bare number is refused too: on a command line the unit must be written (`8h`, not `8`).
    public static func duration(_ text: String, flag: String, within range: ClosedRange<TimeInterval> = 1...DurationText.maximum) throws -> TimeInterval {
        do throws(DurationText.Refusal) { return try DurationText.parse(text, within: range, what: flag, unitRequired: true) } catch {
            throw UserError(message: error.message)
        }
    }

    /// 16 bytes from 32 hex digits, or a usage error.
    public static func id16(_ text: String, flag: String) throws -> [UInt8] {
        guard let b = Hex.decode(text), b.count == 16 else {
            throw UserError(message: "\(flag) must be 32 hex digits (16 bytes), got \"\(text)\"")
        }
        return b
    }
}

/// A reader identity file (`NAME.reader.json`), written by `lockbench key reader`.
public struct ReaderIdentityFile: Codable {
    /// The reader's signing key (PEM PKCS#8), relative to this file.
    public var signingKey: String
    public var publicKey: String
    public var groupID: String
    public var subID: String

    public init(signingKey: String, publicKey: String, groupID: String, subID: String) {
        self.signingKey = signingKey; self.publicKey = publicKey; self.groupID = groupID; self.subID = subID
    }

    public static func load(_ path: String) throws -> (file: ReaderIdentityFile, directory: String) {
        let data = try KeyFiles.readBytes(path, what: "reader identity")
        guard let f = try? JSONDecoder().decode(ReaderIdentityFile.self, from: Data(data)) else {
            throw UserError(message: "\(path) is not a reader identity (JSON with signingKey, publicKey, groupID, subID)")
        }
        _ = try KeyFiles.id16(f.groupID, flag: "\(path) groupID")
        _ = try KeyFiles.id16(f.subID, flag: "\(path) subID")
        let dir = (path as NSString).deletingLastPathComponent
        return (f, dir.isEmpty ? "." : dir)
    }
}
