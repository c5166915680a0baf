import ByteCore
import Codecs
import Crypto
import Foundation

/// Which readers an access document opens: a reader group, optionally one reader in it.
public struct ReaderRule: Equatable, Hashable, Sendable {
    /// 16-byte reader group identifier.
    public var groupID: [UInt8]
    /// 16-byte reader sub-identifier; nil = every reader of the group.
    public var subID: [UInt8]?

    public init(groupID: [UInt8], subID: [UInt8]? = nil) throws(DocumentError) {
        guard groupID.count == 16 else { throw DocumentError(.malformed, "reader group id must be 16 bytes, got \(groupID.count)") }
        if let subID, subID.count != 16 { throw DocumentError(.malformed, "reader sub id must be 16 bytes, got \(subID.count)") }
        self.groupID = groupID; self.subID = subID
    }

    public func matches(groupID g: [UInt8], subID s: [UInt8]) -> Bool {
        groupID == g && (subID == nil || subID == s)
    }

    /// `GROUPHEX` or `GROUPHEX:SUBHEX`.
    public var description: String { Hex.encode(groupID) + (subID.map { ":" + Hex.encode($0) } ?? "") }

    public init(parsing text: String) throws(DocumentError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard (1...2).contains(parts.count), let g = Hex.decode(parts[0]) else {
            throw DocumentError(.malformed, "reader \"\(text)\": expected GROUP or GROUP:SUB, each 32 hex digits")
        }
        var s: [UInt8]? = nil
        if parts.count == 2 {
            guard let sub = Hex.decode(parts[1]) else { throw DocumentError(.malformed, "reader \"\(text)\": sub id is not hex") }
            s = sub
        }
        try self.init(groupID: g, subID: s)
    }
}

/// The access rules an issuer grants a credential: the element "access" of an "aliro-a" document.
///
/// ```cddl
/// AccessData = {
///   0: uint,              ; version: 1
///   1: bstr .size (1..16),; id: the document id (audit log, revocation by id)
///   2: [ + ReaderRule ],  ; rules: readers this document opens
///   ? 3: [ + Schedule ],  ; schedules (WeeklySchedule); absent = at any time
///   ? 4: [ + uint ],      ; reader rule ids: rules the reader itself must define
///   ? 5: any,             ; non-access extensions (ignored)
///   ? 6: AccessExtensions ; access extensions (AccessExtension): a critical one is not
///                         ;   understood = refused, a non-critical one skipped
/// }
/// ReaderRule = { 0: bstr .size 16,  ; reader group id
///                ? 1: bstr .size 16 } ; reader sub id (absent: every reader of the group)
/// ```
/// Reader rule ids (key 4) name rules defined on the reader, not in the document; a LockBench
/// lock defines none, so a document naming any is refused by the engine (`wrong_reader`,
/// NFC_RDR_NEG_STEPUP_AD_UNKNOWN_READER_RULE) — decoding keeps them.
public struct AccessData: Equatable, Sendable {
    public static let currentVersion = 1
    public var version: Int
    public var id: [UInt8]
    public var readers: [ReaderRule]
    public var schedules: [WeeklySchedule]
    /// Key 4: ids of rules the reader must define itself (empty: none named).
    public var readerRuleIDs: [UInt64]
    /// Key 6, as read: only non-critical ones survive decoding (a critical one is refused).
    public var extensions: [AccessExtension]

    public init(id: [UInt8], readers: [ReaderRule], schedules: [WeeklySchedule] = [], version: Int = AccessData.currentVersion,
                readerRuleIDs: [UInt64] = [], extensions: [AccessExtension] = []) throws(DocumentError) {
        guard (1...16).contains(id.count) else { throw DocumentError(.malformed, "access document id must be 1–16 bytes, got \(id.count)") }
        guard !readers.isEmpty else { throw DocumentError(.malformed, "an access document must open at least one reader or group") }
        self.version = version; self.id = id; self.readers = readers; self.schedules = schedules
        self.readerRuleIDs = readerRuleIDs; self.extensions = extensions
    }

    public var cbor: CBOR {
        var m: [CBOR: CBOR] = [
            0: .int(version), 1: .bytes(id),
            2: .array(readers.map { r in
                var e: [CBOR: CBOR] = [0: .bytes(r.groupID)]
                if let s = r.subID { e[1] = .bytes(s) }
                return .map(e)
            }),
        ]
        if !schedules.isEmpty { m[3] = .array(schedules.map(\.cbor)) }
        if !readerRuleIDs.isEmpty { m[4] = .array(readerRuleIDs.map { .unsigned($0) }) }
        if !extensions.isEmpty { m[6] = AccessExtension.cbor(extensions) }
        return .map(m)
    }

