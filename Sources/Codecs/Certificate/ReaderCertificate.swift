import ByteCore
import Crypto
import Foundation

/// An Aliro reader certificate: the X.509 certificate a reader issuer CA signs over a reader's
/// public key, and its *compressed* form, the one on the wire (LOAD CERT `80 D1` data, AUTH1 tag
/// `90`). The shapes follow the Aliro Certification Tool's library, `aliro-actuator`
/// `src/aliro_actuator/trust_framework/certificate.py` @ cd6585356b0cd769b243d96057361d31418505c5
/// (`encode_compressed`, `decode_compressed`, `encode`, `verify`):
///
/// ```asn1
/// Compressed ::= SEQUENCE { profile OCTET STRING (00 00),
///                           SEQUENCE { serial [0] OPTIONAL (default 01), issuer [1] OPTIONAL ("issuer"),
///                                      notBefore [2] OPTIONAL (200101000000Z), notAfter [3] OPTIONAL (490101000000Z),
///                                      subject [4] OPTIONAL ("subject"),
///                                      publicKey [5] (00 ‖ 04‖X‖Y), signature [6] (00 ‖ ECDSA-Sig-Value DER) } }
/// ```
///
/// Decompression rebuilds the X.509 certificate byte for byte: version 3, the serial, ecdsa-with-SHA256,
/// issuer and subject each one UTF8String common name, UTCTime validity, the P-256 key, and three
/// extensions — authority key id = SHA-1 of the issuer CA's 65-byte public key, basicConstraints
/// (critical, not a CA), keyUsage (critical, digitalSignature). The signature covers that TBS, so a
/// certificate verifies only under the CA whose key id the rebuilt certificate names.
public struct ReaderCertificate: Equatable, Sendable {
    /// Serial number: unsigned big-endian magnitude, at most 20 bytes.
    public var serialNumber: [UInt8]
    /// Issuer common name (UTF-8 bytes), at most 32.
    public var issuer: [UInt8]
    /// Validity as the certificate writes it: UTCTime `YYMMDDHHMMSSZ` ASCII (13 to 15 bytes).
    public var notBefore: [UInt8]
    public var notAfter: [UInt8]
    /// Subject common name (UTF-8 bytes), at most 32.
    public var subject: [UInt8]
    /// The reader's public key `04‖X‖Y` (65 bytes): the key that signs AUTH1.
    public var subjectPublicKey: [UInt8]
    /// The CA's signature, DER `ECDSA-Sig-Value` (at most 72 bytes).
    public var signature: [UInt8]

    // The compressed profile's defaults (certificate.py `default_*`): a field equal to its
    // default is left out of the compressed form.
    public static let defaultSerialNumber: [UInt8] = [0x01]
    public static let defaultIssuer = Array("issuer".utf8)
    public static let defaultNotBefore = Array("200101000000Z".utf8)
    public static let defaultNotAfter = Array("490101000000Z".utf8)
    public static let defaultSubject = Array("subject".utf8)
    public static let profile: [UInt8] = [0x00, 0x00]

    // Bounds (certificate.py `*_max_len`), and ours on the whole: a certificate is parsed before
    // anything about it is trusted.
    public static let maxSerialNumber = 20
    public static let maxName = 32
    public static let validityLengths = 13...15
    public static let maxSignature = 72
    /// The largest compressed certificate LockBench accepts (LOAD CERT chains stop there too).
    public static let maxCompressed = 512
    public static let maxX509 = 1024

    public init(serialNumber: [UInt8] = defaultSerialNumber, issuer: [UInt8] = defaultIssuer,
                notBefore: [UInt8] = defaultNotBefore, notAfter: [UInt8] = defaultNotAfter,
                subject: [UInt8] = defaultSubject, subjectPublicKey: [UInt8], signature: [UInt8]) {
        self.serialNumber = serialNumber; self.issuer = issuer
        self.notBefore = notBefore; self.notAfter = notAfter; self.subject = subject
        self.subjectPublicKey = subjectPublicKey; self.signature = signature
    }

    // MARK: - Compressed form

