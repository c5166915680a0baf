import ByteCore
import Codecs
import Crypto
import Foundation

/// One revoked credential: by the SHA-256 of its 65-byte long-term public key, by access
/// document id, or both (either matching revokes). After `expiry` the entry is dropped (the
/// revoked documents have expired by then anyway).
public struct RevocationEntry: Equatable, Hashable, Sendable, Codable {
    public var publicKeyHash: [UInt8]?
    public var documentID: [UInt8]?
    public var expiry: Date

    public init(publicKeyHash: [UInt8]? = nil, documentID: [UInt8]? = nil, expiry: Date) throws(DocumentError) {
        guard publicKeyHash != nil || documentID != nil else {
            throw DocumentError(.malformed, "a revocation entry names a public-key hash, a document id, or both")
        }
        if let h = publicKeyHash, h.count != 32 { throw DocumentError(.malformed, "public-key hash must be 32 bytes (SHA-256), got \(h.count)") }
        if let d = documentID, !(1...16).contains(d.count) { throw DocumentError(.malformed, "document id must be 1–16 bytes, got \(d.count)") }
        self.publicKeyHash = publicKeyHash; self.documentID = documentID; self.expiry = expiry
    }

    /// The hash a revocation entry uses for a credential key.
    public static func hash(credentialPublicKey: [UInt8]) -> [UInt8] { Primitives.sha256(credentialPublicKey) }

    public func revokes(credentialPublicKey: [UInt8], documentID id: [UInt8]) -> Bool {
        (publicKeyHash.map { $0 == Self.hash(credentialPublicKey: credentialPublicKey) } ?? false)
            || (documentID.map { $0 == id } ?? false)
    }

    var cbor: CBOR {
        var m: [CBOR: CBOR] = [2: .dateTime(expiry)]
        if let h = publicKeyHash { m[0] = .bytes(h) }
        if let d = documentID { m[1] = .bytes(d) }
        return .map(m)
    }

    init(cbor: CBOR) throws(DocumentError) {
        do {
            let m = try cbor.asMap("RevocationEntry")
            try self.init(publicKeyHash: try lookup(m, 0)?.asBytes("public-key hash"),
                          documentID: try lookup(m, 1)?.asBytes("document id"),
                          expiry: try field(m, 2, "entry expiry").asDate("entry expiry"))
        } catch {
            throw DocumentError.wrap(error, "RevocationEntry")
        }
    }

    enum CodingKeys: String, CodingKey { case publicKeyHash, documentID, expiry }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let h = try c.decodeIfPresent(String.self, forKey: .publicKeyHash).flatMap(Hex.decode)
        let d = try c.decodeIfPresent(String.self, forKey: .documentID).flatMap(Hex.decode)
        let e = try c.decode(String.self, forKey: .expiry)
        guard let expiry = RFC3339.parse(e) else {
            throw DecodingError.dataCorruptedError(forKey: .expiry, in: c, debugDescription: "not an RFC 3339 time")
        }
        try self.init(publicKeyHash: h, documentID: d, expiry: expiry)
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(publicKeyHash.map(Hex.encode), forKey: .publicKeyHash)
        try c.encodeIfPresent(documentID.map(Hex.encode), forKey: .documentID)
        try c.encode(RFC3339.format(expiry), forKey: .expiry)
    }
}

/// The revocation list an issuer publishes: the element "revocation" of an "aliro-r" document.
/// Each document is a complete list with a serial; a lock replaces its list with a verified
/// document whose serial is higher than the one it holds and ignores older ones.
///
/// ```cddl
/// RevocationData = {
///   0: uint,                      ; version: 1
///   1: uint,                      ; serial, increasing per issuer
///   2: [ * RevocationEntry ]
/// }
/// RevocationEntry = { ? 0: bstr .size 32,   ; SHA-256(65-byte credential public key)
///                     ? 1: bstr,            ; access document id
///                     2: tdate }            ; expiry
/// ```
/// The issued time is the MSO's `signed`, the document's expiry its `validUntil`; the MSO has no
/// device key.
public struct RevocationData: Equatable, Sendable {
    public static let currentVersion = 1
    public var serial: UInt64
    public var entries: [RevocationEntry]

    public init(serial: UInt64, entries: [RevocationEntry]) { self.serial = serial; self.entries = entries }

    public var cbor: CBOR { [0: .int(Self.currentVersion), 1: .unsigned(serial), 2: .array(entries.map(\.cbor))] }

    public init(cbor: CBOR) throws(DocumentError) {
        do {
            let m = try cbor.asMap("RevocationData")
            let version = try field(m, 0, "RevocationData version").asInt("RevocationData version")
            guard version == Self.currentVersion else {
                throw DocumentError(.unsupportedVersion, "revocation data version \(version); LockBench reads \(Self.currentVersion)")
            }
            guard let serial = try field(m, 1, "serial").uint64Value else { throw DocumentError(.malformed, "serial is not an unsigned integer") }
            var entries = [RevocationEntry]()
            for e in try field(m, 2, "entries").asArray("entries") { entries.append(try RevocationEntry(cbor: e)) }
            self.init(serial: serial, entries: entries)
        } catch {
            throw DocumentError.wrap(error, "RevocationData")
        }
    }
}

/// A revocation document ("aliro-r"), carried to offline locks by any phone.
public struct RevocationDocument: Equatable, Sendable {
    public static let elementIdentifier = "revocation"
    public var document: IssuedDocument
    public var revocation: RevocationData
    public var issued: Date { document.validity.signed }
    public var expiry: Date { document.validity.validUntil }

    public static func issue(revocation: RevocationData, issued: Date, expiry: Date,
                             issuerKey: P256.Signing.PrivateKey, issuerCertificate: [UInt8]? = nil,
                             includeKeyID: Bool = true) -> RevocationDocument {
        let doc = IssuedDocument.issue(docType: IssuedDocument.DocType.revocation, elementIdentifier: elementIdentifier,
                                       elementValue: revocation.cbor, deviceKey: nil,
                                       validity: .init(signed: issued, validFrom: issued, validUntil: expiry),
                                       issuerKey: issuerKey, issuerCertificate: issuerCertificate, includeKeyID: includeKeyID)
        return RevocationDocument(document: doc, revocation: revocation)
    }

    public init(document: IssuedDocument) throws(DocumentError) {
        guard document.docType == IssuedDocument.DocType.revocation else {
            throw DocumentError(.wrongDocType, "docType \"\(document.docType)\" is not a revocation document")
        }
        guard let value = document.element(Self.elementIdentifier) else {
            throw DocumentError(.malformed, "revocation document has no element \"\(Self.elementIdentifier)\"")
        }
        self.init(document: document, revocation: try RevocationData(cbor: value))
    }

    init(document: IssuedDocument, revocation: RevocationData) { self.document = document; self.revocation = revocation }

    public init(parsing bytes: [UInt8]) throws(DocumentError) {
        try self.init(document: try IssuedDocument(parsing: bytes, expectedDocType: IssuedDocument.DocType.revocation))
    }

    public func encoded() -> [UInt8] { document.encoded() }
}
