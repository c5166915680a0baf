#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AccessProtocol
import ByteCore
import Codecs
import Foundation
import Synchronization
import OfflineUnlock

/// One audit record: a JSON object on its own line.
///
/// ```json
/// {"credential":"d001","decision":"grant","seq":1,"time":"2026-03-02T09:00:00Z",
///  "transaction":"5a5a…","transport":"nfc","mac":"<64 hex>"}
/// {"credential":null,"decision":"deny","detail":"…","layer":"engine","reason":"unknown_credential",…,"mac":"…"}
/// ```
/// `mac` = HMAC-SHA256(key, previous mac (32 zero bytes for seq 1) ‖ the line's bytes without
/// the `,"mac":"…"` member). The key is `audit.key` (32 random bytes, mode 0600) in the state
/// directory. Editing, removing or reordering a line breaks the chain from that line on.
public struct AuditEntry: Codable, Equatable, Sendable {
    public var seq: UInt64
    /// RFC 3339, UTC.
    public var time: String
    /// The access document id (hex) for grants and denials after the document was read; nil before.
    public var credential: String?
    public var transport: String
    /// "grant" or "deny".
    public var decision: String
    /// The refusal's wire code for denials (`Refusal.code`: `expired`, `jammed`, `link_lost`…).
    public var reason: String?
    /// The layer that refused (engine, protocol, transport, lock); absent in entries written
    /// before layers were recorded.
    public var layer: String?
    public var detail: String?
    /// The 16-byte AUTH0 transaction id, hex.
    public var transaction: String
    /// What this entry changed in the lock's state (the journal: see `StateDelta`); nil when nothing.
    public var state: StateDelta?

    /// A transaction's outcome: a denial records its refusal's code, layer and detail.
    public init(seq: UInt64, time: Date, credential: String?, transport: RadioInterface, decision: TransactionDecision,
                transaction: [UInt8]) {
        self.seq = seq
        self.time = RFC3339.format(time)
        self.transport = transport.rawValue
        self.transaction = Hex.encode(transaction)
        switch decision {
        case .grant(let id):
            self.decision = "grant"; self.credential = id; self.reason = nil; self.layer = nil; self.detail = nil
        case .deny(let refusal):
            self.decision = "deny"; self.credential = credential
            self.reason = refusal.code; self.layer = refusal.layer.rawValue; self.detail = refusal.detail
        }
    }

    /// A change to the lock's revocation lists, made during the transaction `transaction`:
    /// `decision` is `"revocation_list"` and `detail` says which issuer's list changed and how.
    public init(seq: UInt64, time: Date, revocationChange change: RevocationChange, transport: RadioInterface, transaction: [UInt8]) {
        self.seq = seq
        self.time = RFC3339.format(time)
        self.transport = transport.rawValue
        self.transaction = Hex.encode(transaction)
        self.decision = Self.revocationListEvent
        self.credential = nil; self.reason = nil; self.layer = nil
        self.detail = change.description
    }

    /// A remote keyless entry request (BLE `02 04`) a granted transaction carried: `decision` is
    /// `"rke"`, `detail` says the action and the bolt after it (`secure: secured`), or why the
    /// bolt did not move (`unsecure: not moved: the bolt is jammed`).
    public init(seq: UInt64, time: Date, remoteAction action: RemoteAction, credential: String?, transport: RadioInterface,
                transaction: [UInt8], detail: String) {
        self.seq = seq
        self.time = RFC3339.format(time)
        self.transport = transport.rawValue
        self.transaction = Hex.encode(transaction)
        self.decision = Self.remoteActionEvent
        self.credential = credential; self.reason = nil; self.layer = nil
        self.detail = "\(action.name): \(detail)"
    }

    /// The `decision` of an entry that records an RKE request acted on (or not), after its grant.
    public static let remoteActionEvent = "rke"
    /// The `decision` of an entry that records an RKE request the reader refused (`detail`: why).
    public static let remoteActionRefusedEvent = "rke_refused"
    /// The `decision` of an entry that records a revocation list change, not a transaction's outcome.
    public static let revocationListEvent = "revocation_list"
    /// The `decision` of the entry a lock writes when it opened a damaged log: what was wrong and
    /// what was set aside. Its `seq` continues after the highest number ever used (so none is
    /// reused) — the one gap in numbering the chain allows. It stays reported until an
    /// `auditAcknowledgedEvent` follows it.
    public static let auditDamageEvent = "audit_damage"
    /// The `decision` of the entry `lockbench audit acknowledge` writes: an operator saw the damage.
    public static let auditAcknowledgedEvent = "audit_acknowledged"
    /// The `decision` of the entry `lockbench lock reset` writes: the state was started afresh.
    public static let lockResetEvent = "lock_reset"

