import ByteCore
import Codecs
import Crypto
import Foundation

/// One revoked credential: by the SHA-256 of its 65-byte long-term public key, by access
/// document id, or both (either matching revokes). After `expiry`, when it has one, the entry is
/// dropped (the revoked documents have expired by then anyway); an entry without one stays until
/// a list removes it (the official RevocationEntry makes the expiry optional).
public struct RevocationEntry: Equatable, Hashable, Sendable, Codable {
    public var publicKeyHash: [UInt8]?
    public var documentID: [UInt8]?
    public var expiry: Date?

    public init(publicKeyHash: [UInt8]? = nil, documentID: [UInt8]? = nil, expiry: Date?) throws(DocumentError) {
        let publicKeyHash = publicKeyHash.flatMap { $0.isEmpty ? nil : $0 }, documentID = documentID.flatMap { $0.isEmpty ? nil : $0 }
        guard publicKeyHash != nil || documentID != nil else {
            throw DocumentError(.malformed, "a revocation entry names a public-key hash (key 0), a document id (key 1), or both")
        }
        if let h = publicKeyHash, h.count != 32 { throw DocumentError(.malformed, "public-key hash (key 0) must be 32 bytes (SHA-256), got \(h.count)") }
        if let d = documentID, d.count > 16 { throw DocumentError(.malformed, "document id (key 1) must be 1–16 bytes, got \(d.count)") }
        self.publicKeyHash = publicKeyHash; self.documentID = documentID; self.expiry = expiry
    }

    /// The hash a revocation entry uses for a credential key.
    public static func hash(credentialPublicKey: [UInt8]) -> [UInt8] { Primitives.sha256(credentialPublicKey) }

    public func revokes(credentialPublicKey: [UInt8], documentID id: [UInt8]) -> Bool {
        (publicKeyHash.map { $0 == Self.hash(credentialPublicKey: credentialPublicKey) } ?? false)
            || (documentID.map { $0 == id } ?? false)
    }

    /// The expiry as the official RevocationEntry writes it: tag 1, whole seconds since the epoch.
    var cbor: CBOR {
        var m: [CBOR: CBOR] = [:]
        if let h = publicKeyHash { m[0] = .bytes(h) }
        if let d = documentID { m[1] = .bytes(d) }
        if let e = expiry { m[2] = .epoch(e) }
        return .map(m)
    }

    /// Unknown keys are skipped; the expiry may be tag 1 (the official tool's) or tag 0
    /// (LockBench's lists before 2026-11-27).
    init(cbor: CBOR) throws(DocumentError) {
        do {
            let m = try cbor.asMap("RevocationEntry")
            let expiry = try lookup(m, 2).map { e throws(CBORError) in try e.asDate("entry expiry (key 2)") }
            if let expiry, expiry.timeIntervalSince1970 < 0 || expiry.timeIntervalSince1970 > 0xFFFF_FFFF {
                throw DocumentError(.malformed, "entry expiry (key 2) \(expiry.timeIntervalSince1970) is outside 0…2^32 − 1 seconds")
            }
            try self.init(publicKeyHash: try lookup(m, 0)?.asBytes("public-key hash (key 0)"),
                          documentID: try lookup(m, 1)?.asBytes("document id (key 1)"), expiry: expiry)
        } catch {
            throw DocumentError.wrap(error, "RevocationEntry")
        }
    }

    enum CodingKeys: String, CodingKey { case publicKeyHash, documentID, expiry }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let h = try c.decodeIfPresent(String.self, forKey: .publicKeyHash).flatMap(Hex.decode)
        let d = try c.decodeIfPresent(String.self, forKey: .documentID).flatMap(Hex.decode)
        var expiry: Date?
        if let e = try c.decodeIfPresent(String.self, forKey: .expiry) {
            guard let parsed = RFC3339.parse(e) else {
                throw DecodingError.dataCorruptedError(forKey: .expiry, in: c, debugDescription: "not an RFC 3339 time")
            }
            expiry = parsed
        }
        try self.init(publicKeyHash: h, documentID: d, expiry: expiry)
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(publicKeyHash.map(Hex.encode), forKey: .publicKeyHash)
        try c.encodeIfPresent(documentID.map(Hex.encode), forKey: .documentID)
        try c.encodeIfPresent(expiry.map(RFC3339.format), forKey: .expiry)
    }
}