    /// Parses the compressed form (LOAD CERT data, AUTH1 `90`). Fields must come in tag order, each
    /// at most once, within its bounds; anything after the signature is refused.
    public init(parsingCompressed bytes: [UInt8]) throws(ReaderCertificateError) {
        guard bytes.count <= Self.maxCompressed else {
            throw ReaderCertificateError(.tooLong, "compressed certificate of \(bytes.count) bytes; at most \(Self.maxCompressed)")
        }
        let outer = try Self.der { () throws(DER.Refusal) in try DER.single(bytes[...], tag: 0x30, "compressed certificate") }
        let top = try Self.der { () throws(DER.Refusal) in try DER.elements(outer.content) }
        guard top.count == 2, top[0].tag == 0x04, top[1].tag == 0x30 else {
            throw ReaderCertificateError(.format, "compressed certificate: expected SEQUENCE { OCTET STRING profile, SEQUENCE fields }")
        }
        guard Array(top[0].content) == Self.profile else {
            throw ReaderCertificateError(.profile, "profile \(Array(top[0].content).hex); only 0000 is defined")
        }
        let fields = try Self.der { () throws(DER.Refusal) in try DER.elements(top[1].content) }
        var serialNumber = Self.defaultSerialNumber, issuer = Self.defaultIssuer, notBefore = Self.defaultNotBefore
        var notAfter = Self.defaultNotAfter, subject = Self.defaultSubject
        var publicKey: [UInt8]?, signature: [UInt8]?
        var last = -1
        for f in fields {
            guard f.tag & 0xE0 == 0x80, Int(f.tag & 0x1F) <= 6 else {
                throw ReaderCertificateError(.format, String(format: "tag %02X: the compressed fields are [0] to [6] (80 to 86), primitive", f.tag))
            }
            let n = Int(f.tag & 0x1F), value = Array(f.content)
            guard n > last else { throw ReaderCertificateError(.format, String(format: "tag %02X out of order or repeated", f.tag)) }
            last = n
            switch n {
            case 0:
                // The X.509 INTEGER carries the magnitude: a leading 00 would not come back.
                guard value.first != 0x00 else { throw ReaderCertificateError(.format, "[0] serial number starts with 00 (not minimal)") }
                serialNumber = value
            case 1: issuer = value
            case 2: notBefore = value
            case 3: notAfter = value
            case 4: subject = value
            case 5:
                guard value.count == 66, value[0] == 0x00, value[1] == 0x04 else {
                    throw ReaderCertificateError(.publicKey, "[5] public key must be 00 ‖ 04‖X‖Y (66 bytes), got \(value.count) bytes")
                }
                publicKey = Array(value.dropFirst())
            default:
                guard value.count >= 2, value[0] == 0x00 else {
                    throw ReaderCertificateError(.signature, "[6] signature must be 00 ‖ ECDSA-Sig-Value")
                }
                signature = Array(value.dropFirst())
            }
        }
        guard let publicKey else { throw ReaderCertificateError(.publicKey, "no [5] public key") }
        guard let signature else { throw ReaderCertificateError(.signature, "no [6] signature") }
        self.init(serialNumber: serialNumber, issuer: issuer, notBefore: notBefore, notAfter: notAfter, subject: subject,
                  subjectPublicKey: publicKey, signature: signature)
        try checkBounds()
    }

    /// The compressed form: fields equal to their defaults left out.
    public func compressed() -> [UInt8] {
        var fields: [[UInt8]] = []
        if serialNumber != Self.defaultSerialNumber { fields.append(DER.encode(0x80, serialNumber)) }
        if issuer != Self.defaultIssuer { fields.append(DER.encode(0x81, issuer)) }
        if notBefore != Self.defaultNotBefore { fields.append(DER.encode(0x82, notBefore)) }
        if notAfter != Self.defaultNotAfter { fields.append(DER.encode(0x83, notAfter)) }
        if subject != Self.defaultSubject { fields.append(DER.encode(0x84, subject)) }
        fields.append(DER.encode(0x85, [0x00] + subjectPublicKey))
        fields.append(DER.encode(0x86, [0x00] + signature))
        return DER.sequence([DER.encode(0x04, Self.profile), DER.sequence(fields)])
    }

    // MARK: - X.509

