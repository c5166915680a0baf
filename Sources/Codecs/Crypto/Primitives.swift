import ByteCore
import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import _CryptoExtras

/// Why a cryptographic primitive refused its input. Tests match on `code`.
public struct PrimitiveError: CodedError, Equatable, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable, CaseIterable {
        /// A public key that is not a 65-byte uncompressed P-256 point on the curve, or bad SPKI.
        case invalidPublicKey = "crypto.invalid_public_key"
        /// A private key of the wrong length or out of range.
        case invalidPrivateKey = "crypto.invalid_private_key"
        /// A key, nonce, tag or output length the project does not use.
        case unsupportedParameter = "crypto.unsupported_parameter"
        /// AES-GCM tag did not verify.
        case authenticationFailure = "crypto.authentication_failure"
        /// ECDH produced no shared secret (e.g. point at infinity).
        case keyAgreementFailure = "crypto.key_agreement_failure"
    }
    public var code: Code
    public var reason: String
    public init(_ code: Code, _ reason: String) { self.code = code; self.reason = reason }
}

/// Every cryptographic primitive LockBench uses, in one place, each with exactly the parameters
/// the protocol uses. The protocol layer (key schedule, secure channel, signatures), the
/// documents (COSE) and the CLI (PEM keys) all call these, and the Wycheproof tests run the
/// vectors through these same functions.
///
/// - P-256 public keys are 65-byte uncompressed points `04‖X‖Y` (validated on the curve).
/// - ECDSA P-256 / SHA-256; signatures raw `r‖s` (64 bytes) on the wire, DER accepted for verify.
/// - ECDH P-256: the shared secret is the 32-byte X coordinate.
/// - ANSI X9.63 KDF with SHA-256; HKDF-SHA256 (RFC 5869, output ≤ 255·32 bytes).
/// - AES-256-GCM with a 12-byte nonce and a 16-byte tag appended to the ciphertext.
public enum Primitives {
    public static let publicKeyLength = 65
    public static let signatureLength = 64
    public static let gcmKeyLength = 32
    public static let gcmNonceLength = 12
    public static let gcmTagLength = 16

    // MARK: Keys

    /// A signing (verification) public key from `04‖X‖Y`.
    public static func signingPublicKey(_ point: [UInt8]) throws(PrimitiveError) -> P256.Signing.PublicKey {
        try checkPoint(point)
        do { return try P256.Signing.PublicKey(x963Representation: point) } catch {
            throw PrimitiveError(.invalidPublicKey, "not a point on P-256")
        }
    }

    /// A key-agreement public key from `04‖X‖Y`.
    public static func agreementPublicKey(_ point: [UInt8]) throws(PrimitiveError) -> P256.KeyAgreement.PublicKey {
        try checkPoint(point)
        do { return try P256.KeyAgreement.PublicKey(x963Representation: point) } catch {
            throw PrimitiveError(.invalidPublicKey, "not a point on P-256")
        }
    }

    private static func checkPoint(_ point: [UInt8]) throws(PrimitiveError) {
        guard point.count == publicKeyLength, point.first == 0x04 else {
            throw PrimitiveError(.invalidPublicKey, "expected a 65-byte uncompressed point 04‖X‖Y, got \(point.count) byte(s)")
        }
    }

    /// The 65-byte point inside a DER SubjectPublicKeyInfo of a P-256 key.
    /// Only the named-curve form is accepted (`id-ecPublicKey` with `prime256v1`, uncompressed
    /// point); DER being unique, that is exactly `spkiPrefix ‖ 04‖X‖Y`. Explicit curve
    /// parameters (which some parsers accept without checking them) are refused.
    public static func publicKey(spkiDER der: [UInt8]) throws(PrimitiveError) -> [UInt8] {
        guard der.count == spkiPrefix.count + publicKeyLength, der.starts(with: spkiPrefix) else {
            throw PrimitiveError(.invalidPublicKey, "not a DER SubjectPublicKeyInfo of a named-curve P-256 key")
        }
        let point = Array(der[spkiPrefix.count...])
        _ = try signingPublicKey(point)
        return point
    }