/// The element of an "aliro-r" document: a change to the issuer's revocation list, as the
/// official Certification Tool defines it
/// (`support/access_doc/aliro/revocation/revocation_data.py` @ 26c6ded0,
/// `revocation_entry.py` @ 0ca412be):
///
/// ```cddl
/// RevocationData = {
///   0: uint,                        ; version: 1
///   1: 0 / 1,                       ; change mode: 0 OVERWRITE (replace the list), 1 APPEND
///   ? 2: [ * RevocationEntry ],     ; entries to add
///   ? 3: [ * RevocationEntry ],     ; entries to remove (after adding)
///   ? 4: { * any => any }           ; revocation extensions (skipped)
/// }
/// RevocationEntry = { ? 0: bstr,    ; SHA-256(65-byte credential public key)
///                     ? 1: bstr,    ; access document id, up to 16 bytes
///                     ? 2: #6.1(uint) } ; expiry, seconds since the epoch
/// ```
/// The document carries no serial: a lock applies an issuer's lists in the order of their MSO
/// signed time (`RevocationLists.apply`), and LockBench's issuers sign each strictly after the
/// last (`SigningOrder`). The issued time is the MSO's `signed`, the document's expiry its
/// `validUntil`; the MSO has no device key.
public struct RevocationData: Equatable, Sendable {
    public static let currentVersion = 1

    /// Encoded (`doc show --json`) by its name.
    public enum ChangeMode: UInt8, Sendable, CaseIterable, CustomStringConvertible, Encodable {
        /// Erase the reader's list, then add the entries.
        case overwrite = 0
        /// Add the entries to the reader's list.
        case append = 1
        public var description: String { self == .overwrite ? "overwrite" : "append" }
        public func encode(to encoder: Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(description)
        }
    }

    public var changeMode: ChangeMode
    public var entries: [RevocationEntry]
    public var entriesToRemove: [RevocationEntry]

    public init(changeMode: ChangeMode = .overwrite, entries: [RevocationEntry], entriesToRemove: [RevocationEntry] = []) {
        self.changeMode = changeMode; self.entries = entries; self.entriesToRemove = entriesToRemove
    }

    /// As the official tool writes it: empty lists left out.
    public var cbor: CBOR {
        var m: [CBOR: CBOR] = [0: .int(Self.currentVersion), 1: .unsigned(UInt64(changeMode.rawValue))]
        if !entries.isEmpty { m[2] = .array(entries.map(\.cbor)) }
        if !entriesToRemove.isEmpty { m[3] = .array(entriesToRemove.map(\.cbor)) }
        return .map(m)
    }

    public init(cbor: CBOR) throws(DocumentError) {
        do {
            let m = try cbor.asMap("RevocationData")
            let version = try field(m, 0, "RevocationData version").asInt("RevocationData version (key 0)")
            guard version == Self.currentVersion else {
                throw DocumentError(.unsupportedVersion, "revocation data version \(version) (key 0); LockBench reads \(Self.currentVersion)")
            }
            let mode = try field(m, 1, "change mode")
            guard let raw = mode.uint64Value, raw <= 1, let changeMode = ChangeMode(rawValue: UInt8(raw)) else {
                throw DocumentError(.malformed, "change mode (key 1) is \(mode.diagnostic); Aliro defines 0 (OVERWRITE) and 1 (APPEND)")
            }
            func list(_ key: Int, _ what: String) throws -> [RevocationEntry] {
                guard let v = lookup(m, key) else { return [] }
                var out = [RevocationEntry]()
                for e in try v.asArray("\(what) (key \(key))") { out.append(try RevocationEntry(cbor: e)) }
                return out
            }
            self.init(changeMode: changeMode, entries: try list(2, "entries"), entriesToRemove: try list(3, "entries to remove"))
        } catch {
            throw DocumentError.wrap(error, "RevocationData")
        }
    }
}

/// A revocation document ("aliro-r"), carried to offline locks by any phone. LockBench names its
/// element "revocation"; a lock reads the first element of the "aliro-r" namespace whatever its
/// name (the official cases name it as the tester configures, "floor1" by default).
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
        guard let value = document.element(Self.elementIdentifier) ?? document.items.first?.elementValue else {
            throw DocumentError(.malformed, "revocation document has no element")
        }
        self.init(document: document, revocation: try RevocationData(cbor: value))
    }

    init(document: IssuedDocument, revocation: RevocationData) { self.document = document; self.revocation = revocation }

    public init(parsing bytes: [UInt8]) throws(DocumentError) {
        try self.init(document: try IssuedDocument(parsing: bytes, expectedDocType: IssuedDocument.DocType.revocation))
    }

    public func encoded() -> [UInt8] { document.encoded() }
}
