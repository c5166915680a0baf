import ByteCore
import Crypto
import Foundation

/// The document issuer's X.509 certificate (RFC 5280) as an access document's issuerAuth carries
/// it in its COSE header (x5chain, label 33; RFC 9360): the issuer's P-256 key, signed by an
/// issuer CA with ECDSA-SHA256. Only what the lock decides on is read; the rest is skipped.
///
/// ```asn1
/// Certificate ::= SEQUENCE { tbsCertificate TBSCertificate, signatureAlgorithm AlgorithmIdentifier,
///                            signatureValue BIT STRING }            -- DER ECDSA-Sig-Value
/// TBSCertificate ::= SEQUENCE { version [0] EXPLICIT INTEGER OPTIONAL, serialNumber INTEGER,
///     signature AlgorithmIdentifier, issuer Name, validity SEQUENCE { notBefore Time, notAfter Time },
///     subject Name, subjectPublicKeyInfo SEQUENCE { algorithm AlgorithmIdentifier, subjectPublicKey BIT STRING },
///     [1] [2] [3] … OPTIONAL }                                     -- extensions not interpreted
/// Time ::= CHOICE { utcTime UTCTime, generalTime GeneralizedTime }  -- YYMMDDHHMMSSZ / YYYYMMDDHHMMSSZ
/// ```
/// The certificate is at most `maxLength` bytes; a key that is not a 65-byte P-256 point (the
/// empty BIT STRING of NFC_RDR_NEG_STEPUP_AD_ISSUER_CERT_EMPTY_PUBLIC_KEY) is refused at parse.
public struct IssuerCertificate: Equatable, Sendable {
    public static let maxLength = 4096
    /// 1.2.840.10045.4.3.2 ecdsa-with-SHA256 (OID contents).
    public static let ecdsaWithSHA256: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x02]
    /// 1.2.840.10045.2.1 id-ecPublicKey, 1.2.840.10045.3.1.7 prime256v1.
    public static let idECPublicKey: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
    public static let prime256v1: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
    /// 2.5.4.3 commonName.
    static let commonName: [UInt8] = [0x55, 0x04, 0x03]

    /// The certificate's DER as received.
    public var der: [UInt8]
    /// The exact tbsCertificate TLV the signature covers.
    public var tbs: [UInt8]
    public var serialNumber: [UInt8]
    public var issuerName: String
    public var subjectName: String
    public var notBefore: Date
    public var notAfter: Date
    /// The subject's key, `04‖X‖Y`, checked to be on P-256.
    public var publicKey: [UInt8]
    /// DER ECDSA-Sig-Value.
    public var signature: [UInt8]

    public init(parsing der: [UInt8]) throws(X509Error) {
        guard der.count <= Self.maxLength else { throw X509Error(.malformed, "an issuer certificate of \(der.count) bytes; LockBench reads at most \(Self.maxLength)") }
        let top = try Self.single(der[...], tag: Tag.sequence, "Certificate")
        let parts = try Self.children(top)
        guard parts.count == 3 else { throw X509Error(.unexpectedStructure, "byte \(top.offset): Certificate has \(parts.count) fields, not 3 (tbsCertificate, signatureAlgorithm, signatureValue)") }
        let tbs = try Self.expect(parts[0], tag: Tag.sequence, "tbsCertificate")
        try Self.checkAlgorithm(parts[1], "signatureAlgorithm")
        signature = try Self.bitString(try Self.expect(parts[2], tag: Tag.bitString, "signatureValue"), "signatureValue")

        var fields = try Self.children(tbs)[...]
        if fields.first?.tag == 0xA0 { fields = fields.dropFirst() }  // version [0]
        guard fields.count >= 6 else { throw X509Error(.unexpectedStructure, "byte \(tbs.offset): tbsCertificate has \(fields.count) fields after the version, at least 6 expected") }
        let f = Array(fields)
        serialNumber = Array(try Self.expect(f[0], tag: Tag.integer, "serialNumber").content)
        try Self.checkAlgorithm(f[1], "tbsCertificate signature")
        guard Array(f[1].encoded) == Array(parts[1].encoded) else {
            throw X509Error(.unexpectedStructure, "byte \(f[1].offset): the tbsCertificate signature algorithm differs from signatureAlgorithm (RFC 5280 §4.1.1.2)")
        }
        issuerName = try Self.name(f[2], "issuer")
        let validity = try Self.children(try Self.expect(f[3], tag: Tag.sequence, "validity"))
        guard validity.count == 2 else { throw X509Error(.unexpectedStructure, "byte \(f[3].offset): validity has \(validity.count) times, not 2") }
        notBefore = try Self.time(validity[0], "notBefore")
        notAfter = try Self.time(validity[1], "notAfter")
        subjectName = try Self.name(f[4], "subject")
        publicKey = try Self.subjectPublicKey(f[5])
        self.tbs = Array(tbs.encoded)
        self.der = der
    }

    /// Whether `caPublicKey` (`04‖X‖Y`) signed this certificate (ECDSA-SHA256 over the tbsCertificate).
    public func isSigned(by caPublicKey: [UInt8]) -> Bool {
        Primitives.verifyDER(signature: signature, message: tbs, publicKey: caPublicKey)
    }

    /// Whether `date` lies within notBefore…notAfter, widened by `leeway` on each side.
    public func isValid(at date: Date, leeway: TimeInterval = 0) -> Bool {
        date >= notBefore.addingTimeInterval(-leeway) && date <= notAfter.addingTimeInterval(leeway)
    }

    // MARK: Reading the fields

    /// The DER tags a certificate uses.
    enum Tag {
        static let integer: UInt8 = 0x02, bitString: UInt8 = 0x03, oid: UInt8 = 0x06, utf8String: UInt8 = 0x0C
        static let utcTime: UInt8 = 0x17, generalizedTime: UInt8 = 0x18, sequence: UInt8 = 0x30, set: UInt8 = 0x31
    }

    /// The shared DER reader (`DER`), its refusals as `X509Error`s naming the byte.
    static func elements(_ bytes: ArraySlice<UInt8>) throws(X509Error) -> [DER.Element] {
        do { return try DER.elements(bytes) } catch { throw X509Error(.malformed, "byte \(error.offset): \(error.reason)") }
    }

    static func children(_ e: DER.Element) throws(X509Error) -> [DER.Element] { try elements(e.content) }

    static func single(_ bytes: ArraySlice<UInt8>, tag: UInt8, _ what: String) throws(X509Error) -> DER.Element {
        let all = try elements(bytes)
        guard all.count == 1 else { throw X509Error(.malformed, "\(what): \(all.count) DER elements where one is expected") }
        return try expect(all[0], tag: tag, what)
    }

    static func expect(_ e: DER.Element, tag: UInt8, _ what: String) throws(X509Error) -> DER.Element {
        guard e.tag == tag else {
            throw X509Error(.unexpectedStructure, "byte \(e.offset): \(what) has tag \(Hex.encode([e.tag])), expected \(Hex.encode([tag]))")
        }
        return e
    }

    static func checkAlgorithm(_ e: DER.Element, _ what: String) throws(X509Error) {
        let parts = try Self.children(try Self.expect(e, tag: Tag.sequence, what))
        // ecdsa-with-SHA256 has absent parameters (RFC 5758 §3.2).
        guard parts.count == 1, parts[0].tag == Tag.oid, Array(parts[0].content) == ecdsaWithSHA256 else {
            throw X509Error(.unsupportedAlgorithm, "byte \(e.offset): \(what) is not ecdsa-with-SHA256 (1.2.840.10045.4.3.2, no parameters)")
        }
    }

    /// The bits of a BIT STRING with no unused bits.
    static func bitString(_ e: DER.Element, _ what: String) throws(X509Error) -> [UInt8] {
        guard let unused = e.content.first else { throw X509Error(.malformed, "byte \(e.offset): \(what) is a BIT STRING without its unused-bits byte") }
        guard unused == 0 else { throw X509Error(.malformed, "byte \(e.offset): \(what) has \(unused) unused bits; a key or signature uses whole bytes") }
        return Array(e.content.dropFirst())
    }

    static func subjectPublicKey(_ e: DER.Element) throws(X509Error) -> [UInt8] {
        let spki = try Self.children(try Self.expect(e, tag: Tag.sequence, "subjectPublicKeyInfo"))
        guard spki.count == 2 else { throw X509Error(.unexpectedStructure, "byte \(e.offset): subjectPublicKeyInfo has \(spki.count) fields, not 2") }
        let algorithm = try Self.children(try Self.expect(spki[0], tag: Tag.sequence, "subjectPublicKeyInfo algorithm"))
        guard algorithm.count == 2, algorithm[0].tag == Tag.oid, Array(algorithm[0].content) == idECPublicKey,
              algorithm[1].tag == Tag.oid, Array(algorithm[1].content) == prime256v1 else {
            throw X509Error(.unsupportedAlgorithm, "byte \(spki[0].offset): the subject key is not id-ecPublicKey on the named curve prime256v1")
        }
        let bits = try Self.expect(spki[1], tag: Tag.bitString, "subjectPublicKey")
        let point = try bitString(bits, "subjectPublicKey")
        guard point.count == Primitives.publicKeyLength, point.first == 0x04 else {
            throw X509Error(.invalidPublicKey, "byte \(bits.offset): subjectPublicKey holds \(point.count) byte(s); a P-256 key is the 65-byte point 04‖X‖Y")
        }
        guard (try? Primitives.signingPublicKey(point)) != nil else {
            throw X509Error(.invalidPublicKey, "byte \(bits.offset): subjectPublicKey is not a point on P-256")
        }
        return point
    }

    /// The Name's commonName when it has one, else its DER in hex (only for the words of refusals).
    static func name(_ e: DER.Element, _ what: String) throws(X509Error) -> String {
        let rdns = try Self.children(try Self.expect(e, tag: Tag.sequence, what))
        for rdn in rdns {
            for attribute in try Self.children(try Self.expect(rdn, tag: Tag.set, "\(what) RelativeDistinguishedName")) {
                let pair = try Self.children(try Self.expect(attribute, tag: Tag.sequence, "\(what) attribute"))
                if pair.count == 2, pair[0].tag == Tag.oid, Array(pair[0].content) == commonName {
                    return String(decoding: pair[1].content, as: UTF8.self)
                }
            }
        }
        return Hex.encode(Array(e.content))
    }

    /// UTCTime `YYMMDDHHMMSSZ` (years 1950–2049) or GeneralizedTime `YYYYMMDDHHMMSSZ` (RFC 5280 §4.1.2.5).
    static func time(_ e: DER.Element, _ what: String) throws(X509Error) -> Date {
        let text = Array(e.content)
        let digits: Int
        switch e.tag {
        case Tag.utcTime: digits = 12
        case Tag.generalizedTime: digits = 14
        default: throw X509Error(.invalidTime, "byte \(e.offset): \(what) is neither UTCTime nor GeneralizedTime (tag \(Hex.encode([e.tag])))")
        }
        guard text.count == digits + 1, text.last == UInt8(ascii: "Z"), text.dropLast().allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw X509Error(.invalidTime, "byte \(e.offset): \(what) \"\(String(decoding: text, as: UTF8.self))\" is not \(digits) digits and Z")
        }
        func number(_ at: Int, _ count: Int) -> Int { text[at..<(at + count)].reduce(0) { $0 * 10 + Int($1 - 0x30) } }
        var year: Int, at: Int
        if digits == 12 { year = number(0, 2); year += year >= 50 ? 1900 : 2000; at = 2 } else { year = number(0, 4); at = 4 }
        let month = number(at, 2), day = number(at + 2, 2), hour = number(at + 4, 2), minute = number(at + 6, 2), second = number(at + 8, 2)
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60, second < 60 else {
            throw X509Error(.invalidTime, "byte \(e.offset): \(what) \"\(String(decoding: text, as: UTF8.self))\" is not a calendar time")
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    // MARK: Issuing

    /// A v3 certificate for `subjectPublicKey` signed by `caKey`, as an issuer CA mints it (and
    /// as the official cases' `Certificate.generate` does: serial, names, validity, key, signature).
    public static func issue(subjectPublicKey: [UInt8], caKey: P256.Signing.PrivateKey, serialNumber: [UInt8] = [0x01],
                             issuerName: String = "LockBench Issuer CA", subjectName: String = "LockBench Issuer",
                             notBefore: Date, notAfter: Date) throws(PrimitiveError) -> [UInt8] {
        _ = try Primitives.signingPublicKey(subjectPublicKey)
        let algorithm = DER.sequence([DER.encode(Tag.oid, ecdsaWithSHA256)])
        let spki = DER.sequence([DER.sequence([DER.encode(Tag.oid, idECPublicKey), DER.encode(Tag.oid, prime256v1)]),
                                 DER.encode(Tag.bitString, [0] + subjectPublicKey)])
        let tbs = DER.sequence([
            DER.encode(0xA0, DER.unsignedInteger([2])),  // v3
            DER.unsignedInteger(serialNumber), algorithm, name(issuerName),
            DER.sequence([encodeTime(notBefore), encodeTime(notAfter)]), name(subjectName), spki,
        ])
        let signature = (try? caKey.signature(for: tbs).derRepresentation).map(Array.init) ?? []
        return DER.sequence([tbs, algorithm, DER.encode(Tag.bitString, [0] + signature)])
    }

    static func name(_ commonNameValue: String) -> [UInt8] {
        DER.sequence([DER.encode(Tag.set, DER.sequence([DER.encode(Tag.oid, commonName),
                                                           DER.encode(Tag.utf8String, Array(commonNameValue.utf8))]))])
    }

    /// UTCTime through 2049, GeneralizedTime after (RFC 5280 §4.1.2.5); whole seconds, UTC.
    static func encodeTime(_ date: Date) -> [UInt8] {
        let total = Int(date.timeIntervalSince1970.rounded(.down))
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let secs = total - days * 86_400
        let (y, m, d) = civil(fromDays: days)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let clock = two(m) + two(d) + two(secs / 3600) + two(secs % 3600 / 60) + two(secs % 60) + "Z"
        if (1950...2049).contains(y) { return DER.encode(Tag.utcTime, Array((two(y % 100) + clock).utf8)) }
        return DER.encode(Tag.generalizedTime, Array((String(format: "%04d", y) + clock).utf8))
    }

    /// The inverse of `daysFromCivil` (H. Hinnant's civil_from_days).
    static func civil(fromDays z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}

extension IssuerCertificate {
    /// PEM `CERTIFICATE` text of DER bytes (RFC 7468 §5).
    public static func pem(der: [UInt8]) -> String {
        let body = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(body)\n-----END CERTIFICATE-----\n"
    }

    /// The DER of the one `CERTIFICATE` block in `pem`, or of `pem` itself when it is DER.
    public static func der(pemOrDER bytes: [UInt8]) throws(X509Error) -> [UInt8] {
        guard bytes.first != 0x30 else { return bytes }
        let lines = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard lines.filter({ $0 == "-----BEGIN CERTIFICATE-----" }).count == 1,
              let begin = lines.firstIndex(of: "-----BEGIN CERTIFICATE-----"),
              let end = lines.firstIndex(of: "-----END CERTIFICATE-----"), begin < end,
              let der = Data(base64Encoded: lines[(begin + 1)..<end].joined()) else {
            throw X509Error(.malformed, "not DER and not one PEM CERTIFICATE block")
        }
        return Array(der)
    }
}