    /// The `decision` of the entry a lock writes when a snapshot of its state could not be written
    /// (issue 20 §2): why, and whether the lock stopped granting until one can be.
    public static let snapshotFailedEvent = "snapshot_failed"
    /// The `decision` of the entry a lock writes when a snapshot is written again after one failed.
    public static let snapshotWrittenEvent = "snapshot_written"

    /// An entry about the log or the lock itself (no transaction): `decision` is `event`.
    public init(seq: UInt64, time: Date, event: String, detail: String) {
        self.seq = seq
        self.time = RFC3339.format(time)
        self.transport = "lock"
        self.transaction = ""
        self.decision = event
        self.credential = nil; self.reason = nil; self.layer = nil
        self.detail = detail
    }

    enum CodingKeys: String, CodingKey { case seq, time, credential, transport, decision, reason, layer, detail, transaction, state }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(seq, forKey: .seq)
        try c.encode(time, forKey: .time)
        try c.encode(credential, forKey: .credential)      // explicit null: the field is always there
        try c.encode(transport, forKey: .transport)
        try c.encode(decision, forKey: .decision)
        try c.encodeIfPresent(reason, forKey: .reason)
        try c.encodeIfPresent(layer, forKey: .layer)
        try c.encodeIfPresent(detail, forKey: .detail)
        try c.encode(transaction, forKey: .transaction)
        try c.encodeIfPresent(state, forKey: .state)
    }
}

/// The end of a verified chain: the last sequence number and its MAC. Persisted with the lock's
/// state so that whole entries cut from the end are noticed too.
public struct AuditHead: Codable, Equatable, Sendable {
    public var seq: UInt64
    public var mac: String
    public static let empty = AuditHead(seq: 0, mac: Hex.encode([UInt8](repeating: 0, count: 32)))
}

/// What was wrong with the log found on disk.
public struct AuditDamage: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The last line is incomplete (a write cut short).
        case truncatedLine = "truncated_line"
        /// A line's MAC does not verify: edited, reordered or foreign.
        case badMAC = "bad_mac"
        /// A line that is not an audit entry.
        case malformedLine = "malformed_line"
        /// Sequence numbers do not follow on.
        case sequenceGap = "sequence_gap"
        /// The log ends before the last entry the lock recorded as acknowledged.
        case missingEntries = "missing_entries"
    }
    public var kind: Kind
    /// 1-based line number where the valid prefix ends (the first bad line).
    public var line: Int
    public var validEntries: Int
    public var droppedBytes: Int
    public var message: String
    public var description: String { "\(kind.rawValue) at line \(line): \(message) (\(validEntries) valid entries kept, \(droppedBytes) bytes set aside)" }
}

/// Append-only audit log with an HMAC chain; every `append` is on disk (fsync) when it returns.
/// Writes to the descriptor, the chain head, the length and the broken flag happen with `state`
/// held: appends from several radios' threads are one after another.
public final class AuditLog: Sendable {
    public static let fileName = "audit.log"
    public static let keyFileName = "audit.key"

    public let path: String
    private let key: [UInt8]
    /// Opened in `init`, closed in `deinit`; written only with `state` held.
    private let fd: Int32
    private struct State {
        var head: AuditHead
        /// Bytes of whole, verified entries: the file is cut back to this when an append fails.
        var length: Int
        /// Set when a failed append could not be rolled back: nothing more is appended (every
        /// decision becomes `storage_failure`) until the lock is reopened, whose scan cuts the tail.
        var broken: String?
        /// `audit_damage` entries no `audit_acknowledged` entry has followed yet (this open's included).
        var unacknowledgedDamage: [AuditEntry]
    }
    private let state: Mutex<State>
    private let io: FileIO
    /// Set when opening found (and cut off) a damaged tail; the bad bytes are kept beside the log
    /// in `audit.log.damaged-<time>`, and an `audit_damage` entry says so in the log itself.
    public let damage: AuditDamage?
    /// `audit_damage` entries no `audit_acknowledged` entry has followed yet (this open's included).
    public var unacknowledgedDamage: [AuditEntry] { state.withLock { $0.unacknowledgedDamage } }
    /// The verified entries after the head the lock recorded in its snapshot (`expectedHead`), in
    /// order: the journal records whose state deltas recovery replays. Empty when the recorded
    /// head is not in the chain (the log was replaced or cut): nothing foreign is replayed.
    public let journalTail: [AuditEntry]

