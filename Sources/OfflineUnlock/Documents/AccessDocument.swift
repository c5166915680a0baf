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
    /// Aliro AccessRule allow / deny schedule ids as bit masks (bit n: schedule n of the
    /// document's list, n 0…7; the tool's `allow_schedule_id_bits`): with allow ids the rule opens
    /// only inside one of them, and never inside a deny one. 0: none named.
    public var allowScheduleIDs: UInt8 = 0
    public var denyScheduleIDs: UInt8 = 0
    /// Aliro AccessRule capabilities (bit 0 secure, 1 unsecure, 2 toggle, 3 momentary unsecure,
    /// 4 extended momentary unsecure, 5 payment): nil = absent, the rule grants every action of
    /// the readers it names (LockBench's rule). The lock's action on a grant is an unsecure
    /// (momentary: it relocks after `relockTime`), which bits 1–4 grant
    /// (NFC_RDR_NEG_STEPUP_AD_NO_ACCESS_RULE_FOR_READER_ACTION: a rule of bit 12 alone grants nothing).
    public var capabilities: UInt32?
    public static let unsecureCapabilities: UInt32 = 0b1_1110

    /// Whether the rule grants the lock's action (an unsecure).
    public var grantsUnsecure: Bool { capabilities.map { $0 & Self.unsecureCapabilities != 0 } ?? true }

    public init(groupID: [UInt8], subID: [UInt8]? = nil) throws(DocumentError) {
        guard groupID.count == 16 else { throw DocumentError(.malformed, "reader group id must be 16 bytes, got \(groupID.count)") }
        if let subID, subID.count != 16 { throw DocumentError(.malformed, "reader sub id must be 16 bytes, got \(subID.count)") }
        self.groupID = groupID; self.subID = subID
    }

    public func matches(groupID g: [UInt8], subID s: [UInt8]) -> Bool {
        groupID == g && (subID == nil || subID == s)
    }

    /// `GROUPHEX` or `GROUPHEX:SUBHEX`.
    public var description: String {
        Hex.encode(groupID) + (subID.map { ":" + Hex.encode($0) } ?? "")
            + (allowScheduleIDs == 0 ? "" : " allow schedules \(Self.ids(allowScheduleIDs))")
            + (denyScheduleIDs == 0 ? "" : " deny schedules \(Self.ids(denyScheduleIDs))")
            + (capabilities.map { " capabilities 0x" + String($0, radix: 16, uppercase: true) } ?? "")
    }

    /// The schedule ids of a bit mask, in words (`0, 2`).
    static func ids(_ mask: UInt8) -> String { (0..<8).filter { mask & (1 << $0) != 0 }.map(String.init).joined(separator: ", ") }

    /// Whether this rule's schedules let it open at `time`: inside an allow schedule (when it
    /// names any) and in no deny schedule in force. nil when they do; else why not, in words.
    func scheduleRefusal(_ schedules: [AccessSchedule], at time: Date, utcOffsetMinutes: Int) -> String? {
        func named(_ mask: UInt8) -> [(Int, AccessSchedule)] {
            (0..<8).filter { mask & (1 << $0) != 0 && $0 < schedules.count }.map { ($0, schedules[$0]) }
        }
        if let (id, s) = named(denyScheduleIDs).first(where: { $0.1.inForce(time, utcOffsetMinutes: utcOffsetMinutes) }) {
            return "deny schedule \(id) (\(s)) is in force"
        }
        if allowScheduleIDs != 0, !named(allowScheduleIDs).contains(where: { $0.1.contains(time, utcOffsetMinutes: utcOffsetMinutes) }) {
            return "outside its allow schedules \(Self.ids(allowScheduleIDs)) (\(named(allowScheduleIDs).map { "\($0.1)" }.joined(separator: "; ")))"
        }
        return nil
    }

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
///                ? 1: bstr .size 16,  ; reader sub id (absent: every reader of the group)
///                ? 2: uint .le 255,   ; allow schedule ids (bit n: schedule n), Aliro AccessRule 1
///                ? 3: uint .le 255,   ; deny schedule ids, Aliro AccessRule 2
///                ? 4: uint .le 0xFFFFFFFF } ; capabilities, Aliro AccessRule 0 (absent: all)
/// Schedule = WeeklySchedule / AliroSchedule   ; at most 64
/// ```
/// Weekly schedules no rule names are document-wide windows (LockBench's rule: one must contain
/// now). A rule naming schedule ids opens only as they say (`ReaderRule.scheduleRefusal`); a rule
/// naming an id beyond the list is malformed (the tool's `AccessData.is_valid`). Unknown keys are
/// skipped everywhere.
/// Reader rule ids (key 4) name rules defined on the reader, not in the document; a LockBench
/// lock defines none, so a document naming any is refused by the engine (`wrong_reader`,
/// NFC_RDR_NEG_STEPUP_AD_UNKNOWN_READER_RULE) — decoding keeps them.
public struct AccessData: Equatable, Sendable {
    public static let currentVersion = 1
    public var version: Int
    public var id: [UInt8]
    public var readers: [ReaderRule]
    /// Key 3 as written: weekly windows and Aliro Schedules, in order (rules name them by index).
    public var scheduleEntries: [AccessSchedule]
    /// The weekly windows of key 3.
    public var schedules: [WeeklySchedule] {
        scheduleEntries.compactMap { if case .weekly(let w) = $0 { return w } else { return nil } }
    }
    /// The weekly windows no rule names by id: each document-wide (one must contain now).
    public var documentWideSchedules: [WeeklySchedule] {
        let named = readers.reduce(UInt8(0)) { $0 | $1.allowScheduleIDs | $1.denyScheduleIDs }
        return scheduleEntries.enumerated().compactMap { i, e in
            if case .weekly(let w) = e, i >= 8 || named & (1 << UInt8(i)) == 0 { return w } else { return nil }
        }
    }
    public static let maxSchedules = 64
    /// Key 4: ids of rules the reader must define itself (empty: none named).
    public var readerRuleIDs: [UInt64]
    /// Key 6, as read: only non-critical ones survive decoding (a critical one is refused).
    public var extensions: [AccessExtension]