    /// `SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING (66 bytes, 0 unused) }` header.
    public static let spkiPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
        0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// The 65-byte point inside a PEM `PUBLIC KEY` (SPKI) block.
    public static func publicKey(spkiPEM pem: String) throws(PrimitiveError) -> [UInt8] {
        let body = pem.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let begin = body.firstIndex(of: "-----BEGIN PUBLIC KEY-----"),
              let end = body.firstIndex(of: "-----END PUBLIC KEY-----"), begin < end,
              let der = Data(base64Encoded: body[(begin + 1)..<end].joined()) else {
            throw PrimitiveError(.invalidPublicKey, "not a PEM PUBLIC KEY (SPKI) block")
        }
        // One key per file: with two, which one is meant is a guess (the first was taken).
        guard body.filter({ $0.hasPrefix("-----BEGIN ") }).count == 1 else {
            throw PrimitiveError(.invalidPublicKey, "the file holds \(body.filter { $0.hasPrefix("-----BEGIN ") }.count) PEM blocks; a key file holds one PUBLIC KEY block")
        }
        return try publicKey(spkiDER: Array(der))
    }

    /// PEM `PUBLIC KEY` (SPKI) for a 65-byte point.
    public static func spkiPEM(publicKey point: [UInt8]) throws(PrimitiveError) -> String {
        try signingPublicKey(point).pemRepresentation
    }

    /// A signing private key from PEM PKCS#8 (`PRIVATE KEY`) or SEC1 (`EC PRIVATE KEY`).
    /// Other PEM blocks in the text (`EC PARAMETERS`, as `openssl ecparam -genkey` writes) are
    /// skipped. The key's curve is checked first: anything but the named curve P-256 (secp256k1, explicit
    /// parameters, …) is refused, and a public key carried in the file must be the scalar's.
    public static func signingPrivateKey(pem: String) throws(PrimitiveError) -> P256.Signing.PrivateKey {
        let info: ECPrivateKeyDER
        do throws(ECPrivateKeyDER.Refusal) { info = try ECPrivateKeyDER(pem: pem); try info.checkP256() } catch {
            throw PrimitiveError(.invalidPrivateKey, "not a P-256 private key: \(error.reason)")
        }
        let key: P256.Signing.PrivateKey
        do { key = try P256.Signing.PrivateKey(derRepresentation: info.der) } catch {
            throw PrimitiveError(.invalidPrivateKey, "not a PEM PKCS#8 or SEC1 P-256 private key")
        }
        if let carried = info.publicKey, carried != point(of: key) {
            throw PrimitiveError(.invalidPrivateKey, "not a P-256 private key: the public key in the file is not the P-256 point of its private scalar (another curve?)")
        }
        if info.curve == nil, info.publicKey == nil {
            throw PrimitiveError(.invalidPrivateKey, "not a P-256 private key: the key names no curve and carries no public key to check")
        }
        return key
    }

    /// A signing private key from its 32-byte scalar.
    public static func signingPrivateKey(raw: [UInt8]) throws(PrimitiveError) -> P256.Signing.PrivateKey {
        do { return try P256.Signing.PrivateKey(rawRepresentation: raw) } catch {
            throw PrimitiveError(.invalidPrivateKey, "not a 32-byte P-256 scalar in range")
        }
    }

    /// A key-agreement private key from its 32-byte scalar.
    public static func agreementPrivateKey(raw: [UInt8]) throws(PrimitiveError) -> P256.KeyAgreement.PrivateKey {
        do { return try P256.KeyAgreement.PrivateKey(rawRepresentation: raw) } catch {
            throw PrimitiveError(.invalidPrivateKey, "not a 32-byte P-256 scalar in range")
        }
    }

    /// `04‖X‖Y` of a signing key.
    public static func point(of key: P256.Signing.PrivateKey) -> [UInt8] { Array(key.publicKey.x963Representation) }
    /// `04‖X‖Y` of a key-agreement key.
    public static func point(of key: P256.KeyAgreement.PrivateKey) -> [UInt8] { Array(key.publicKey.x963Representation) }

    // MARK: ECDSA

    /// ECDSA P-256 / SHA-256 over `message`, raw `r‖s` (64 bytes).
    public static func sign(_ message: [UInt8], with key: P256.Signing.PrivateKey) -> [UInt8] {
        // The only failure swift-crypto reports here is an internal RNG/BoringSSL error.
        Array(try! key.signature(for: message).rawRepresentation)
    }

    /// Verifies a raw `r‖s` signature; false for any malformed key or signature.
    public static func verifyRaw(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == signatureLength,
              let key = try? signingPublicKey(publicKey),
              let sig = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(sig, for: message)
    }

    /// True when `bytes` is a 65-byte `04‖X‖Y` point on P-256.
    public static func isPoint(_ bytes: [UInt8]) -> Bool { (try? agreementPublicKey(bytes)) != nil }