    /// Opens (creating if needed) the log in `directory`, verifies the chain, keeps the valid prefix.
    /// `expectedHead` is the last acknowledged entry the lock recorded; a log ending before it is
    /// reported as `missingEntries`.
    /// `now` is the lock's time, for the `audit_damage` entry written when damage is found.
    public convenience init(directory: String, expectedHead: AuditHead? = nil, io: FileIO = .system, now: Date = Date()) throws(LockError) {
        let history = Self.hasHistory(directory: directory) || (expectedHead?.seq ?? 0) > 0
        try self.init(directory: directory, key: try Self.openKey(directory + "/" + Self.keyFileName, history: history),
                      expectedHead: expectedHead, io: io, now: now)
    }

    /// The 32-byte audit key at `path` (the lock configuration's `auditKeyFile`, by default
    /// `STATE/audit.key`), created mode 0600 when missing and the lock has no `history` yet. A
    /// missing key with a history is refused: a new key would make every entry look forged. A key
    /// readable by group or others is refused too (`chmod 600`).
    public static func openKey(_ path: String, history: Bool) throws(LockError) -> [UInt8] {
        var st = stat()
        if stat(path, &st) == 0 {
            guard st.st_mode & 0o077 == 0 else {
                throw LockError(.invalidIdentity, "audit key \(path) is accessible by others (mode \(String(st.st_mode & 0o777, radix: 8))); it must be readable by its owner only: chmod 600 \(path)")
            }
            guard let k = try DurableFile.read(path), k.count == 32 else { throw LockError(.corruptState, "\(path) is not 32 bytes") }
            return k
        }
        guard !history else {
            throw LockError(.corruptState, "audit key \(path) is missing but the lock has an audit history; restore the key file, or start afresh with `lockbench lock reset`")
        }
        let key = Primitives.randomBytes(32)
        let dir = (path as NSString).deletingLastPathComponent
        if !dir.isEmpty { try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        try DurableFile.writeAtomically(key, to: path, mode: 0o600)
        return key
    }

    /// Opens the log in `directory` with `key`.
    public init(directory: String, key: [UInt8], expectedHead: AuditHead? = nil, io: FileIO = .system, now: Date = Date()) throws(LockError) {
        self.io = io
        self.key = key
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = directory + "/" + Self.fileName
        let existing = try DurableFile.read(path) ?? []
        let scan = Self.scan(existing, key: key)
        // No entry can follow the largest sequence number: refused here, not trapped on at `+ 1`.
        for (what, seq) in [("the log's last entry", scan.head.seq), ("the head the state records", expectedHead?.seq ?? 0)] where seq == UInt64.max {
            throw LockError(.corruptState, "\(path): \(what) has seq \(seq), the largest there is, so no entry can follow (a forged or corrupt file); set the log aside and start afresh with `lockbench lock reset --config FILE --reason TEXT`")
        }
        let damage = scan.damage ?? expectedHead.flatMap { Self.check(scan, against: $0) }
        var aside: String?
        if let d = damage, d.droppedBytes > 0 {
            let name = path + ".damaged-\(Int(Date().timeIntervalSince1970))"
            try DurableFile.writeAtomically(Array(existing[scan.validBytes...]), to: name)
            guard truncate(path, off_t(scan.validBytes)) == 0 else { throw LockError(.io, DurableFile.errnoText("truncate", path)) }
            aside = name
        }
        self.damage = damage
        let recorded = expectedHead ?? .empty
        journalTail = recorded.seq == 0 || scan.macs[recorded.seq] == recorded.mac
            ? scan.entries.filter { $0.seq > recorded.seq } : []
        var opened = State(head: scan.head, length: scan.validBytes, unacknowledgedDamage: scan.unacknowledgedDamage)
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw LockError(.io, DurableFile.errnoText("open", path)) }
        do throws(LockError) {
            guard fsync(fd) == 0 else { throw LockError(.io, DurableFile.errnoText("fsync", path)) }
            try DurableFile.syncDirectory(of: path)
            if let d = damage {
                // Said in the log itself, numbered past every number used before (never reused).
                let highest = max(scan.head.seq, expectedHead?.seq ?? 0, Self.highestSeq(in: existing[scan.validBytes...]))
                var entry = AuditEntry(seq: 0, time: now, event: AuditEntry.auditDamageEvent,
                                       detail: d.description + (aside.map { "; set aside in \(($0 as NSString).lastPathComponent)" } ?? ""))
                entry.seq = highest + 1
                let (line, mac) = try Self.line(for: entry, previousMAC: Hex.decode(opened.head.mac)!, key: key)
                try DurableFile.writeAll(fd, line, path: path, io: io)
                guard io.fsync(fd) == 0 else { throw LockError(.io, DurableFile.errnoText("fsync", path)) }
                opened.head = AuditHead(seq: entry.seq, mac: Hex.encode(mac))
                opened.length += line.count
                opened.unacknowledgedDamage.append(entry)
            }
        } catch {
            close(fd)
            throw error
        }
        self.fd = fd
        state = Mutex(opened)
    }

