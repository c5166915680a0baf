import ByteCore
import Crypto
import Foundation

/// The crypto primitives the access protocol uses, in one place (P-256 ECDH and ECDSA,
/// X9.63 KDF, HKDF-SHA256, AES-256-GCM, SHA-1 key slots). Thin wrappers over swift-crypto.
public enum ProtocolCrypto {
    /// ECDH on P-256: the shared x-coordinate Z (32 bytes).
    public static func ecdh(_ privateKey: P256.KeyAgreement.PrivateKey, _ peerPublicKey: P256.KeyAgreement.PublicKey) throws -> [UInt8] {
        let secret = try privateKey.sharedSecretFromKeyAgreement(with: peerPublicKey)
        return secret.withUnsafeBytes { Array($0) }
    }

    /// ANSI X9.63 KDF with SHA-256: Hash(Z ‖ counter32 ‖ sharedInfo) for counter = 1, 2, …
    public static func x963KDF(_ z: [UInt8], sharedInfo: [UInt8], count: Int) -> [UInt8] {
        var out: [UInt8] = []
        var counter: UInt32 = 1
        while out.count < count {
            var h = SHA256()
            h.update(data: z)
            h.update(data: [UInt8(counter >> 24), UInt8(truncatingIfNeeded: counter >> 16),
                            UInt8(truncatingIfNeeded: counter >> 8), UInt8(truncatingIfNeeded: counter)])
            h.update(data: sharedInfo)
            out += Array(h.finalize())
            counter += 1
        }
        return Array(out.prefix(count))
    }

    /// HKDF-SHA256 (RFC 5869) extract-then-expand.
    public static func hkdf(_ ikm: [UInt8], salt: [UInt8], info: [UInt8], count: Int) -> [UInt8] {
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: ikm), salt: salt, info: info,
                                         outputByteCount: count)
        return key.withUnsafeBytes { Array($0) }
    }

    /// AES-256-GCM seal; returns ciphertext ‖ 16-byte tag. No AAD.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8]) -> [UInt8] {
        do {
            let box = try AES.GCM.seal(plaintext, using: SymmetricKey(data: key), nonce: AES.GCM.Nonce(data: iv))
            return Array(box.ciphertext) + Array(box.tag)
        } catch {
            preconditionFailure("AES-GCM seal with a 32-byte key and 12-byte IV cannot fail: \(error)")
        }
    }

    /// AES-256-GCM open of ciphertext ‖ tag; nil when the tag does not verify.
    public static func open(_ sealed: [UInt8], key: [UInt8], iv: [UInt8]) -> [UInt8]? {
        guard sealed.count >= 16 else { return nil }
        guard let nonce = try? AES.GCM.Nonce(data: iv),
              let box = try? AES.GCM.SealedBox(nonce: nonce, ciphertext: sealed.dropLast(16), tag: sealed.suffix(16)),
              let plain = try? AES.GCM.open(box, using: SymmetricKey(data: key)) else { return nil }
        return Array(plain)
    }

    /// ECDSA P-256 / SHA-256 signature, raw r ‖ s (64 bytes). swift-crypto signs with a random k.
    public static func sign(_ message: [UInt8], with key: P256.Signing.PrivateKey) -> [UInt8] {
        do {
            return Array(try key.signature(for: message).rawRepresentation)
        } catch {
            preconditionFailure("P-256 signing cannot fail: \(error)")
        }
    }

    /// Verifies a raw r ‖ s signature over `message` (SHA-256 inside).
    public static func verify(_ signature: [UInt8], over message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64,
              let key = try? P256.Signing.PublicKey(x963Representation: publicKey),
              let sig = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(sig, for: message)
    }

    /// A 65-byte `04‖X‖Y` key → key-agreement public key; nil when not a point on P-256.
    public static func agreementKey(_ bytes: [UInt8]) -> P256.KeyAgreement.PublicKey? {
        guard bytes.count == 65, bytes.first == 0x04 else { return nil }
        return try? P256.KeyAgreement.PublicKey(x963Representation: bytes)
    }

    /// Key slot = SHA-1(65-byte public key)[0:8].
    public static func keySlot(_ publicKey: [UInt8]) -> [UInt8] {
        Array(Insecure.SHA1.hash(data: publicKey).prefix(8))
    }

    /// The X coordinate of a 65-byte uncompressed key.
    public static func x(_ publicKey: [UInt8]) -> [UInt8] { Array(publicKey[1..<33]) }
}

extension P256.KeyAgreement.PrivateKey {
    /// `04‖X‖Y`.
    var publicBytes: [UInt8] { Array(publicKey.x963Representation) }
}

extension P256.Signing.PrivateKey {
    /// `04‖X‖Y`.
    public var publicBytes: [UInt8] { Array(publicKey.x963Representation) }
}
