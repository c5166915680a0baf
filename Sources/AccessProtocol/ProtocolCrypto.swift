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

    /// HKDF-SHA256 (RFC 5869) written out over SHA-256: extract PRK = HMAC(salt, IKM), then
    /// T(i) = HMAC(PRK, T(i−1) ‖ info ‖ i), with HMAC(k, m) = SHA-256(k⊕opad ‖ SHA-256(k⊕ipad ‖ m)).
    /// Same output as `Primitives.hkdf` (a test checks them against each other on random inputs and
    /// RFC 5869; Primitives runs the Wycheproof vectors), several times faster on the key
    /// schedule's 160-byte outputs. `count` ≤ 8160.
    public static func hkdf(_ ikm: [UInt8], salt: [UInt8], info: [UInt8], count: Int) -> [UInt8] {
        precondition(count >= 0 && count <= 255 * 32, "HKDF-SHA256 output of \(count) bytes")
        let prk = hmacSHA256(key: salt, ikm)
        let (inner, outer) = hmacPads(prk)
        var out: [UInt8] = []
        out.reserveCapacity(count + 32)
        var previous: [UInt8] = []
        var i: UInt8 = 1
        while out.count < count {
            var h = SHA256()
            h.update(data: inner)
            h.update(data: previous)
            h.update(data: info)
            h.update(data: [i])
            var o = SHA256()
            o.update(data: outer)
            h.finalize().withUnsafeBytes { o.update(bufferPointer: $0) }
            previous = Array(o.finalize())
            out += previous
            i &+= 1
        }
        return Array(out.prefix(count))
    }

    /// The two 64-byte HMAC-SHA256 pads of `key` (hashed first when longer than 64 bytes).
    private static func hmacPads(_ key: [UInt8]) -> (inner: [UInt8], outer: [UInt8]) {
        var k = key.count > 64 ? Array(SHA256.hash(data: key)) : key
        k += [UInt8](repeating: 0, count: 64 - k.count)
        return (k.map { $0 ^ 0x36 }, k.map { $0 ^ 0x5C })
    }

    static func hmacSHA256(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        let (inner, outer) = hmacPads(key)
        var h = SHA256()
        h.update(data: inner)
        h.update(data: message)
        var o = SHA256()
        o.update(data: outer)
        h.finalize().withUnsafeBytes { o.update(bufferPointer: $0) }
        return Array(o.finalize())
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
