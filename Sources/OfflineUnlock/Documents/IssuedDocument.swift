import ByteCore
import Codecs
import Crypto
import Foundation

/// The signed envelope shared by access and revocation documents (ALIRO-FACTS "Step-up",
/// the mdoc shape of ISO 18013-5 with Aliro's numeric keys). Map keys written as text ("1") are
/// text strings on the wire, bare numbers are integers — as ALIRO-FACTS writes them; the reader
/// also accepts the other spelling of each key.
///
/// ```cddl
/// Document = {
///   "1": IssuerSigned,
///   "5": DocType                         ; "aliro-a" access, "aliro-r" revocation
/// }
/// IssuerSigned = {
///   "1": IssuerNameSpaces,
///   "2": IssuerAuth                      ; COSE_Sign1, payload = MobileSecurityObjectBytes
/// }
/// IssuerNameSpaces = { + NameSpace => [ + IssuerSignedItemBytes ] }   ; NameSpace = DocType
/// IssuerSignedItemBytes = #6.24(bstr .cbor IssuerSignedItem)
/// IssuerSignedItem = {
///   1: uint,                             ; digestID
///   2: bstr,                             ; random, 16 bytes
///   3: tstr,                             ; elementIdentifier: "access" | "revocation"
///   4: any                               ; elementValue: AccessData | RevocationData
/// }
/// IssuerAuth = [ bstr .cbor {1: -7}, {4: bstr .size 8}, bstr .cbor MobileSecurityObjectBytes, bstr .size 64 ]
/// MobileSecurityObjectBytes = #6.24(bstr .cbor MobileSecurityObject)
/// MobileSecurityObject = {
///   "1": "1.0",                          ; version
///   "2": "SHA-256",                      ; digestAlgorithm
///   "3": { + NameSpace => { + uint => bstr } },   ; valueDigests: digestID => SHA-256(IssuerSignedItemBytes)
///   ? "4": { "1": COSE_Key },            ; deviceKeyInfo: the credential's long-term key (access documents)
///   "5": DocType,
///   "6": ValidityInfo,
///   ? "7": bool                          ; timeVerificationRequired
/// }
/// ValidityInfo = { "1": tdate signed, "2": tdate validFrom, "3": tdate validUntil,
///                  ? "4": tdate expectedUpdate, ? "5": uint validityIteration }
/// tdate = #6.0(tstr)                     ; RFC 3339, UTC, whole seconds
/// ```
/// The digest covers the exact `#6.24(bstr)` bytes as received (tag included).
public struct IssuedDocument: Equatable, Sendable {
    public enum DocType {
        public static let access = "aliro-a"
        public static let revocation = "aliro-r"
    }
    public static let msoVersion = "1.0"
    public static let digestAlgorithm = "SHA-256"

    public struct Item: Equatable, Sendable {
        public var digestID: Int
        public var random: [UInt8]
        public var elementIdentifier: String
        public var elementValue: CBOR
        /// The encoded `#6.24(bstr)` as received or written: what the digest covers.
        public var taggedBytes: [UInt8]
    }

    public struct Validity: Equatable, Sendable {
        public var signed: Date
        public var validFrom: Date
        public var validUntil: Date
        public var expectedUpdate: Date?
        public var validityIteration: Int?
        public init(signed: Date, validFrom: Date, validUntil: Date, expectedUpdate: Date? = nil, validityIteration: Int? = nil) {
            self.signed = signed; self.validFrom = validFrom; self.validUntil = validUntil
            self.expectedUpdate = expectedUpdate; self.validityIteration = validityIteration
        }
    }

    public var docType: String
    public var items: [Item]
    public var issuerAuth: CoseSign1
    // The MSO, decoded from issuerAuth's payload.
    public var valueDigests: [Int: [UInt8]]
    public var deviceKey: [UInt8]?
    public var validity: Validity
    public var timeVerificationRequired: Bool

    /// The element of the document's own namespace with this identifier.
    public func element(_ identifier: String) -> CBOR? {
        items.first { $0.elementIdentifier == identifier }?.elementValue
    }

    // MARK: Issuing