    public init(cbor: CBOR) throws(DocumentError) {
        do {
            let m = try cbor.asMap("AccessData")
            let version = try field(m, 0, "AccessData version").asInt("AccessData version")
            guard version == Self.currentVersion else {
                throw DocumentError(.unsupportedVersion, "access data version \(version); LockBench reads \(Self.currentVersion)")
            }
            let extensions = lookup(m, 6).map(AccessExtension.entries) ?? []
            if let critical = extensions.first(where: \.critical) {
                throw DocumentError(.unsupportedVersion, "access extension \(critical.description) is critical and not understood")
            }
            var ruleIDs = [UInt64]()
            if let r = lookup(m, 4) {
                for e in try r.asArray("AccessData reader rule ids") {
                    guard let id = e.uint64Value else { throw CBORError(.unexpectedType, "reader rule id: expected unsigned integer, found \(e.kindName)") }
                    ruleIDs.append(id)
                }
            }
            var readers = [ReaderRule]()
            for r in try field(m, 2, "AccessData rules").asArray("AccessData rules") {
                let rm = try r.asMap("ReaderRule")
                readers.append(try ReaderRule(groupID: try field(rm, 0, "reader group id").asBytes("reader group id"),
                                              subID: try lookup(rm, 1)?.asBytes("reader sub id")))
            }
            var schedules = [WeeklySchedule]()
            if let s = lookup(m, 3) { for e in try s.asArray("AccessData schedules") { schedules.append(try WeeklySchedule(cbor: e)) } }
            try self.init(id: try field(m, 1, "AccessData id").asBytes("AccessData id"), readers: readers,
                          schedules: schedules, version: version, readerRuleIDs: ruleIDs, extensions: extensions)
        } catch {
            throw DocumentError.wrap(error, "AccessData")
        }
    }
}

/// An access document ("aliro-a"): the issuer binds a credential's long-term key to access rules
/// for a validity window. Parse with `decode`, then `verify` against the lock's trust store.
public struct AccessDocument: Equatable, Sendable {
    public static let elementIdentifier = "access"
    public var document: IssuedDocument
    public var access: AccessData
    /// The credential long-term public key (65 bytes) the document is bound to.
    public var credentialPublicKey: [UInt8]
    public var validity: IssuedDocument.Validity { document.validity }
    public var id: [UInt8] { access.id }

    public static func issue(access: AccessData, credentialPublicKey: [UInt8], validity: IssuedDocument.Validity,
                             issuerKey: P256.Signing.PrivateKey, issuerCertificate: [UInt8]? = nil,
                             includeKeyID: Bool = true) throws(DocumentError) -> AccessDocument {
        do { _ = try Primitives.signingPublicKey(credentialPublicKey) } catch {
            throw DocumentError(.malformed, "credential public key: \(error.reason)")
        }
        let doc = IssuedDocument.issue(docType: IssuedDocument.DocType.access, elementIdentifier: elementIdentifier,
                                       elementValue: access.cbor, deviceKey: credentialPublicKey, validity: validity,
                                       issuerKey: issuerKey, issuerCertificate: issuerCertificate, includeKeyID: includeKeyID)
        return AccessDocument(document: doc, access: access, credentialPublicKey: credentialPublicKey)
    }

    public init(document: IssuedDocument) throws(DocumentError) {
        guard document.docType == IssuedDocument.DocType.access else {
            throw DocumentError(.wrongDocType, "docType \"\(document.docType)\" is not an access document")
        }
        guard let value = document.element(Self.elementIdentifier) else {
            throw DocumentError(.malformed, "access document has no element \"\(Self.elementIdentifier)\"")
        }
        guard let key = document.deviceKey else { throw DocumentError(.malformed, "access document MSO has no device key") }
        self.init(document: document, access: try AccessData(cbor: value), credentialPublicKey: key)
    }

    init(document: IssuedDocument, access: AccessData, credentialPublicKey: [UInt8]) {
        self.document = document; self.access = access; self.credentialPublicKey = credentialPublicKey
    }

    public init(parsing bytes: [UInt8]) throws(DocumentError) {
        try self.init(document: try IssuedDocument(parsing: bytes, expectedDocType: IssuedDocument.DocType.access))
    }

    public func encoded() -> [UInt8] { document.encoded() }
}
