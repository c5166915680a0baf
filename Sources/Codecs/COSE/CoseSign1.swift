/// COSE_Sign1 with ES256 (RFC 9052 §4.2, §4.4; RFC 9053 §2.1), signature raw `r‖s`.
///
/// ```cddl
/// COSE_Sign1 = [
///     protected : bstr .cbor header_map,   ; LockBench: {1: -7}  (alg ES256)
///     unprotected : header_map,            ; LockBench: {4: kid}  or {33: x5chain}
///     payload : bstr / nil,                ; attached (nil is refused)
///     signature : bstr                     ; r‖s, 64 bytes
/// ]
/// Sig_structure = ["Signature1", body_protected : bstr, external_aad : bstr, payload : bstr]
/// ```
/// The untagged form is written; tag 18 is accepted on decode. The protected header is kept as
/// the exact bytes received, so verification never depends on a re-encoding.
public struct CoseSign1: Equatable, Sendable {
    public enum Header {
        public static let alg: CBOR = 1
        public static let crit: CBOR = 2
        public static let kid: CBOR = 4
        public static let x5chain: CBOR = 33
        public static let es256: CBOR = -7
    }
    public static let tag: UInt64 = 18

    /// The protected header as its serialized bytes (the bstr contents).
    public var protectedBytes: [UInt8]
    public var unprotected: [CBOR: CBOR]
    public var payload: [UInt8]
    public var signature: [UInt8]

    public init(protectedBytes: [UInt8], unprotected: [CBOR: CBOR], payload: [UInt8], signature: [UInt8]) {
        self.protectedBytes = protectedBytes
        self.unprotected = unprotected
        self.payload = payload
        self.signature = signature
    }

    /// Signs `payload` with ES256; the kid and the issuer certificate (x5chain, one DER
    /// certificate as a bstr, as the official tool writes it) go into the unprotected header.
    public static func sign(payload: [UInt8], key: Crypto.P256.Signing.PrivateKey, kid: [UInt8]?,
                            x5chain: [UInt8]? = nil, externalAAD: [UInt8] = []) -> CoseSign1 {
        let protected = CBOR.map([Header.alg: Header.es256]).encoded()
        var unprotected = [CBOR: CBOR]()
        if let kid { unprotected[Header.kid] = .bytes(kid) }
        if let x5chain { unprotected[Header.x5chain] = .bytes(x5chain) }
        let tbs = toBeSigned(protected: protected, payload: payload, externalAAD: externalAAD)
        return CoseSign1(protectedBytes: protected, unprotected: unprotected, payload: payload,
                         signature: Primitives.sign(tbs, with: key))
    }

    /// `Sig_structure` bytes: `["Signature1", protected, external_aad, payload]`.
    public static func toBeSigned(protected: [UInt8], payload: [UInt8], externalAAD: [UInt8] = []) -> [UInt8] {
        CBOR.array(["Signature1", .bytes(protected), .bytes(externalAAD), .bytes(payload)]).encoded()
    }

    /// The decoded protected header.
    public func protectedHeader() throws(CoseError) -> [CBOR: CBOR] {
        if protectedBytes.isEmpty { return [:] }
        do { return try CBOR(parsing: protectedBytes).asMap("protected header") } catch {
            throw CoseError(error, "COSE_Sign1 protected header")
        }
    }

    /// The key id from the unprotected (or protected) header.
    public var kid: [UInt8]? {
        unprotected[Header.kid]?.bytesValue ?? (try? protectedHeader())?[Header.kid]?.bytesValue
    }

    /// The most certificates an x5chain may list (RFC 9360 §2: leaf first); more is refused.
    public static let maxChainLength = 4

    /// The DER certificates of the x5chain header (label 33; RFC 9360 §2), unprotected or
    /// protected: one bstr, or an array of bstr with the leaf first. Empty when absent.
    public func x5chain() throws(CoseError) -> [[UInt8]] {
        let protected = try protectedHeader()
        guard let value = unprotected[Header.x5chain] ?? protected[Header.x5chain] else { return [] }
        if let one = value.bytesValue { return [one] }
        guard let list = value.arrayValue else {
            throw CoseError(.malformed, "x5chain (label 33) is \(value.kindName), not a bstr or an array of bstr (RFC 9360 §2)")
        }
        guard (1...Self.maxChainLength).contains(list.count) else {
            throw CoseError(.malformed, "x5chain (label 33) lists \(list.count) certificates; LockBench reads 1…\(Self.maxChainLength)")
        }
        var out = [[UInt8]]()
        for (i, c) in list.enumerated() {
            guard let der = c.bytesValue else { throw CoseError(.malformed, "x5chain (label 33) entry \(i) is \(c.kindName), not a bstr") }
            out.append(der)
        }
        return out
    }

    /// Checks the algorithm is ES256 and the signature verifies under `publicKey` (`04‖X‖Y`).
    public func verify(publicKey: [UInt8], externalAAD: [UInt8] = []) throws(CoseError) {
        let header = try protectedHeader()
        guard let alg = header[Header.alg] else { throw CoseError(.missingAlgorithm, "protected header has no alg (1)") }
        guard alg == Header.es256 else { throw CoseError(.unsupportedAlgorithm, "alg \(alg.diagnostic); only ES256 (-7)") }
        if let crit = header[Header.crit] {
            throw CoseError(.unknownCriticalHeader, "critical headers \(crit.diagnostic) are not understood")
        }
        let tbs = Self.toBeSigned(protected: protectedBytes, payload: payload, externalAAD: externalAAD)
        guard Primitives.verifyRaw(signature: signature, message: tbs, publicKey: publicKey) else {
            throw CoseError(.badSignature, "ES256 signature does not verify under the issuer key")
        }
    }

    public var cbor: CBOR {
        .array([.bytes(protectedBytes), .map(unprotected), .bytes(payload), .bytes(signature)])
    }

    public func encoded() -> [UInt8] { cbor.encoded() }

    public init(cbor input: CBOR) throws(CoseError) {
        var c = input
        if case .tagged(Self.tag, let inner) = c { c = inner }
        do {
            let a = try c.asArray("COSE_Sign1")
            guard a.count == 4 else { throw CBORError(.invalidValue, "COSE_Sign1 has \(a.count) elements, not 4") }
            protectedBytes = try a[0].asBytes("COSE_Sign1 protected")
            unprotected = try a[1].asMap("COSE_Sign1 unprotected")
            if a[2] == .null { throw CoseError(.detachedPayload, "COSE_Sign1 payload is detached (nil)") }
            payload = try a[2].asBytes("COSE_Sign1 payload")
            signature = try a[3].asBytes("COSE_Sign1 signature")
        } catch let e as CoseError {
            throw e
        } catch let e as CBORError {
            throw CoseError(e, "COSE_Sign1")
        } catch {
            throw CoseError(.malformed, "\(error)")
        }
    }

    public init(parsing bytes: [UInt8]) throws(CoseError) {
        let c: CBOR
        do { c = try CBOR(parsing: bytes) } catch { throw CoseError(error, "COSE_Sign1") }
        self = try CoseSign1(cbor: c)
    }

    /// kid = SHA-256("key-identifier" ‖ 65-byte issuer public key)[0:8] (ALIRO-FACTS "Step-up").
    public static func keyIdentifier(issuerPublicKey: [UInt8]) -> [UInt8] {
        Array(Primitives.sha256(Array("key-identifier".utf8) + issuerPublicKey).prefix(8))
    }
}

import Crypto