    /// Builds and signs a document with one element in the namespace `docType`.
    /// `timeVerificationRequired` is MSO key "7": true asks the lock to accept the document only
    /// under a clock it already trusts, and makes the document no evidence of time
    /// (NFC_RDR_NEG_STEPUP_AD_TIME_VERIFICATION_REQUIRED); LockBench writes false unless asked.
    public static func issue(docType: String, elementIdentifier: String, elementValue: CBOR,
                             deviceKey: [UInt8]?, validity: Validity,
                             issuerKey: P256.Signing.PrivateKey, issuerCertificate: [UInt8]? = nil, includeKeyID: Bool = true,
                             issuerKeyID: [UInt8]? = nil, timeVerificationRequired: Bool = false,
                             random: [UInt8] = Primitives.randomBytes(16)) -> IssuedDocument {
        let itemCBOR: CBOR = [1: 0, 2: .bytes(random), 3: .text(elementIdentifier), 4: elementValue]
        let tagged = CBOR.embedded(itemCBOR).encoded()
        let item = Item(digestID: 0, random: random, elementIdentifier: elementIdentifier,
                        elementValue: elementValue, taggedBytes: tagged)
        var mso: [CBOR: CBOR] = [
            "1": .text(msoVersion),
            "2": .text(digestAlgorithm),
            "3": [.text(docType): [0: .bytes(Primitives.sha256(tagged))]],
            "5": .text(docType),
            "6": validityCBOR(validity),
            "7": .bool(timeVerificationRequired),
        ]
        if let deviceKey {
            // The caller passes a validated point; CoseKey only re-checks it.
            mso["4"] = ["1": (try? CoseKey(publicKey: deviceKey))?.cbor ?? .null]
        }
        let payload = CBOR.embedded(.map(mso)).encoded()
        // `issuerKeyID`: the kid of `issuerKey`, from a caller that signs many documents with it
        // (deriving the public point and hashing it cost as much as a tenth of the signature).
        let kid = includeKeyID ? issuerKeyID ?? CoseSign1.keyIdentifier(issuerPublicKey: Primitives.point(of: issuerKey)) : nil
        let auth = CoseSign1.sign(payload: payload, key: issuerKey, kid: kid, x5chain: issuerCertificate)
        return IssuedDocument(docType: docType, items: [item], issuerAuth: auth, valueDigests: [0: Primitives.sha256(tagged)],
                              deviceKey: deviceKey, validity: validity, timeVerificationRequired: timeVerificationRequired)
    }

    static func validityCBOR(_ v: Validity) -> CBOR {
        var m: [CBOR: CBOR] = ["1": .dateTime(v.signed), "2": .dateTime(v.validFrom), "3": .dateTime(v.validUntil)]
        if let e = v.expectedUpdate { m["4"] = .dateTime(e) }
        if let i = v.validityIteration { m["5"] = .int(i) }
        return .map(m)
    }

    /// The `Document` map.
    public var cbor: CBOR {
        let tagged: [CBOR] = items.map { item in
            // Re-embed exactly the bytes the digest covers.
            (try? CBOR(parsing: item.taggedBytes)) ?? .null
        }
        return ["1": ["1": [.text(docType): .array(tagged)], "2": issuerAuth.cbor], "5": .text(docType)]
    }

    public func encoded() -> [UInt8] { cbor.encoded() }

    // MARK: Parsing (structure only; `verify` checks issuer, signature and digests)

    public init(parsing bytes: [UInt8], expectedDocType: String? = nil) throws(DocumentError) {
        let root: CBOR
        do { root = try CBOR(parsing: bytes) } catch { throw DocumentError(error, "Document") }
        try self.init(cbor: root, expectedDocType: expectedDocType)
    }

    /// The MSO's signed time (validityInfo `signed`) alone, without the items, the access data or
    /// the device key's curve check: a trust service re-issuing a key needs only that date, and
    /// the whole parse was 6 % of a key refresh's server CPU. Anything not of the expected shape
    /// goes through the full parse; nil when that fails too. Not a verification.
    public static func signedTime(of bytes: [UInt8]) -> Date? {
        if let root = try? CBOR(parsing: bytes), case .map(let doc) = root,
           case .map(let signed)? = lookup(doc, 1), let auth = lookup(signed, 2),
           let sign1 = try? CoseSign1(cbor: auth), let msoBytes = (try? CBOR(parsing: sign1.payload))?.embeddedBytes,
           case .map(let mso)? = try? CBOR(parsing: msoBytes), case .map(let validity)? = lookup(mso, 6),
           let time = lookup(validity, 1)?.dateValue {
            return time
        }
        return (try? IssuedDocument(parsing: bytes))?.validity.signed
    }

