import ByteCore
import Codecs
import Crypto
import Foundation
import OfflineUnlock

/// The access documents the official step-up reader cases hand a lock, each with the one defect
/// its case names (`nfc_rdr_neg_stepup_ad_*`), minted with the site issuer's key so that only the
/// defect can make the lock refuse (`conformance reader --issuer-key`).
public enum DocumentDefect: String, Sendable, CaseIterable {
    /// A valid document (the positive cases).
    case none
    /// The Document's docType is `bad-doctype` (NFC_RDR_NEG_STEPUP_AD_DOCTYPE_NOT_ALIROA).
    case documentDocType
    /// The MSO binds another device key (NFC_RDR_NEG_STEPUP_AD_DEVICE_KEY_INFO_MISMATCH).
    case deviceKeyMismatch
    /// Valid from 14 days on (NFC_RDR_NEG_STEPUP_AD_EARLY_ISSUER_AUTH).
    case notYetValid
    /// Valid 2020-01-01 00:00–01:00 (NFC_RDR_NEG_STEPUP_AD_EXPIRED_ISSUER_AUTH).
    case expired
    /// The issuerAuth signature replaced by bytes 00…3F (NFC_RDR_NEG_STEPUP_AD_INVALID_SIGNATURE_ISSUER_AUTH).
    case badSignature
    /// The MSO's docType is `bad-doctype`, signed so (NFC_RDR_NEG_STEPUP_AD_ISSUER_DOCTYPE_MISMATCH).
    case msoDocType
    /// issuerAuth with neither a kid nor a certificate (NFC_RDR_NEG_STEPUP_AD_NO_ISSUER_CERT_NO_KEY_ID).
    case noKeyID
    /// AccessData version 42 (NFC_RDR_NEG_STEPUP_AD_INVALID_ACCESS_DATA_ELEMENT_VERSION).
    case accessDataVersion
    /// The MSO's digest of the access element replaced by bytes 00…1F before signing: the
    /// signature verifies, the digest does not match (NFC_RDR_NEG_STEPUP_AD_INVALID_HASH_ISSUER_AUTH).
    case digestMismatch
    /// AccessData carries access extension 1, version 1, critical, which no lock can know
    /// (NFC_RDR_NEG_STEPUP_AD_UNKNOWN_CRITICAL_ACCESS_EXTENSION).
    case criticalAccessExtension
    /// AccessData names reader rule id 0xF118, which the reader does not define
    /// (NFC_RDR_NEG_STEPUP_AD_UNKNOWN_READER_RULE).
    case unknownReaderRule
    /// A valid document whose issuerAuth names the issuer by its certificate alone (x5chain, no
    /// kid), the certificate signed by the issuer CA (NFC_RDR_STEPUP_AD_ISSUER_CERT).
    case issuerCertificate
    /// The same with the kid too (NFC_RDR_STEPUP_AD_ISSUER_CERT_KEY_ID).
    case issuerCertificateAndKeyID
    /// The issuer certificate valid 2020-01-01 00:00–01:00 (NFC_RDR_NEG_STEPUP_AD_ISSUER_CERT_EXPIRED).
    case issuerCertificateExpired
    /// The issuer certificate signed by a key that is not the issuer CA, the case's fixed key
    /// (NFC_RDR_NEG_STEPUP_AD_ISSUER_CERT_INVALID_SIGNATURE).
    case issuerCertificateWrongCA
    /// The issuer certificate valid from now for 14 days, the MSO signed 14 days ago
    /// (NFC_RDR_NEG_STEPUP_AD_ISSUER_CERTIFICATE_TIME_MISMATCH).
    case issuerCertificateTimeMismatch
    /// The case's fixed certificate whose subject key is an empty BIT STRING
    /// (NFC_RDR_NEG_STEPUP_AD_ISSUER_CERT_EMPTY_PUBLIC_KEY).
    case issuerCertificateEmptyKey
    /// A valid document whose rule allows only schedule 0: UTC, from a minute before now, daily,
    /// 1800 s — the lock's time is inside (NFC_RDR_STEPUP_AD_ACCESS_RULE_SCHEDULES).
    case scheduleAllowInside
    /// The rule allows only schedule 0: UTC, from 2 h before now, daily, 180 s — the lock's time is
    /// outside (NFC_RDR_NEG_STEPUP_AD_NO_VALID_SCHEDULE_ALLOW_SCHEDULEID).
    case scheduleAllowOutside
    /// The rule denies schedule 0: UTC, from a minute before now, daily, 180 s — the lock's time is
    /// inside the deny window (NFC_RDR_NEG_STEPUP_AD_VALID_SCHEDULE_DENY_SCHEDULEID).
    case scheduleDenyInside
    /// The only rule grants capability bit 12 alone, which no action uses
    /// (NFC_RDR_NEG_STEPUP_AD_NO_ACCESS_RULE_FOR_READER_ACTION: `access_rule.capabilities = 1 << 12`).
    case noRuleForAction
    /// A valid document whose MSO asks for time verification (key 7 true): a lock without verified
    /// time must refuse it (NFC_RDR_NEG_STEPUP_AD_TIME_VERIFICATION_REQUIRED,
    /// `time_verification_required=True`); one whose clock is trusted grants it.
    case timeVerificationRequired
    /// `scheduleAllowInside` whose MSO asks for time verification (key 7 true)
    /// (NFC_RDR_NEG_STEPUP_AD_SCHEDULE_TIME_VERIFY_REQUIRED).
    case scheduleTimeVerificationRequired
    /// Not an access document: a revocation document (aliro-r) whose RevocationData version is 42,
    /// overwriting the list with one entry (NFC_RDR_NEG_STEPUP_RD_INVALID_ELEMENT_VERSION).
    case revocationDataVersion