    /// The X coordinate of a 65-byte uncompressed point (`04‖X‖Y`); the caller has checked the length.
    public static func xCoordinate(_ point: [UInt8]) -> [UInt8] { Array(point[1..<33]) }

    /// Verifies a DER `ECDSA-Sig-Value` signature (strict DER); false for anything malformed.
    public static func verifyDER(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard let key = try? signingPublicKey(publicKey),
              let sig = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
        return key.isValidSignature(sig, for: message)
    }

    // MARK: ECDH and KDFs

    /// ECDH on P-256: the 32-byte X coordinate of `private · peer`.
    public static func ecdh(privateKey: P256.KeyAgreement.PrivateKey, peerPublicKey: [UInt8]) throws(PrimitiveError) -> [UInt8] {
        let peer = try agreementPublicKey(peerPublicKey)
        do {
            let secret = try privateKey.sharedSecretFromKeyAgreement(with: peer)
            return secret.withUnsafeBytes { Array($0) }
        } catch {
            throw PrimitiveError(.keyAgreementFailure, "no shared secret: \(error)")
        }
    }

    /// ANSI X9.63 KDF with SHA-256: `SHA-256(Z ‖ counter32BE ‖ sharedInfo)` for counter 1, 2, …
    public static func x963KDF(sharedSecret z: [UInt8], sharedInfo: [UInt8], length: Int) -> [UInt8] {
        precondition(length >= 0 && length <= 255 * 32, "X9.63 KDF output length out of range")
        var out = [UInt8]()
        out.reserveCapacity(length + 32)
        var counter: UInt32 = 1
        while out.count < length {
            var h = SHA256()
            h.update(data: z)
            h.update(data: counter.bigEndianBytes)
            h.update(data: sharedInfo)
            out.append(contentsOf: h.finalize())
            counter += 1
        }
        return Array(out.prefix(length))
    }

    /// HKDF-SHA256 (RFC 5869): PRK = HMAC(salt, IKM), then T(i) = HMAC(PRK, T(i−1) ‖ info ‖ i),
    /// with HMAC(k, m) = SHA-256(k⊕opad ‖ SHA-256(k⊕ipad ‖ m)). Written out over SHA-256 with the
    /// hash states after each pad computed once per key, which makes it several times faster than
    /// swift-crypto's `HKDF` on the key schedule's 32- and 160-byte outputs (the tests check it
    /// against swift-crypto's `HKDF`, RFC 5869 and the Wycheproof vectors). A length of 0 gives no
    /// bytes (swift-crypto's `HKDF` traps on it); lengths above 255·32 are refused.
    public static func hkdf(ikm: [UInt8], salt: [UInt8], info: [UInt8], length: Int) throws(PrimitiveError) -> [UInt8] {
        guard length >= 0, length <= 255 * 32 else {
            throw PrimitiveError(.unsupportedParameter, "HKDF-SHA256 output of \(length) bytes is outside 0…8160")
        }
        guard length > 0 else { return [] }
        let prk = HMACKey(salt).authenticationCode(ikm)
        let mac = HMACKey(prk)
        var out = [UInt8]()
        out.reserveCapacity(length + 32)
        var counter: UInt8 = 1
        while out.count < length {
            var inner = mac.inner
            inner.update(data: out.suffix(32))         // T(i−1); empty for T(1)
            inner.update(data: info)
            withUnsafeBytes(of: counter) { inner.update(bufferPointer: $0) }
            var outer = mac.outer
            inner.finalize().withUnsafeBytes { outer.update(bufferPointer: $0) }
            outer.finalize().withUnsafeBytes { out.append(contentsOf: $0) }
            counter &+= 1
        }
        out.removeLast(out.count - length)
        return out
    }

    /// An HMAC-SHA256 key as the SHA-256 states after absorbing its inner and outer pads, so that
    /// each MAC under it hashes only the message and the inner digest.
    private struct HMACKey {
        var inner = SHA256(), outer = SHA256()

        init(_ key: [UInt8]) {
            var k = key.count > 64 ? Array(SHA256.hash(data: key)) : key
            k += [UInt8](repeating: 0, count: 64 - k.count)
            inner.update(data: k.map { $0 ^ 0x36 })
            outer.update(data: k.map { $0 ^ 0x5C })
        }

        func authenticationCode(_ message: [UInt8]) -> [UInt8] {
            var i = inner, o = outer
            i.update(data: message)
            i.finalize().withUnsafeBytes { o.update(bufferPointer: $0) }
            return Array(o.finalize())
        }
    }

