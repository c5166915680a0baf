import Foundation

/// The parts of a PEM EC private key that say which curve it is on: PKCS#8 (`PRIVATE KEY`,
/// RFC 5958) around SEC1, or SEC1 alone (`EC PRIVATE KEY`, RFC 5915). swift-crypto reads the
/// scalar of either without checking the curve, so a secp256k1 key (or one with explicit curve
/// parameters) would be taken as P-256 and give another public key than OpenSSL does. This reads
/// just enough DER to refuse them.
///
/// ```asn1
/// PrivateKeyInfo ::= SEQUENCE { version INTEGER, algorithm SEQUENCE { id-ecPublicKey OID,
///                               parameters ECParameters }, privateKey OCTET STRING (ECPrivateKey), … }
/// ECPrivateKey   ::= SEQUENCE { version INTEGER (1), privateKey OCTET STRING,
///                               parameters [0] ECParameters OPTIONAL, publicKey [1] BIT STRING OPTIONAL }
/// ECParameters   ::= CHOICE { namedCurve OID, specifiedCurve SEQUENCE, implicitCurve NULL }
/// ```
struct ECPrivateKeyDER {
    /// The curve the key names (`namedCurve`), nil when it names none.
    var curve: [UInt8]?
    /// The uncompressed public point the key carries, when it does.
    var publicKey: [UInt8]?
    /// The DER of the key block (PKCS#8 or SEC1) as found.
    var der: [UInt8] = []

    /// 1.2.840.10045.2.1 id-ecPublicKey, 1.2.840.10045.3.1.7 prime256v1 (OID contents only).
    static let idECPublicKey: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
    static let prime256v1: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
    static let secp256k1: [UInt8] = [0x2B, 0x81, 0x04, 0x00, 0x0A]

    struct Refusal: Error { var reason: String }

    typealias Element = DER.Element

    /// Reads the elements of `bytes` in sequence (the shared DER reader).
    static func elements(_ bytes: ArraySlice<UInt8>) throws(Refusal) -> [Element] {
        do { return try DER.elements(bytes) } catch { throw Refusal(reason: error.reason) }
    }

    /// The single SEQUENCE `bytes` must be, as its elements.
    static func sequence(_ bytes: ArraySlice<UInt8>, _ what: String) throws(Refusal) -> [Element] {
        let top = try elements(bytes)
        guard top.count == 1, top[0].tag == 0x30 else { throw Refusal(reason: "\(what) is not one DER SEQUENCE") }
        return try elements(top[0].content)
    }

    /// The curve an ECParameters element names; refuses explicit and implicit parameters.
    static func namedCurve(_ e: Element) throws(Refusal) -> [UInt8] {
        switch e.tag {
        case 0x06: return Array(e.content)
        case 0x30: throw Refusal(reason: "the key has explicit curve parameters; only the named curve P-256 (prime256v1) is accepted")
        default: throw Refusal(reason: "the key names no curve; only P-256 (prime256v1) is accepted")
        }
    }

    /// Parses SEC1 `ECPrivateKey`.
    init(sec1 der: ArraySlice<UInt8>) throws(Refusal) {
        let fields = try Self.sequence(der, "ECPrivateKey")
        guard fields.count >= 2, fields[0].tag == 0x02, fields[1].tag == 0x04 else {
            throw Refusal(reason: "not a SEC1 ECPrivateKey (version, privateKey)")
        }
        for f in fields.dropFirst(2) {
            switch f.tag {
            case 0xA0:
                let inner = try Self.elements(f.content)
                guard inner.count == 1 else { throw Refusal(reason: "bad ECPrivateKey parameters") }
                curve = try Self.namedCurve(inner[0])
            case 0xA1:
                let inner = try Self.elements(f.content)
                guard inner.count == 1, inner[0].tag == 0x03, inner[0].content.first == 0 else { throw Refusal(reason: "bad ECPrivateKey publicKey") }
                publicKey = Array(inner[0].content.dropFirst())
            default: continue
            }
        }
    }

    /// Parses PKCS#8 `PrivateKeyInfo` holding an EC key.
    init(pkcs8 der: ArraySlice<UInt8>) throws(Refusal) {
        let fields = try Self.sequence(der, "PrivateKeyInfo")
        guard fields.count >= 3, fields[0].tag == 0x02, fields[1].tag == 0x30, fields[2].tag == 0x04 else {
            throw Refusal(reason: "not a PKCS#8 PrivateKeyInfo")
        }
        let algorithm = try Self.elements(fields[1].content)
        guard algorithm.count == 2, algorithm[0].tag == 0x06, Array(algorithm[0].content) == Self.idECPublicKey else {
            throw Refusal(reason: "not an EC key (algorithm is not id-ecPublicKey)")
        }
        let outer = try Self.namedCurve(algorithm[1])
        try self.init(sec1: fields[2].content)
        if let inner = curve, inner != outer { throw Refusal(reason: "the key names two different curves") }
        curve = outer
    }

    /// Parses a PEM block (`PRIVATE KEY` or `EC PRIVATE KEY`); other blocks (e.g. `EC PARAMETERS`
    /// that `openssl ecparam -genkey` writes first) are skipped.
    init(pem: String) throws(Refusal) {
        var label: String?, base64 = "", found: (String, [UInt8])?
        for raw in pem.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("-----BEGIN ") { label = String(line.dropFirst(11).dropLast(5)); base64 = ""; continue }
            if line.hasPrefix("-----END ") {
                if let l = label, l == "PRIVATE KEY" || l == "EC PRIVATE KEY" {
                    // One key per file: with two, which one is meant is a guess (the first was taken).
                    guard found == nil else { throw Refusal(reason: "the file holds two private key blocks; a key file holds one") }
                    guard let der = Data(base64Encoded: base64) else { throw Refusal(reason: "bad base64 in the \(l) block") }
                    found = (l, Array(der))
                }
                label = nil
                continue
            }
            if label != nil { base64 += line }
        }
        guard let (kind, der) = found else { throw Refusal(reason: "no PRIVATE KEY or EC PRIVATE KEY block") }
        if kind == "PRIVATE KEY" { try self.init(pkcs8: der[...]) } else { try self.init(sec1: der[...]) }
        self.der = der
    }

    /// Refuses a key on any curve but P-256. A SEC1 key naming no curve is accepted only when the
    /// public key it carries is the P-256 point of its scalar (checked by the caller).
    func checkP256() throws(Refusal) {
        guard let curve else { return }
        guard curve == Self.prime256v1 else {
            let name = curve == Self.secp256k1 ? "secp256k1" : "OID " + curve.map { String(format: "%02x", $0) }.joined()
            throw Refusal(reason: "the key is on curve \(name); only P-256 (prime256v1) is accepted")
        }
    }
}
