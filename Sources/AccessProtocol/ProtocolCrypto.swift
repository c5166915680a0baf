import ByteCore
import Codecs
import Crypto

/// The crypto the access protocol uses, as calls into `Codecs.Primitives` (the one place that
/// wraps swift-crypto and runs the Wycheproof vectors), shaped for the protocol's needs.
public enum ProtocolCrypto {
    /// ECDH on P-256: the shared x-coordinate Z (32 bytes).
    public static func ecdh(_ privateKey: P256.KeyAgreement.PrivateKey, _ peerPublicKey: [UInt8]) throws(PrimitiveError) -> [UInt8] {
        try Primitives.ecdh(privateKey: privateKey, peerPublicKey: peerPublicKey)
    }

    /// ANSI X9.63 KDF with SHA-256.
    public static func x963KDF(_ z: [UInt8], sharedInfo: [UInt8], count: Int) -> [UInt8] {
        Primitives.x963KDF(sharedSecret: z, sharedInfo: sharedInfo, length: count)
    }

    /// HKDF-SHA256 (RFC 5869), `count` ≤ 8160: `Primitives.hkdf` (the Wycheproof-tested one).
    public static func hkdf(_ ikm: [UInt8], salt: [UInt8], info: [UInt8], count: Int) -> [UInt8] {
        do { return try Primitives.hkdf(ikm: ikm, salt: salt, info: info, length: count) } catch {
            preconditionFailure("HKDF-SHA256 output of \(count) bytes: \(error)")
        }
    }

    /// AES-256-GCM seal; returns ciphertext ‖ 16-byte tag. No AAD.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8]) -> [UInt8] {
        do { return try Primitives.seal(key: key, nonce: iv, plaintext: plaintext) } catch {
            preconditionFailure("AES-GCM seal with a 32-byte key and 12-byte IV cannot fail: \(error)")
        }
    }

    /// AES-256-GCM open of ciphertext ‖ tag; nil when the tag does not verify.
    public static func open(_ sealed: [UInt8], key: [UInt8], iv: [UInt8]) -> [UInt8]? {
        try? Primitives.open(key: key, nonce: iv, sealed: sealed)
    }

    /// ECDSA P-256 / SHA-256 signature, raw r ‖ s (64 bytes). swift-crypto signs with a random k.
    public static func sign(_ message: [UInt8], with key: P256.Signing.PrivateKey) -> [UInt8] {
        Primitives.sign(message, with: key)
    }

    /// Verifies a raw r ‖ s signature over `message` (SHA-256 inside).
    public static func verify(_ signature: [UInt8], over message: [UInt8], publicKey: [UInt8]) -> Bool {
        Primitives.verifyRaw(signature: signature, message: message, publicKey: publicKey)
    }

    /// True when `bytes` is a 65-byte `04‖X‖Y` point on P-256.
    public static func isPoint(_ bytes: [UInt8]) -> Bool {
        (try? Primitives.agreementPublicKey(bytes)) != nil
    }

    /// Key slot = SHA-1(65-byte public key)[0:8].
    public static func keySlot(_ publicKey: [UInt8]) -> [UInt8] {
        Array(Primitives.sha1(publicKey).prefix(8))
    }

    /// The X coordinate of a 65-byte uncompressed key.
    public static func x(_ publicKey: [UInt8]) -> [UInt8] { Array(publicKey[1..<33]) }
}

extension P256.KeyAgreement.PrivateKey {
    /// `04‖X‖Y`.
    var publicBytes: [UInt8] { Primitives.point(of: self) }
}

extension P256.Signing.PrivateKey {
    /// `04‖X‖Y`.
    public var publicBytes: [UInt8] { Primitives.point(of: self) }
}