    public init(cbor root: CBOR, expectedDocType: String? = nil) throws(DocumentError) {
        do {
            let doc = try root.asMap("Document")
            let docType = try field(doc, 5, "Document docType").asText("Document docType")
            if let expectedDocType, docType != expectedDocType {
                throw DocumentError(.wrongDocType, "docType \"\(docType)\", expected \"\(expectedDocType)\"")
            }
            let signed = try field(doc, 1, "IssuerSigned").asMap("IssuerSigned")
            let nameSpaces = try field(signed, 1, "IssuerNameSpaces").asMap("IssuerNameSpaces")
            var items = [Item]()
            for (ns, list) in nameSpaces {
                guard ns == .text(docType) else { continue }
                for entry in try list.asArray("IssuerSignedItemBytes list") {
                    guard let inner = entry.embeddedBytes else {
                        throw CBORError(.unexpectedType, "IssuerSignedItemBytes: expected tag 24 on bstr, found \(entry.kindName)")
                    }
                    let item = try CBOR(parsing: inner).asMap("IssuerSignedItem")
                    let digestID = try field(item, 1, "digestID").asInt("digestID")
                    guard digestID >= 0 else { throw CBORError(.invalidValue, "digestID \(digestID) is negative") }
                    items.append(Item(digestID: digestID,
                                      random: try field(item, 2, "random").asBytes("random"),
                                      elementIdentifier: try field(item, 3, "elementIdentifier").asText("elementIdentifier"),
                                      elementValue: try field(item, 4, "elementValue"),
                                      taggedBytes: entry.encoded()))
                }
            }
            let auth = try parseIssuerAuth(try field(signed, 2, "issuerAuth"))
            let msoTagged = try CBOR(parsing: auth.payload)
            guard let msoBytes = msoTagged.embeddedBytes else {
                throw CBORError(.unexpectedType, "MobileSecurityObjectBytes: expected tag 24 on bstr, found \(msoTagged.kindName)")
            }
            let mso = try CBOR(parsing: msoBytes).asMap("MobileSecurityObject")
            let version = try field(mso, 1, "MSO version").asText("MSO version")
            guard version == Self.msoVersion else { throw DocumentError(.unsupportedVersion, "MSO version \"\(version)\"; LockBench reads \"1.0\"") }
            let alg = try field(mso, 2, "digestAlgorithm").asText("digestAlgorithm")
            guard alg == Self.digestAlgorithm else { throw DocumentError(.unsupportedVersion, "digest algorithm \"\(alg)\"; LockBench reads \"SHA-256\"") }
            let msoDocType = try field(mso, 5, "MSO docType").asText("MSO docType")
            guard msoDocType == docType else {
                throw DocumentError(.wrongDocType, "MSO docType \"\(msoDocType)\" differs from Document docType \"\(docType)\"")
            }
            var digests = [Int: [UInt8]]()
            let allDigests = try field(mso, 3, "valueDigests").asMap("valueDigests")
            if let nsDigests = allDigests[.text(docType)] {
                for (k, v) in try nsDigests.asMap("valueDigests namespace") {
                    digests[try k.asInt("digestID")] = try v.asBytes("digest")
                }
            }
            var deviceKey: [UInt8]? = nil
            if let info = lookup(mso, 4) {
                let coseKey = try field(try info.asMap("deviceKeyInfo"), 1, "deviceKey")
                deviceKey = try parseDeviceKey(coseKey)
            }
            let v = try field(mso, 6, "validityInfo").asMap("validityInfo")
            let validity = Validity(signed: try field(v, 1, "signed").asDate("signed"),
                                    validFrom: try field(v, 2, "validFrom").asDate("validFrom"),
                                    validUntil: try field(v, 3, "validUntil").asDate("validUntil"),
                                    expectedUpdate: try lookup(v, 4)?.asDate("expectedUpdate"),
                                    validityIteration: try lookup(v, 5)?.asInt("validityIteration"))
            self.init(docType: docType, items: items, issuerAuth: auth, valueDigests: digests, deviceKey: deviceKey,
                      validity: validity, timeVerificationRequired: try lookup(mso, 7)?.asBool("timeVerificationRequired") ?? false)
        } catch {
            throw DocumentError.wrap(error, "Document")
        }
    }

