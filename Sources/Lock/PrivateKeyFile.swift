#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Codecs
import Crypto
import Foundation

/// Private key files (PEM PKCS#8, P-256), written and read the way ssh treats its keys: created
/// mode 0600 from the first byte, and refused when group or others may read them.
public enum PrivateKeyFile {
    /// Writes `key` to `path`: a new temporary file opened `O_CREAT | O_EXCL` with mode 0600 (the
    /// umask can only narrow it), written, fsynced, renamed over `path`, directory fsynced. No
    /// moment exists at which the key is readable by anyone else. `overwrite: false` refuses an
    /// existing `path`.
    public static func write(_ key: P256.Signing.PrivateKey, to path: String, overwrite: Bool = false) throws(LockError) {
        if !overwrite, FileManager.default.fileExists(atPath: path) {
            throw LockError(.invalidInput, "\(path) exists; pass --force to overwrite it")
        }
        let dir = (path as NSString).deletingLastPathComponent
        if !dir.isEmpty { try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        try DurableFile.writeAtomically(Array(key.pemRepresentation.utf8), to: path, mode: 0o600)
    }

    /// Reads a P-256 private key. Refused (`invalid_identity`) when the file is readable or writable
    /// by group or others — the message says `chmod 600 FILE` — or when it is not a P-256 key.
    public static func load(_ path: String) throws(LockError) -> P256.Signing.PrivateKey {
        var st = stat()
        guard stat(path, &st) == 0 else { throw LockError(.invalidIdentity, "cannot read private key \(path): \(String(cString: strerror(errno)))") }
        let mode = st.st_mode & 0o777
        // A public key is no secret, so its mode is no matter: say what it is, not `chmod 600`.
        if let head = FileManager.default.contents(atPath: path)?.prefix(4096),
           String(decoding: head, as: UTF8.self).contains("-----BEGIN PUBLIC KEY-----") {
            throw LockError(.invalidIdentity, "\(path) is a public key (-----BEGIN PUBLIC KEY-----); this needs the matching private key (-----BEGIN PRIVATE KEY-----)\(path.hasSuffix(".pub.pem") ? ", " + path.dropLast(".pub.pem".count) + ".key.pem" : ""), the .key.pem file `lockbench key` wrote beside it")
        }
        guard mode & 0o077 == 0 else {
            throw LockError(.invalidIdentity, "private key \(path) is accessible by others (mode \(String(mode, radix: 8))); it must be readable by its owner only: chmod 600 \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path), let pem = String(data: data, encoding: .utf8) else {
            throw LockError(.invalidIdentity, "cannot read private key \(path)")
        }
        do throws(PrimitiveError) { return try Primitives.signingPrivateKey(pem: pem) } catch {
            throw LockError(.invalidIdentity, "private key \(path): \(error.reason)")
        }
    }
}