    /// The schedule and rule of a schedule defect (nil: none). The cases start at `now` exactly;
    /// LockBench starts a minute early (as its validity windows), for a lock whose clock lags.
    func schedule(now: Date) throws -> (AccessSchedule, allow: UInt8, deny: UInt8)? {
        let t = UInt32(clamping: Int64(now.timeIntervalSince1970.rounded(.down)))
        func daily(from start: UInt32, seconds: UInt32) throws -> AccessSchedule {
            .aliro(try AliroSchedule(flags: AliroSchedule.timeInUTC, startTime: start, rule: try RecurrenceRule(durationSeconds: seconds, pattern: .daily)))
        }
        switch self {
        case .scheduleAllowInside, .scheduleTimeVerificationRequired: return (try daily(from: t &- 60, seconds: 1800), 1, 0)
        case .scheduleAllowOutside: return (try daily(from: t &- 7200, seconds: 180), 1, 0)
        case .scheduleDenyInside: return (try daily(from: t &- 60, seconds: 180), 0, 1)
        default: return nil
        }
    }

    /// The official cases' values.
    static let badAccessDataVersion = 42
    static let unknownReaderRuleID: UInt64 = 0xF118
    static let unknownExtension = AccessExtension(id: 1, version: 1, critical: true, data: .map([0: .bytes([0xDE, 0xAD])]))

    static let badDocType = "bad-doctype"
    static let undefinedCapability: UInt32 = 1 << 12

    /// Whether the MSO carries key 7 true (time verification required); LockBench writes false otherwise.
    public var requiresTimeVerification: Bool { self == .timeVerificationRequired || self == .scheduleTimeVerificationRequired }

    /// Whether the minted document is a revocation document (the phone announces 5E bit 1 only).
    public var isRevocation: Bool { self == .revocationDataVersion }

    /// Whether the defect's document carries an issuer certificate minted by the issuer CA (its
    /// case needs `--issuer-ca-key`).
    public var needsIssuerCA: Bool {
        switch self {
        case .issuerCertificate, .issuerCertificateAndKeyID, .issuerCertificateExpired, .issuerCertificateTimeMismatch: return true
        default: return false
        }
    }

    /// The key that signs the certificate of NFC_RDR_NEG_STEPUP_AD_ISSUER_CERT_INVALID_SIGNATURE
    /// (`invalid_issuer_PrivK`, nfc_rdr_neg_stepup_ad_issuer_cert_invalid_signature.py @ b14716fd).
    static let notTheIssuerCA = try! Primitives.signingPrivateKey(raw: Hex.decode("0000297D2963C5741166C6D1CC3579EF45AB2E5798F92115AC81FE6BBDD7320E")!)

    /// The certificate of NFC_RDR_NEG_STEPUP_AD_ISSUER_CERT_EMPTY_PUBLIC_KEY (`issuer_certificate_pem`,
    /// index id 69458181304): "CVE-2026-50583 Issuer CA" → "…Subject", 2026-01-01…2036-01-01,
    /// subjectPublicKey `03 01 00`, signature `30 06 02 01 00 02 01 00`.
    public static let emptyKeyCertificate = Hex.decode(
        "3081e53081cba00302010202012a300a06082a8648ce3d04030230233121301f060355040313184356452d323032362d353035383320497373756572204341"
        + "301e170d3236303130313030303030305a170d3336303130313030303030305a3021311f301d060355040313164356452d323032362d3530353833205375626a656374"
        + "3018301306072a8648ce3d020106082a8648ce3d030107030100a3333031301f0603551d230418301680149a8b7c6d5e4f0102030405060708090a0b0c0d0e"
        + "300e0603551d0f0101ff040403020284300a06082a8648ce3d0403020309003006020100020100")!

