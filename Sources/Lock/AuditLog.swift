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

    enum CodingKeys: String, CodingKey { case seq, time, credential, transport, decision, reason, layer, detail, transaction }

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
public final class AuditLog: @unchecked Sendable {
    public static let fileName = "audit.log"
    public static let keyFileName = "audit.key"

    public let path: String
    private let key: [UInt8]
    private var fd: Int32
    private var _head: AuditHead
    private let mutex = NSLock()
    /// Set when opening found (and cut off) a damaged tail; the bad bytes are kept beside the log
    /// in `audit.log.damaged-<time>`.
    public let damage: AuditDamage?

    /// Opens (creating if needed) the log in `directory`, verifies the chain, keeps the valid prefix.
    /// `expectedHead` is the last acknowledged entry the lock recorded; a log ending before it is
    /// reported as `missingEntries`.
    public init(directory: String, expectedHead: AuditHead? = nil) throws(LockError) {
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let keyPath = directory + "/" + Self.keyFileName
        if let k = try DurableFile.read(keyPath) {
            guard k.count == 32 else { throw LockError(.corruptState, "\(keyPath) is not 32 bytes") }
            key = k
        } else {
            key = Primitives.randomBytes(32)
            try DurableFile.writeAtomically(key, to: keyPath, mode: 0o600)
        }
        path = directory + "/" + Self.fileName
        let existing = try DurableFile.read(path) ?? []
        let scan = Self.scan(existing, key: key)
        var damage = scan.damage
        if damage == nil, let expected = expectedHead, scan.head.seq < expected.seq {
            damage = AuditDamage(kind: .missingEntries, line: scan.entries.count + 1, validEntries: scan.entries.count,
                                 droppedBytes: 0, message: "log ends at seq \(scan.head.seq) but seq \(expected.seq) was acknowledged")
        }
        if let d = damage, d.droppedBytes > 0 {
            let aside = path + ".damaged-\(Int(Date().timeIntervalSince1970))"
            try DurableFile.writeAtomically(Array(existing[scan.validBytes...]), to: aside)
            guard truncate(path, off_t(scan.validBytes)) == 0 else { throw LockError(.io, DurableFile.errnoText("truncate", path)) }
        }
        self.damage = damage
        _head = scan.head
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw LockError(.io, DurableFile.errnoText("open", path)) }
        guard fsync(fd) == 0 else { throw LockError(.io, DurableFile.errnoText("fsync", path)) }
        try DurableFile.syncDirectory(of: path)
    }

    deinit { close(fd) }

    public var head: AuditHead { mutex.lock(); defer { mutex.unlock() }; return _head }

    /// Appends one entry and returns it once it is on disk.
    @discardableResult
    public func append(time: Date, credential: String?, transport: RadioInterface, decision: TransactionDecision,
                       transaction: [UInt8]) throws(LockError) -> AuditEntry {
        mutex.lock(); defer { mutex.unlock() }
        let entry = AuditEntry(seq: _head.seq + 1, time: time, credential: credential, transport: transport,
                               decision: decision, transaction: transaction)
        let (line, mac) = Self.line(for: entry, previousMAC: Hex.decode(_head.mac)!, key: key)
        try DurableFile.writeAll(fd, line, path: path)
        guard fsync(fd) == 0 else { throw LockError(.io, DurableFile.errnoText("fsync", path)) }
        _head = AuditHead(seq: entry.seq, mac: Hex.encode(mac))
        return entry
    }

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    static func line(for entry: AuditEntry, previousMAC: [UInt8], key: [UInt8]) -> (line: [UInt8], mac: [UInt8]) {
        let body = Array(try! encoder.encode(entry))            // `{…}`
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
            guard let entry = try? JSONDecoder().decode(AuditEntry.self, from: Data(body)) else {
                fail(.malformedLine, "MAC verifies but the JSON is not an audit entry")
                return s
            }
            guard entry.seq == s.head.seq + 1 else {
                fail(.sequenceGap, "seq \(entry.seq) follows \(s.head.seq)")
                return s
            }
            s.entries.append(entry)
            s.head = AuditHead(seq: entry.seq, mac: Hex.encode(mac))
            start = nl + 1
            s.validBytes = start
        }
        return s
    }

    /// Reads and verifies a log without changing it (for `lockbench audit verify` and tests).
    public static func verify(directory: String) throws(LockError) -> (entries: [AuditEntry], damage: AuditDamage?) {
        guard let key = try DurableFile.read(directory + "/" + keyFileName), key.count == 32 else {
            throw LockError(.corruptState, "no 32-byte \(keyFileName) in \(directory)")
        }
        let scan = Self.scan(try DurableFile.read(directory + "/" + fileName) ?? [], key: key)
        return (scan.entries, scan.damage)
    }
}