    /// Parses an X.509 certificate (DER) that the compressed profile can carry: exactly the shape
    /// `x509(authorityKeyID:)` rebuilds (checked by rebuilding it), else refused — a certificate
    /// that does not survive compression would not verify at the phone.
    public init(parsingX509 der: [UInt8]) throws(ReaderCertificateError) {
        guard der.count <= Self.maxX509 else {
            throw ReaderCertificateError(.tooLong, "X.509 certificate of \(der.count) bytes; at most \(Self.maxX509)")
        }
        let cert = try Self.der { () throws(DER.Refusal) in try DER.elements(try DER.single(der[...], tag: 0x30, "certificate").content) }
        guard cert.count == 3, cert[0].tag == 0x30, cert[1].tag == 0x30, cert[2].tag == 0x03 else {
            throw ReaderCertificateError(.format, "certificate: expected SEQUENCE { tbsCertificate, signatureAlgorithm, BIT STRING }")
        }
        let tbs = try Self.der { () throws(DER.Refusal) in try DER.elements(cert[0].content) }
        guard tbs.count == 8, tbs[0].tag == 0xA0, tbs[1].tag == 0x02, tbs[3].tag == 0x30, tbs[4].tag == 0x30,
              tbs[5].tag == 0x30, tbs[6].tag == 0x30, tbs[7].tag == 0xA3 else {
            throw ReaderCertificateError(.format, "tbsCertificate: expected version, serial, algorithm, issuer, validity, subject, key, extensions")
        }
        let validity = try Self.der { () throws(DER.Refusal) in try DER.elements(tbs[4].content) }
        guard validity.count == 2, validity.allSatisfy({ $0.tag == 0x17 }) else {
            throw ReaderCertificateError(.validity, "validity: expected two UTCTime")
        }
        let spki = DER.encode(0x30, Array(tbs[6].content))
        let key: [UInt8]
        do { key = try Primitives.publicKey(spkiDER: spki) } catch {
            throw ReaderCertificateError(.publicKey, "subjectPublicKeyInfo: \(error.reason)")
        }
        let bits = Array(cert[2].content)
        guard bits.count >= 2, bits[0] == 0x00 else { throw ReaderCertificateError(.signature, "signature BIT STRING: expected 00 ‖ ECDSA-Sig-Value") }
        let keyID = try Self.authorityKeyID(tbs[7].content)
        self.init(serialNumber: Array(tbs[1].content.drop { $0 == 0 }), issuer: try Self.commonName(tbs[3].content, "issuer"),
                  notBefore: Array(validity[0].content), notAfter: Array(validity[1].content),
                  subject: try Self.commonName(tbs[5].content, "subject"), subjectPublicKey: key, signature: Array(bits.dropFirst()))
        try checkBounds()
        guard x509(authorityKeyID: keyID) == der else {
            throw ReaderCertificateError(.notCompressible, "the certificate has fields or encodings the compressed profile cannot carry (it would not rebuild byte for byte)")
        }
    }

    /// The X.509 certificate this compressed certificate stands for, issued by the CA with
    /// `issuerPublicKey` (its key id = SHA-1 of the 65-byte key).
    public func x509(issuerPublicKey: [UInt8]) -> [UInt8] { x509(authorityKeyID: Primitives.sha1(issuerPublicKey)) }

    public func x509(authorityKeyID: [UInt8]) -> [UInt8] {
        DER.sequence([tbsCertificate(authorityKeyID: authorityKeyID), Self.ecdsaWithSHA256, DER.encode(0x03, [0x00] + signature)])
    }

    /// The signed part (certificate.py `encode`).
    public func tbsCertificate(authorityKeyID: [UInt8]) -> [UInt8] {
        let authorityKeyIdentifier = DER.sequence([DER.encode(0x80, authorityKeyID)])
        let extensions = DER.sequence([
            DER.sequence([DER.encode(0x06, Self.oidAuthorityKeyIdentifier), DER.encode(0x04, authorityKeyIdentifier)]),
            DER.sequence([DER.encode(0x06, Self.oidBasicConstraints), [0x01, 0x01, 0xFF], DER.encode(0x04, [0x30, 0x00])]),
            DER.sequence([DER.encode(0x06, Self.oidKeyUsage), [0x01, 0x01, 0xFF], DER.encode(0x04, [0x03, 0x02, 0x07, 0x80])]),
        ])
        return DER.sequence([
            DER.encode(0xA0, DER.unsignedInteger([2])),
            DER.unsignedInteger(serialNumber),
            Self.ecdsaWithSHA256,
            Self.name(issuer),
            DER.sequence([DER.encode(0x17, notBefore), DER.encode(0x17, notAfter)]),
            Self.name(subject),
            Primitives.spkiPrefix + subjectPublicKey,
            DER.encode(0xA3, extensions),
        ])
    }

    // MARK: - Trust

    /// Whether the CA with `issuerPublicKey` signed this certificate (certificate.py `verify`:
    /// rebuild the X.509 with that CA's key id, check the signature over its TBS).
    public func isSigned(by issuerPublicKey: [UInt8]) -> Bool {
        Primitives.verifyDER(signature: signature, message: tbsCertificate(authorityKeyID: Primitives.sha1(issuerPublicKey)),
                             publicKey: issuerPublicKey)
    }

    /// notBefore and notAfter as dates; nil when either is not a UTCTime / GeneralizedTime in Z.
    public var validity: ClosedRange<Date>? {
        guard let from = Self.date(notBefore), let to = Self.date(notAfter), from <= to else { return nil }
        return from...to
    }