    /// Damage found by comparing a verified log with the head the lock recorded: entries cut from
    /// the end (or the whole log emptied or deleted), or a different entry where the recorded one was.
    static func check(_ scan: Scan, against expected: AuditHead) -> AuditDamage? {
        if scan.head.seq < expected.seq {
            return AuditDamage(kind: .missingEntries, line: scan.entries.count + 1, validEntries: scan.entries.count, droppedBytes: 0,
                               message: scan.entries.isEmpty
                                ? "the log is empty or was deleted but the lock recorded seq \(expected.seq)"
                                : "log ends at seq \(scan.head.seq) but seq \(expected.seq) was acknowledged")
        }
        if expected.seq > 0, let mac = scan.macs[expected.seq], mac != expected.mac {
            return AuditDamage(kind: .badMAC, line: scan.entries.firstIndex { $0.seq == expected.seq }.map { $0 + 1 } ?? 0,
                               validEntries: scan.entries.count, droppedBytes: 0,
                               message: "entry seq \(expected.seq) is not the one the lock recorded (the log was replaced)")
        }
        return nil
    }

    /// The highest `"seq":N` in bytes that did not verify, even in a line cut short (so the
    /// numbering continues past every number that may have been used).
    static func highestSeq(in bytes: ArraySlice<UInt8>) -> UInt64 {
        let marker = Array("\"seq\":".utf8)
        var highest: UInt64 = 0, i = bytes.startIndex
        while let at = bytes[i...].firstIndex(of: marker[0]) {
            i = at + 1
            guard bytes[at...].starts(with: marker) else { continue }
            var n: UInt64 = 0, j = at + marker.count, digits = 0
            while j < bytes.endIndex, (0x30...0x39).contains(bytes[j]), digits < 19 {
                n = n * 10 + UInt64(bytes[j] - 0x30); j += 1; digits += 1
            }
            if digits > 0 { highest = max(highest, n) }
        }
        return highest
    }

    deinit { close(fd) }

    /// Whether `directory` holds audit entries (a lock with a history).
    public static func hasHistory(directory: String) -> Bool {
        ((try? FileManager.default.attributesOfItem(atPath: directory + "/" + fileName)[.size] as? NSNumber)?.intValue ?? 0) > 0
    }

    public var head: AuditHead { state.withLock { $0.head } }

    /// Appends one entry and returns it once it is on disk.
    @discardableResult
    public func append(time: Date, credential: String?, transport: RadioInterface, decision: TransactionDecision,
                       transaction: [UInt8]) throws(LockError) -> AuditEntry {
        try append([AuditEntry(seq: 0, time: time, credential: credential, transport: transport,
                               decision: decision, transaction: transaction)])[0]
    }

    /// Where the log ends now; `rollback(to:)` cuts it back there.
    public struct Mark: Equatable, Sendable {
        public var head: AuditHead
        var length: Int
    }

    public var mark: Mark { state.withLock { Mark(head: $0.head, length: $0.length) } }