    // MARK: AES-256-GCM

    /// AES-256-GCM seal: returns `ciphertext ‖ tag(16)`.
    public static func seal(key: [UInt8], nonce: [UInt8], plaintext: [UInt8], aad: [UInt8] = []) throws(PrimitiveError) -> [UInt8] {
        let (k, n) = try gcmParameters(key: key, nonce: nonce)
        do {
            let box = try AES.GCM.seal(plaintext, using: k, nonce: n, authenticating: aad)
            return Array(box.ciphertext) + Array(box.tag)
        } catch {
            throw PrimitiveError(.unsupportedParameter, "AES-GCM seal failed: \(error)")
        }
    }

    /// AES-256-GCM open of `ciphertext ‖ tag(16)`; throws `authenticationFailure` on a bad tag.
    public static func open(key: [UInt8], nonce: [UInt8], sealed: [UInt8], aad: [UInt8] = []) throws(PrimitiveError) -> [UInt8] {
        let (k, n) = try gcmParameters(key: key, nonce: nonce)
        guard sealed.count >= gcmTagLength else {
            throw PrimitiveError(.authenticationFailure, "sealed data shorter than the 16-byte tag")
        }
        do {
            let box = try AES.GCM.SealedBox(nonce: n, ciphertext: sealed.dropLast(gcmTagLength),
                                            tag: sealed.suffix(gcmTagLength))
            return Array(try AES.GCM.open(box, using: k, authenticating: aad))
        } catch {
            throw PrimitiveError(.authenticationFailure, "AES-GCM tag did not verify")
        }
    }

    private static func gcmParameters(key: [UInt8], nonce: [UInt8]) throws(PrimitiveError) -> (SymmetricKey, AES.GCM.Nonce) {
        guard key.count == gcmKeyLength else {
            throw PrimitiveError(.unsupportedParameter, "AES-GCM key of \(key.count) bytes; LockBench uses AES-256 (32)")
        }
        guard nonce.count == gcmNonceLength, let n = try? AES.GCM.Nonce(data: nonce) else {
            throw PrimitiveError(.unsupportedParameter, "AES-GCM nonce of \(nonce.count) bytes; LockBench uses 12")
        }
        return (SymmetricKey(data: key), n)
    }

    // MARK: AES-128, one block

    /// AES-128 of one 16-byte block (ECB, no padding): the BLE advertisement's rotating tag
    /// (ALIRO-FACTS BLE). FIPS-197 C.1 is its test vector.
    public static func aes128Block(key: [UInt8], block: [UInt8]) throws(PrimitiveError) -> [UInt8] {
        guard key.count == 16, block.count == 16 else {
            throw PrimitiveError(.unsupportedParameter, "AES-128 block: key of \(key.count) and block of \(block.count) bytes; both must be 16")
        }
        var out = block
        do { try AES.permute(&out, key: SymmetricKey(data: key)) } catch {
            throw PrimitiveError(.unsupportedParameter, "AES-128 block failed: \(error)")
        }
        return out
    }

    // MARK: Hashes

    public static func sha256(_ data: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: data)) }

    public static func sha1(_ data: [UInt8]) -> [UInt8] { Array(Insecure.SHA1.hash(data: data)) }

    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }

    /// Constant-time comparison of two byte strings of the same length.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var d: UInt8 = 0
        for i in 0..<a.count { d |= a[i] ^ b[i] }
        return d == 0
    }

    /// Random bytes from the system generator.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        #if canImport(Glibc) || canImport(Darwin)
        // One getrandom(2) for the lot (glibc's arc4random_buf): keys, ids and nonces are drawn
        // on hot paths, where eight bytes per system call added up.
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { if let base = $0.baseAddress, $0.count > 0 { arc4random_buf(base, $0.count) } }
        return out
        #else
        var g = SystemRandomNumberGenerator()
        var out = [UInt8]()
        out.reserveCapacity(count)
        while out.count < count {
            var word = g.next()
            for _ in 0..<min(8, count - out.count) {
                out.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return out
        #endif
    }
}

extension P256.KeyAgreement.PrivateKey {
    /// `04‖X‖Y`.
    public var publicBytes: [UInt8] { Primitives.point(of: self) }
}

extension P256.Signing.PrivateKey {
    /// `04‖X‖Y`.
    public var publicBytes: [UInt8] { Primitives.point(of: self) }
}