    /// Checks the certificate against the CA trusted for the reader's group, at `time`. The
    /// official phone checks the signature only (`# TODO: Validate certificate validity dates`);
    /// LockBench's phone also refuses a certificate outside its validity.
    public func verify(issuerPublicKey: [UInt8], at time: Date) throws(ReaderCertificateError) {
        guard Primitives.isPoint(subjectPublicKey) else {
            throw ReaderCertificateError(.publicKey, "[5] subject public key is not a point on P-256")
        }
        guard isSigned(by: issuerPublicKey) else {
            throw ReaderCertificateError(.untrusted, "the signature does not verify under the reader issuer CA \(Array(issuerPublicKey.prefix(9)).hex)…")
        }
        guard let validity else {
            throw ReaderCertificateError(.validity, "validity \(String(decoding: notBefore, as: UTF8.self))–\(String(decoding: notAfter, as: UTF8.self)) is not two times in Z, in order")
        }
        guard validity.contains(time) else {
            throw ReaderCertificateError(.expired, "valid \(String(decoding: notBefore, as: UTF8.self))–\(String(decoding: notAfter, as: UTF8.self)), not at \(time)")
        }
    }

    /// Issues a certificate for `subjectPublicKey` signed by the CA `issuerKey`.
    public static func issue(subjectPublicKey: [UInt8], issuerKey: P256.Signing.PrivateKey,
                             serialNumber: [UInt8] = defaultSerialNumber, issuer: String = "issuer", subject: String = "subject",
                             notBefore: Date, notAfter: Date) throws(ReaderCertificateError) -> ReaderCertificate {
        // The rebuilt X.509 writes UTCTime, whose two-digit years stand for 1950–2049.
        let range = date(Array("500101000000Z".utf8))!...date(Array("491231235959Z".utf8))!
        guard range.contains(notBefore), range.contains(notAfter), notBefore <= notAfter else {
            throw ReaderCertificateError(.validity, "validity \(notBefore)–\(notAfter): UTCTime carries 1950 to 2049, in order")
        }
        var c = ReaderCertificate(serialNumber: serialNumber, issuer: Array(issuer.utf8), notBefore: utcTime(notBefore),
                                  notAfter: utcTime(notAfter), subject: Array(subject.utf8),
                                  subjectPublicKey: subjectPublicKey, signature: [])
        try c.checkBounds()
        guard Primitives.isPoint(subjectPublicKey) else { throw ReaderCertificateError(.publicKey, "the subject key is not a point on P-256") }
        let tbs = c.tbsCertificate(authorityKeyID: Primitives.sha1(Primitives.point(of: issuerKey)))
        // The only failure swift-crypto reports here is an internal RNG error.
        c.signature = Array(try! issuerKey.signature(for: tbs).derRepresentation)
        return c
    }

    // MARK: - Pieces

    /// 1.2.840.10045.4.3.2 ecdsa-with-SHA256, as an AlgorithmIdentifier without parameters.
    static let ecdsaWithSHA256: [UInt8] = [0x30, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x02]
    static let oidCommonName: [UInt8] = [0x55, 0x04, 0x03]
    static let oidAuthorityKeyIdentifier: [UInt8] = [0x55, 0x1D, 0x23]
    static let oidBasicConstraints: [UInt8] = [0x55, 0x1D, 0x13]
    static let oidKeyUsage: [UInt8] = [0x55, 0x1D, 0x0F]

    /// `Name` with one RDN: commonName as UTF8String.
    static func name(_ cn: [UInt8]) -> [UInt8] {
        DER.sequence([DER.encode(0x31, DER.sequence([DER.encode(0x06, oidCommonName), DER.encode(0x0C, cn)]))])
    }

    static func commonName(_ content: ArraySlice<UInt8>, _ what: String) throws(ReaderCertificateError) -> [UInt8] {
        let cn = try der { () throws(DER.Refusal) -> [DER.Element] in
            let set = try DER.single(content, tag: 0x31, what)
            let attribute = try DER.single(set.content, tag: 0x30, what)
            return try DER.elements(attribute.content)
        }
        guard cn.count == 2, cn[0].tag == 0x06, Array(cn[0].content) == oidCommonName, cn[1].tag == 0x0C else {
            throw ReaderCertificateError(.notCompressible, "\(what): only one UTF8String commonName fits the compressed profile")
        }
        return Array(cn[1].content)
    }