    /// Appends `drafts` in order — each numbered after the last, whatever its `seq` — with one
    /// write and one fsync, and returns them once they are on disk. When the write or the fsync
    /// fails (a full disk), the file is cut back to its last whole entry, so no fragment is left
    /// and nothing is recorded; the error is thrown.
    @discardableResult
    public func append(_ drafts: [AuditEntry]) throws(LockError) -> [AuditEntry] {
        try state.withLock { (s: inout State) throws(LockError) -> [AuditEntry] in try append(drafts, to: &s) }
    }

    private func append(_ drafts: [AuditEntry], to s: inout State) throws(LockError) -> [AuditEntry] {
        if let broken = s.broken { throw LockError(.io, "the audit log is not writable since an earlier failure (\(broken)); restart the lock") }
        var head = s.head, bytes = [UInt8](), entries = [AuditEntry]()
        for var entry in drafts {
            guard head.seq < UInt64.max else { throw LockError(.corruptState, "\(path): seq \(head.seq) is the largest there is; no entry can follow. Start afresh with `lockbench lock reset --config FILE --reason TEXT`") }
            entry.seq = head.seq + 1
            let (line, mac) = try Self.line(for: entry, previousMAC: Hex.decode(head.mac)!, key: key)
            bytes += line
            head = AuditHead(seq: entry.seq, mac: Hex.encode(mac))
            entries.append(entry)
        }
        do throws(LockError) {
            try DurableFile.writeAll(fd, bytes, path: path, io: io)
            guard io.fsync(fd) == 0 else { throw LockError(.io, DurableFile.errnoText("fsync", path)) }
        } catch {
            cutBack(to: s.length, after: error, &s)
            throw error
        }
        s.head = head
        s.length += bytes.count
        if entries.contains(where: { $0.decision == AuditEntry.auditAcknowledgedEvent }) { s.unacknowledgedDamage = [] }
        return entries
    }

    /// Removes the entries appended after `mark` (their decision could not be made durable as a
    /// whole, e.g. the state write after them failed): the log then says they never happened.
    public func rollback(to mark: Mark) throws(LockError) {
        try state.withLock { (s: inout State) throws(LockError) in
            guard mark.length <= s.length else { return }
            cutBack(to: mark.length, after: nil, &s)
            if let broken = s.broken { throw LockError(.io, "cannot roll the audit log back: \(broken)") }
            s.head = mark.head
            s.length = mark.length
        }
    }

    /// ftruncate + fsync to `good` (with `state` held); when that fails too, the log is `broken`.
    private func cutBack(to good: Int, after error: LockError?, _ s: inout State) {
        if ftruncate(fd, off_t(good)) != 0 || io.fsync(fd) != 0 {
            s.broken = "\(error?.reason ?? "rollback"), then \(DurableFile.errnoText("truncate", path))"
        }
    }

    /// The line for `entry` after the line whose MAC is `previousMAC`: its JSON (`jsonBody`), the
    /// MAC over it, then the MAC as its last member.
    static func line(for entry: AuditEntry, previousMAC: [UInt8], key: [UInt8]) throws(LockError) -> (line: [UInt8], mac: [UInt8]) {
        let body: [UInt8]                                       // `{…}`
        do { body = try entry.jsonBody() } catch {
            throw LockError(.invalidInput, "audit entry \(entry.seq) cannot be written: \(error)")
        }
        let mac = Primitives.hmacSHA256(key: key, message: previousMAC + body)
        var line = Array(body.dropLast())
        line += Array(",\"mac\":\"\(Hex.encode(mac))\"}\n".utf8)
        return (line, mac)
    }

    struct Scan {
        var entries: [AuditEntry] = []
        var head = AuditHead.empty
        var validBytes = 0
        var damage: AuditDamage?
        /// Each verified entry's MAC (hex) by seq.
        var macs: [UInt64: String] = [:]
        var unacknowledgedDamage: [AuditEntry] = []
    }