    init(docType: String, items: [Item], issuerAuth: CoseSign1, valueDigests: [Int: [UInt8]], deviceKey: [UInt8]?,
         validity: Validity, timeVerificationRequired: Bool) {
        self.docType = docType; self.items = items; self.issuerAuth = issuerAuth; self.valueDigests = valueDigests
        self.deviceKey = deviceKey; self.validity = validity; self.timeVerificationRequired = timeVerificationRequired
    }

    // MARK: Verification

    /// Finds the issuer key — from the x5chain certificate when the header carries one, else by
    /// kid — verifies the ES256 signature over the MSO, and checks that every item's digest
    /// matches. Returns the issuer's public key.
    ///
    /// A certificate (COSE header 33) decides, kid or not (NFC_RDR_STEPUP_AD_ISSUER_CERT and
    /// …_KEY_ID): it must parse with a P-256 key (NFC_RDR_NEG_STEPUP_AD_ISSUER_CERT_EMPTY_PUBLIC_KEY),
    /// be signed by an issuer CA the lock trusts (…_ISSUER_CERT_INVALID_SIGNATURE), and its validity
    /// must hold the MSO's signing time (…_ISSUER_CERTIFICATE_TIME_MISMATCH, …_ISSUER_CERT_EXPIRED);
    /// a kid beside it must name the certificate's key. Its validity at the decision's time is the
    /// engine's check (`DecisionCore`), as every time-dependent one is. Without a certificate the
    /// kid must name a trusted issuer key (…_NO_ISSUER_CERT_NO_KEY_ID refuses neither).
    @discardableResult
    public func verify(trust: TrustStore) throws(DocumentError) -> [UInt8] {
        let issuer: [UInt8], named: String
        if let certificate = try issuerCertificate() {
            issuer = try certifiedIssuerKey(certificate, trust: trust)
            named = "certified by the issuer CA"
        } else {
            guard let kid = issuerAuth.kid else { throw DocumentError(.untrustedIssuer, "issuerAuth carries neither a kid (4) nor an issuer certificate (x5chain, 33)") }
            guard let key = trust.issuerKey(kid: kid) else {
                throw DocumentError(.untrustedIssuer, "issuer kid \(Hex.encode(kid)) is not in the lock's trust store")
            }
            issuer = key
            named = "kid \(Hex.encode(kid))"
        }
        try verifySignatureAndDigests(issuer: issuer, named: named)
        return issuer
    }

    /// Verifies the signature under one of `issuerPublicKeys`, named by neither kid nor
    /// certificate, and the digests: how the official phone cases check a document
    /// (`document.check_signature(<dut_credential_issuer_public_key>, …)`, nfc_ud_stepup_ad.py).
    /// Returns the key that signed.
    @discardableResult
    public func verify(issuerPublicKeys: [[UInt8]]) throws(DocumentError) -> [UInt8] {
        guard let issuer = issuerPublicKeys.first(where: { (try? issuerAuth.verify(publicKey: $0)) != nil }) else {
            try verifySignatureAndDigests(issuer: issuerPublicKeys.first ?? [], named: "none of the \(issuerPublicKeys.count) issuer keys given")
            return []
        }
        try verifySignatureAndDigests(issuer: issuer, named: "issuer key")
        return issuer
    }