    static func authorityKeyID(_ content: ArraySlice<UInt8>) throws(ReaderCertificateError) -> [UInt8] {
        let id = try der { () throws(DER.Refusal) -> [UInt8] in
            let extensions = try DER.elements(try DER.single(content, tag: 0x30, "extensions").content)
            guard let first = extensions.first else { return [] }
            let aki = try DER.elements(first.content)
            guard aki.count == 2, Array(aki[0].content) == oidAuthorityKeyIdentifier, aki[1].tag == 0x04 else { return [] }
            let value = try DER.single(aki[1].content, tag: 0x30, "authorityKeyIdentifier")
            return Array(try DER.single(value.content, tag: 0x80, "keyIdentifier").content)
        }
        guard id.count == 20 else { throw ReaderCertificateError(.notCompressible, "the first extension must be an authority key id of 20 bytes") }
        return id
    }

    func checkBounds() throws(ReaderCertificateError) {
        guard (1...Self.maxSerialNumber).contains(serialNumber.count) else {
            throw ReaderCertificateError(.format, "serial number of \(serialNumber.count) bytes; 1 to \(Self.maxSerialNumber)")
        }
        guard issuer.count <= Self.maxName, subject.count <= Self.maxName else {
            throw ReaderCertificateError(.format, "issuer or subject longer than \(Self.maxName) bytes")
        }
        guard Self.validityLengths.contains(notBefore.count), Self.validityLengths.contains(notAfter.count) else {
            throw ReaderCertificateError(.validity, "notBefore / notAfter must be 13 to 15 bytes")
        }
        guard subjectPublicKey.count == 65, subjectPublicKey[0] == 0x04 else {
            throw ReaderCertificateError(.publicKey, "subject public key must be 04‖X‖Y (65 bytes)")
        }
        guard signature.count <= Self.maxSignature else {
            throw ReaderCertificateError(.signature, "signature of \(signature.count) bytes; at most \(Self.maxSignature)")
        }
    }

    static func der<T>(_ body: () throws(DER.Refusal) -> T) throws(ReaderCertificateError) -> T {
        do { return try body() } catch { throw ReaderCertificateError(.format, "\(error.reason) (offset \(error.offset))") }
    }

    /// UTCTime `YYMMDDHHMMSSZ` (years 1950–2049) or GeneralizedTime `YYYYMMDDHHMMSSZ`.
    public static func date(_ bytes: [UInt8]) -> Date? {
        guard bytes.last == UInt8(ascii: "Z"), bytes.dropLast().allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let digits = bytes.dropLast().map { Int($0 - 0x30) }
        func number(_ at: Int, _ n: Int) -> Int { digits[at..<(at + n)].reduce(0) { $0 * 10 + $1 } }
        let year: Int, rest: Int
        switch digits.count {
        case 12: let yy = number(0, 2); year = yy < 50 ? 2000 + yy : 1900 + yy; rest = 2
        case 14: year = number(0, 4); rest = 4
        default: return nil
        }
        var c = DateComponents()
        c.year = year; c.month = number(rest, 2); c.day = number(rest + 2, 2)
        c.hour = number(rest + 4, 2); c.minute = number(rest + 6, 2); c.second = number(rest + 8, 2)
        guard (1...12).contains(c.month!), (1...31).contains(c.day!), c.hour! < 24, c.minute! < 60, c.second! < 60 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: c), calendar.component(.day, from: date) == c.day else { return nil }
        return date
    }

    static func utcTime(_ date: Date) -> [UInt8] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return Array(String(format: "%02d%02d%02d%02d%02d%02dZ", c.year! % 100, c.month!, c.day!, c.hour!, c.minute!, c.second!).utf8)
    }
}

/// Why a reader certificate was refused.
public struct ReaderCertificateError: CodedError, Equatable, Sendable {
    public enum Code: String, Sendable, CaseIterable {
        /// Not the DER shape of the compressed profile or of the X.509 it stands for.
        case format = "certificate.format"
        /// A profile other than `00 00`.
        case profile = "certificate.profile"
        /// Longer than LockBench accepts.
        case tooLong = "certificate.too_long"
        /// The subject key is missing, malformed or not on P-256.
        case publicKey = "certificate.public_key"
        /// The signature field is missing or malformed.
        case signature = "certificate.signature"
        /// An X.509 certificate with parts the compressed profile cannot carry.
        case notCompressible = "certificate.not_compressible"
        /// The signature does not verify under the trusted reader issuer CA.
        case untrusted = "certificate.untrusted"
        /// The validity fields are not dates.
        case validity = "certificate.validity"
        /// Outside its validity.
        case expired = "certificate.expired"
    }
    public var code: Code
    public var reason: String
    public init(_ code: Code, _ reason: String) { self.code = code; self.reason = reason }
}