    /// Verifies `bytes` line by line; stops at the first bad line.
    static func scan(_ bytes: [UInt8], key: [UInt8]) -> Scan {
        var s = Scan()
        var start = 0
        var lineNumber = 0
        let macSuffixLength = ",\"mac\":\"".utf8.count + 64 + 2   // ,"mac":"<64>"}
        func fail(_ kind: AuditDamage.Kind, _ message: String) {
            s.damage = AuditDamage(kind: kind, line: lineNumber, validEntries: s.entries.count,
                                   droppedBytes: bytes.count - s.validBytes, message: message)
        }
        while start < bytes.count {
            lineNumber += 1
            guard let nl = bytes[start...].firstIndex(of: 0x0A) else {
                fail(.truncatedLine, "the last line has no newline (a write was cut short)")
                return s
            }
            let line = Array(bytes[start..<nl])
            guard line.count > macSuffixLength,
                  let macHex = String(bytes: line[(line.count - 66)..<(line.count - 2)], encoding: .utf8),
                  let mac = Hex.decode(macHex), mac.count == 32,
                  Array(line[(line.count - macSuffixLength)..<(line.count - 66)]) == Array(",\"mac\":\"".utf8),
                  line.last == UInt8(ascii: "}") else {
                fail(.malformedLine, "not an audit entry with a trailing mac")
                return s
            }
            let body = Array(line[..<(line.count - macSuffixLength)]) + [UInt8(ascii: "}")]
            let expected = Primitives.hmacSHA256(key: key, message: Hex.decode(s.head.mac)! + body)
            guard Primitives.constantTimeEqual(expected, mac) else {
                fail(.badMAC, "MAC does not verify (entry edited, reordered, or written with another key)")
                return s
            }
            let entry: AuditEntry
            do { entry = try JSONDecoder().decode(AuditEntry.self, from: Data(body)) } catch {
                fail(.malformedLine, "MAC verifies but the JSON is not an audit entry: \(LockConfiguration.describe(error, decoding: AuditEntry.self, in: Data(body)))")
                return s
            }
            guard (s.head.seq < UInt64.max && entry.seq == s.head.seq + 1) || (entry.decision == AuditEntry.auditDamageEvent && entry.seq > s.head.seq) else {
                fail(.sequenceGap, "seq \(entry.seq) follows \(s.head.seq)")
                return s
            }
            s.entries.append(entry)
            s.head = AuditHead(seq: entry.seq, mac: Hex.encode(mac))
            s.macs[entry.seq] = s.head.mac
            if entry.decision == AuditEntry.auditDamageEvent { s.unacknowledgedDamage.append(entry) }
            if entry.decision == AuditEntry.auditAcknowledgedEvent { s.unacknowledgedDamage = [] }
            start = nl + 1
            s.validBytes = start
        }
        return s
    }

    /// What `verify` finds.
    public struct Verification: Sendable {
        public var entries: [AuditEntry]
        /// Damage in the log as it is now, or against the head the lock recorded.
        public var damage: AuditDamage?
        /// Damage found earlier (`audit_damage` entries) that no operator has acknowledged.
        public var unacknowledgedDamage: [AuditEntry]
        /// Intact and nothing left to acknowledge.
        public var isClean: Bool { damage == nil && unacknowledgedDamage.isEmpty }
    }

    /// Reads and verifies a log without changing it (for `lockbench audit verify` and tests).
    /// `expectedHead` is the head the lock recorded (`state.json`): a log that ends before it, or
    /// holds another entry there, is damaged even if its chain verifies.
    public static func verify(directory: String, expectedHead: AuditHead?, keyFile: String? = nil) throws(LockError) -> Verification {
        let log = try DurableFile.read(directory + "/" + fileName) ?? []
        let keyPath = keyFile ?? directory + "/" + keyFileName
        guard let key = try DurableFile.read(keyPath), key.count == 32 else {
            if log.isEmpty, (expectedHead?.seq ?? 0) == 0 { return Verification(entries: [], damage: nil, unacknowledgedDamage: []) }
            throw LockError(.corruptState, "no 32-byte audit key \(keyPath), but the lock has an audit history")
        }
        let scan = Self.scan(log, key: key)
        return Verification(entries: scan.entries, damage: scan.damage ?? expectedHead.flatMap { check(scan, against: $0) },
                            unacknowledgedDamage: scan.unacknowledgedDamage)
    }

    /// `verify` as (entries, damage), the damage including unacknowledged earlier damage.
    public static func verify(directory: String) throws(LockError) -> (entries: [AuditEntry], damage: AuditDamage?) {
        let v = try verify(directory: directory, expectedHead: nil)
        return (v.entries, v.damage)
    }
}