    /// The official `Certificate.generate` default validity, 2020-01-01T00:00Z–2049-01-01T00:00Z.
    static let defaultCertificateStart = Date(timeIntervalSince1970: 1_577_836_800)
    static let defaultCertificateEnd = Date(timeIntervalSince1970: 2_493_072_000)

    /// The issuer certificate the defect's document carries (nil: none), and whether the kid goes too.
    func certificate(issuer: P256.Signing.PrivateKey, issuerCA: P256.Signing.PrivateKey?, now: Date) throws -> ([UInt8]?, Bool) {
        let key = issuer.publicBytes
        func issued(by ca: P256.Signing.PrivateKey, _ from: Date, _ until: Date) throws -> [UInt8] {
            try IssuerCertificate.issue(subjectPublicKey: key, caKey: ca, notBefore: from, notAfter: until)
        }
        switch self {
        case .issuerCertificateEmptyKey: return (Self.emptyKeyCertificate, false)
        case .issuerCertificateWrongCA: return (try issued(by: Self.notTheIssuerCA, Self.defaultCertificateStart, Self.defaultCertificateEnd), false)
        default: break
        }
        guard needsIssuerCA else { return (nil, true) }
        guard let issuerCA else { throw DocumentDefectError.needsIssuerCA(self) }
        switch self {
        case .issuerCertificateExpired:
            return (try issued(by: issuerCA, Self.defaultCertificateStart, Self.defaultCertificateStart.addingTimeInterval(3600)), false)
        case .issuerCertificateTimeMismatch:
            return (try issued(by: issuerCA, now, now.addingTimeInterval(14 * 86_400)), false)
        default:
            return (try issued(by: issuerCA, Self.defaultCertificateStart, Self.defaultCertificateEnd), self == .issuerCertificateAndKeyID)
        }
    }

    /// The document for `credentialKey` opening `readerGroup`, valid around `now`, with the defect.
    /// `validityIteration`: the MSO's validityInfo key "5" (the Aliro 0.9.4 §7.2.3 cases).
    public func mint(credentialKey: [UInt8], readerGroup: [UInt8], issuer: P256.Signing.PrivateKey,
                     issuerCA: P256.Signing.PrivateKey? = nil, now: Date, validityIteration: Int? = nil) throws -> [UInt8] {
        if self == .revocationDataVersion { return Self.revocationDocument(version: Self.badAccessDataVersion, issuer: issuer, now: now) }
        var rule = try ReaderRule(groupID: readerGroup)
        let scheduled = try schedule(now: now)
        if let scheduled { rule.allowScheduleIDs = scheduled.allow; rule.denyScheduleIDs = scheduled.deny }
        if self == .noRuleForAction { rule.capabilities = Self.undefinedCapability }
        let data = try AccessData(id: Array("conformance".utf8), readers: [rule],
                                  version: self == .accessDataVersion ? Self.badAccessDataVersion : AccessData.currentVersion,
                                  readerRuleIDs: self == .unknownReaderRule ? [Self.unknownReaderRuleID] : [],
                                  extensions: self == .criticalAccessExtension ? [Self.unknownExtension] : [],
                                  scheduleEntries: scheduled.map { [$0.0] })
        // The official cases' window: 14 days from now (a minute early, for a lock whose clock lags).
        var validity = IssuedDocument.Validity(signed: now.addingTimeInterval(-60), validFrom: now.addingTimeInterval(-60),
                                               validUntil: now.addingTimeInterval(14 * 86_400 - 60), validityIteration: validityIteration)
        var key = credentialKey
        switch self {
        case .notYetValid:
            validity = .init(signed: now, validFrom: now.addingTimeInterval(14 * 86_400), validUntil: now.addingTimeInterval(28 * 86_400))
        case .expired:
            let start = Date(timeIntervalSince1970: 1_577_836_800)  // 2020-01-01T00:00:00Z
            validity = .init(signed: start, validFrom: start, validUntil: start.addingTimeInterval(3600))
        case .deviceKeyMismatch:
            key = P256.Signing.PrivateKey().publicBytes
        case .issuerCertificateTimeMismatch:
            validity.signed = now.addingTimeInterval(-14 * 86_400)
        default: break
        }
        let (certificate, keyID) = try certificate(issuer: issuer, issuerCA: issuerCA, now: now)
        if self == .msoDocType {
            let doc = IssuedDocument.issue(docType: Self.badDocType, elementIdentifier: AccessDocument.elementIdentifier, elementValue: data.cbor,
                                           deviceKey: key, validity: validity, issuerKey: issuer)
            // The Document and its namespace say aliro-a; only the signed MSO says otherwise.
            return try Self.edit(doc.encoded()) { doc in
                doc["5"] = .text(IssuedDocument.DocType.access)
                guard var signed = doc["1"]?.mapValue, let items = signed["1"]?[.text(Self.badDocType)] else { return }
                signed["1"] = .map([.text(IssuedDocument.DocType.access): items])
                doc["1"] = .map(signed)
            }
        }
        let issued = try AccessDocument.issue(access: data, credentialPublicKey: key, validity: validity, issuerKey: issuer,
                                              issuerCertificate: certificate, includeKeyID: keyID, timeVerificationRequired: requiresTimeVerification)
        if self == .digestMismatch { return try Self.resignedWithWrongDigest(issued.document, issuer: issuer) }
        let bytes = issued.encoded()
        switch self {
        case .documentDocType:
            return try Self.edit(bytes) { $0["5"] = .text(Self.badDocType) }
        case .badSignature, .noKeyID:
            return try Self.edit(bytes) { doc in
                guard var signed = doc["1"]?.mapValue, var auth = signed["2"]?.arrayValue, auth.count == 4 else { return }
                if self == .badSignature {
                    auth[3] = .bytes((0..<64).map { UInt8($0) })
                } else if var unprotected = auth[1].mapValue {
                    unprotected[CoseSign1.Header.kid] = nil
                    auth[1] = .map(unprotected)
                }
                signed["2"] = .array(auth)
                doc["1"] = .map(signed)
            }
        default:
            return bytes
        }
    }

