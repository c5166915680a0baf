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

    /// The official cases' values.
    static let badAccessDataVersion = 42
    static let unknownReaderRuleID: UInt64 = 0xF118
    static let unknownExtension = AccessExtension(id: 1, version: 1, critical: true, data: .map([0: .bytes([0xDE, 0xAD])]))

    static let badDocType = "bad-doctype"

    /// The document for `credentialKey` opening `readerGroup`, valid around `now`, with the defect.
    public func mint(credentialKey: [UInt8], readerGroup: [UInt8], issuer: P256.Signing.PrivateKey, now: Date) throws -> [UInt8] {
        let data = try AccessData(id: Array("conformance".utf8), readers: [try ReaderRule(groupID: readerGroup)],
                                  version: self == .accessDataVersion ? Self.badAccessDataVersion : AccessData.currentVersion,
                                  readerRuleIDs: self == .unknownReaderRule ? [Self.unknownReaderRuleID] : [],
                                  extensions: self == .criticalAccessExtension ? [Self.unknownExtension] : [])
        // The official cases' window: 14 days from now (a minute early, for a lock whose clock lags).
        var validity = IssuedDocument.Validity(signed: now.addingTimeInterval(-60), validFrom: now.addingTimeInterval(-60),
                                               validUntil: now.addingTimeInterval(14 * 86_400 - 60))
        var key = credentialKey
        switch self {
        case .notYetValid:
            validity = .init(signed: now, validFrom: now.addingTimeInterval(14 * 86_400), validUntil: now.addingTimeInterval(28 * 86_400))
        case .expired:
            let start = Date(timeIntervalSince1970: 1_577_836_800)  // 2020-01-01T00:00:00Z
            validity = .init(signed: start, validFrom: start, validUntil: start.addingTimeInterval(3600))
        case .deviceKeyMismatch:
            key = P256.Signing.PrivateKey().publicBytes
        default: break
        }
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
        let issued = try AccessDocument.issue(access: data, credentialPublicKey: key, validity: validity, issuerKey: issuer)
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