    /// `scheduleEntries`, when given, is key 3 as written and `schedules` is ignored.
    public init(id: [UInt8], readers: [ReaderRule], schedules: [WeeklySchedule] = [], version: Int = AccessData.currentVersion,
                readerRuleIDs: [UInt64] = [], extensions: [AccessExtension] = [], scheduleEntries: [AccessSchedule]? = nil) throws(DocumentError) {
        guard (1...16).contains(id.count) else { throw DocumentError(.malformed, "access document id must be 1–16 bytes, got \(id.count)") }
        guard !readers.isEmpty else { throw DocumentError(.malformed, "an access document must open at least one reader or group") }
        let entries = scheduleEntries ?? schedules.map { .weekly($0) }
        guard entries.count <= Self.maxSchedules else { throw DocumentError(.malformed, "\(entries.count) schedules; at most \(Self.maxSchedules)") }
        for r in readers {
            let named = r.allowScheduleIDs | r.denyScheduleIDs
            if let id = (0..<8).first(where: { named & (1 << $0) != 0 && $0 >= entries.count }) {
                throw DocumentError(.malformed, "rule \(r) names schedule id \(id), the document has \(entries.count) schedule(s)")
            }
        }
        self.version = version; self.id = id; self.readers = readers; self.scheduleEntries = entries
        self.readerRuleIDs = readerRuleIDs; self.extensions = extensions
    }

    public var cbor: CBOR {
        var m: [CBOR: CBOR] = [
            0: .int(version), 1: .bytes(id),
            2: .array(readers.map { r in
                var e: [CBOR: CBOR] = [0: .bytes(r.groupID)]
                if let s = r.subID { e[1] = .bytes(s) }
                if r.allowScheduleIDs != 0 { e[2] = .unsigned(UInt64(r.allowScheduleIDs)) }
                if r.denyScheduleIDs != 0 { e[3] = .unsigned(UInt64(r.denyScheduleIDs)) }
                if let c = r.capabilities { e[4] = .unsigned(UInt64(c)) }
                return .map(e)
            }),
        ]
        if !scheduleEntries.isEmpty { m[3] = .array(scheduleEntries.map(\.cbor)) }
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
                var rule = try ReaderRule(groupID: try field(rm, 0, "reader group id").asBytes("reader group id"),
                                          subID: try lookup(rm, 1)?.asBytes("reader sub id"))
                func ids(_ key: Int, _ what: String) throws -> UInt8 {
                    guard let v = lookup(rm, key) else { return 0 }
                    guard let n = v.uint64Value, n <= 0xFF else {
                        throw DocumentError(.malformed, "ReaderRule \(what) (key \(key)) must be a bit mask of schedule ids 0–7 (uint ≤ 255), found \(v.kindName)")
                    }
                    return UInt8(n)
                }
                rule.allowScheduleIDs = try ids(2, "allow schedule ids")
                rule.denyScheduleIDs = try ids(3, "deny schedule ids")
                if let v = lookup(rm, 4) {
                    guard let n = v.uint64Value, n <= UInt64(UInt32.max) else {
                        throw DocumentError(.malformed, "ReaderRule capabilities (key 4) must be an unsigned integer ≤ 0xFFFFFFFF, found \(v.kindName)")
                    }
                    rule.capabilities = UInt32(n)
                }
                readers.append(rule)
            }
            var entries = [AccessSchedule]()
            if let s = lookup(m, 3) {
                let list = try s.asArray("AccessData schedules")
                guard list.count <= Self.maxSchedules else { throw DocumentError(.malformed, "AccessData has \(list.count) schedules; at most \(Self.maxSchedules)") }
                for e in list { entries.append(try AccessSchedule(cbor: e)) }
            }
            try self.init(id: try field(m, 1, "AccessData id").asBytes("AccessData id"), readers: readers,
                          version: version, readerRuleIDs: ruleIDs, extensions: extensions, scheduleEntries: entries)
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
                             includeKeyID: Bool = true, timeVerificationRequired: Bool = false) throws(DocumentError) -> AccessDocument {
        do { _ = try Primitives.signingPublicKey(credentialPublicKey) } catch {
            throw DocumentError(.malformed, "credential public key: \(error.reason)")
        }
        let doc = IssuedDocument.issue(docType: IssuedDocument.DocType.access, elementIdentifier: elementIdentifier,
                                       elementValue: access.cbor, deviceKey: credentialPublicKey, validity: validity,
                                       issuerKey: issuerKey, issuerCertificate: issuerCertificate, includeKeyID: includeKeyID,
                                       timeVerificationRequired: timeVerificationRequired)
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