    /// A revocation document with RevocationData `version` (LockBench writes 1), one entry (document
    /// id 00 01 02 03 04, as the case's), signed by `issuer` a minute before `now`, valid 14 days.
    static func revocationDocument(version: Int, issuer: P256.Signing.PrivateKey, now: Date) -> [UInt8] {
        let signed = now.addingTimeInterval(-60)
        let entry = try! RevocationEntry(documentID: [0, 1, 2, 3, 4], expiry: now.addingTimeInterval(14 * 86_400))
        guard var data = RevocationData(changeMode: .overwrite, entries: [entry]).cbor.mapValue else { return [] }
        data[0] = .int(version)
        return IssuedDocument.issue(docType: IssuedDocument.DocType.revocation, elementIdentifier: RevocationDocument.elementIdentifier,
                                    elementValue: .map(data), deviceKey: nil,
                                    validity: .init(signed: signed, validFrom: signed, validUntil: now.addingTimeInterval(14 * 86_400)),
                                    issuerKey: issuer).encoded()
    }

    /// `document` with each of its MSO digests replaced by bytes 00…1F, signed again by `issuer`
    /// (the official case edits the unsigned MSO, then signs it).
    static func resignedWithWrongDigest(_ document: IssuedDocument, issuer: P256.Signing.PrivateKey) throws -> [UInt8] {
        var document = document
        guard var mso = try CBOR(parsing: document.issuerAuth.payload).embeddedItem().mapValue,
              var digests = mso["3"]?.mapValue, let inNamespace = digests[.text(document.docType)]?.mapValue else {
            throw CBORError(.unexpectedType, "the minted MSO has no valueDigests for \(document.docType)")
        }
        let wrong = CBOR.bytes((0..<32).map { UInt8($0) })
        digests[.text(document.docType)] = .map(inNamespace.mapValues { _ in wrong })
        mso["3"] = .map(digests)
        document.issuerAuth = CoseSign1.sign(payload: CBOR.embedded(.map(mso)).encoded(), key: issuer,
                                             kid: CoseSign1.keyIdentifier(issuerPublicKey: issuer.publicBytes))
        return document.encoded()
    }

    /// Decodes a Document, changes its top-level map, encodes it again.
    static func edit(_ bytes: [UInt8], _ change: (inout [CBOR: CBOR]) -> Void) throws -> [UInt8] {
        guard var map = try CBOR(parsing: bytes).mapValue else { throw CBORError(.unexpectedType, "a Document is a map") }
        change(&map)
        return CBOR.map(map).encoded()
    }
}

public enum DocumentDefectError: Error, CustomStringConvertible, Sendable {
    case needsIssuerCA(DocumentDefect)
    public var description: String {
        switch self {
        case .needsIssuerCA(let d): return "the \(d.rawValue) document carries an issuer certificate the issuer CA signs: give its private key (--issuer-ca-key)"
        }
    }
}