    func verifySignatureAndDigests(issuer: [UInt8], named: String) throws(DocumentError) {
        do { try issuerAuth.verify(publicKey: issuer) } catch {
            switch error.code {
            case .unsupportedAlgorithm, .missingAlgorithm, .unknownCriticalHeader:
                throw DocumentError(.unsupportedVersion, "issuerAuth: \(error.reason)")
            case .malformed, .detachedPayload, .invalidKey:
                throw DocumentError(.malformed, "issuerAuth: \(error.reason)")
            case .badSignature:
                throw DocumentError(.badIssuerSignature, "issuer signature (\(named)) does not verify")
            }
        }
        guard !items.isEmpty else { throw DocumentError(.malformed, "no IssuerSignedItem in namespace \"\(docType)\"") }
        for item in items {
            guard let expected = valueDigests[item.digestID] else {
                throw DocumentError(.digestMismatch, "MSO has no digest for digestID \(item.digestID) (\(item.elementIdentifier))")
            }
            guard Primitives.constantTimeEqual(Primitives.sha256(item.taggedBytes), expected) else {
                throw DocumentError(.digestMismatch, "digest of element \"\(item.elementIdentifier)\" (digestID \(item.digestID)) differs from the MSO")
            }
        }
    }

    /// The issuer's kid: issuerAuth's, else the one of the certificate's key (the key a
    /// revocation list is kept under is the same either way).
    public var issuerKeyID: [UInt8]? {
        issuerAuth.kid ?? (try? issuerCertificate())?.map { CoseSign1.keyIdentifier(issuerPublicKey: $0.publicKey) } ?? nil
    }

    /// The issuer certificate, the leaf of issuerAuth's x5chain (COSE header 33), nil when absent.
    public func issuerCertificate() throws(DocumentError) -> IssuerCertificate? {
        let chain: [[UInt8]]
        do { chain = try issuerAuth.x5chain() } catch { throw DocumentError(.badIssuerCertificate, "issuerAuth: \(error.reason)") }
        guard let leaf = chain.first else { return nil }
        do { return try IssuerCertificate(parsing: leaf) } catch {
            throw DocumentError(.badIssuerCertificate, "issuer certificate (x5chain, COSE header 33): \(error.reason)")
        }
    }

    /// The certificate's key, when a trusted issuer CA signed the certificate, its validity holds
    /// the MSO's signing time, and a kid beside it names that key.
    func certifiedIssuerKey(_ certificate: IssuerCertificate, trust: TrustStore) throws(DocumentError) -> [UInt8] {
        if trust.skipsIssuerCertificateChecks { return certificate.publicKey }
        let cas = trust.issuerCAKeys
        guard cas.contains(where: certificate.isSigned(by:)) else {
            throw DocumentError(.untrustedIssuerCertificate, cas.isEmpty
                ? "the issuer certificate (\(certificate.subjectName)) cannot chain: the lock trusts no issuer CA"
                : "the issuer certificate (\(certificate.subjectName), issued by \(certificate.issuerName)) is not signed by an issuer CA the lock trusts (\(cas.count) trusted)")
        }
        guard certificate.isValid(at: validity.signed) else {
            throw DocumentError(.issuerCertificateNotValid, "the MSO was signed at \(RFC3339.format(validity.signed)), outside the issuer certificate's validity \(RFC3339.format(certificate.notBefore))–\(RFC3339.format(certificate.notAfter))")
        }
        let certified = CoseSign1.keyIdentifier(issuerPublicKey: certificate.publicKey)
        if let kid = issuerAuth.kid, kid != certified {
            throw DocumentError(.untrustedIssuer, "issuerAuth kid \(Hex.encode(kid)) names another key than its issuer certificate's (kid \(Hex.encode(certified)))")
        }
        return certificate.publicKey
    }
}

func parseIssuerAuth(_ c: CBOR) throws(DocumentError) -> CoseSign1 {
    do { return try CoseSign1(cbor: c) } catch { throw DocumentError(.malformed, "issuerAuth: \(error)") }
}

func parseDeviceKey(_ c: CBOR) throws(DocumentError) -> [UInt8] {
    do { return try CoseKey(cbor: c).publicKey } catch { throw DocumentError(.malformed, "deviceKey: \(error)") }
}

/// Looks a numbered field up by its text spelling ("1") and by its integer spelling (1).
func lookup(_ m: [CBOR: CBOR], _ n: Int) -> CBOR? { m.numbered(n) }

func field(_ m: [CBOR: CBOR], _ n: Int, _ what: String) throws(CBORError) -> CBOR {
    guard let v = lookup(m, n) else { throw CBORError(.missingField, "\(what) (key \(n)) is missing") }
    return v
}
