import ByteCore
import Codecs
import Foundation

/// The rollback anchor (issue 20 §4): the journal head of the lock's last snapshot, kept in a file
/// on other media than the state directory (`anchorFile`), as a secure element keeps a monotonic
/// counter. The chain and the state's MAC make every copy of the state directory self-consistent,
/// so an older genuine copy put back verifies; the anchor is what it cannot rewind. A start whose
/// recovered log ends before the anchor's head, or holds another entry there, was rolled back.
///
/// The file is `{"mac":"<64 hex>","anchor":{"seq":N,"mac":"<64 hex>"}}`, authenticated like the
/// state (HMAC-SHA256 with a key derived from the audit key), written atomically after each
/// snapshot — never in a decision's path, so the one fsync per decision stays one.
public struct JournalAnchor: Equatable, Sendable {
    public var head: AuditHead

    public init(head: AuditHead) { self.head = head }

    private struct File: Codable { var mac: String; var anchor: Body }
    private struct Body: Codable { var seq: UInt64; var mac: String }

    private static func macKey(_ auditKey: [UInt8]) -> [UInt8] {
        Primitives.hmacSHA256(key: auditKey, message: Array("lockbench anchor key".utf8))
    }

    private static func mac(_ body: Body, auditKey: [UInt8]) -> String {
        Hex.encode(Primitives.hmacSHA256(key: macKey(auditKey), message: Array("lockbench anchor v1\n\(body.seq) \(body.mac)".utf8)))
    }

    /// Reads an anchor file's bytes; refuses one that is not an anchor or not this lock's.
    public init(parsing bytes: [UInt8], auditKey: [UInt8], path: String) throws(LockError) {
        let file: File
        do { file = try JSONDecoder().decode(File.self, from: Data(bytes)) } catch {
            throw LockError(.corruptState, "anchor \(path) is not a LockBench anchor file (\(LockConfiguration.describe(error))); restore it from the media it lives on, or start afresh with `lockbench lock reset`")
        }
        guard Hex.decode(file.anchor.mac)?.count == 32,
              Primitives.constantTimeEqual(Array(Self.mac(file.anchor, auditKey: auditKey).utf8), Array(file.mac.utf8)) else {
            throw LockError(.corruptState, "anchor \(path) does not verify with this lock's audit key (edited, or another lock's); restore it, or start afresh with `lockbench lock reset`")
        }
        head = AuditHead(seq: file.anchor.seq, mac: file.anchor.mac)
    }

    public func encoded(auditKey: [UInt8]) -> [UInt8] {
        let body = Body(seq: head.seq, mac: head.mac)
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return Array(try! e.encode(File(mac: Self.mac(body, auditKey: auditKey), anchor: body))) + [0x0A]
    }

    /// The anchor at `path`; nil when there is none yet.
    public static func load(_ path: String, auditKey: [UInt8]) throws(LockError) -> JournalAnchor? {
        guard let bytes = try DurableFile.read(path) else { return nil }
        return try JournalAnchor(parsing: bytes, auditKey: auditKey, path: path)
    }

    public func save(to path: String, auditKey: [UInt8], io: FileIO = .system) throws(LockError) {
        let dir = (path as NSString).deletingLastPathComponent
        if !dir.isEmpty { try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        try DurableFile.writeAtomically(encoded(auditKey: auditKey), to: path, io: io)
    }

    /// Why a start with `log` (its head, and whether the anchor's entry is in its chain) is a
    /// rollback, or nil when it is not.
    public func rollback(logHead: AuditHead, anchorInChain: Bool, path: String) -> String? {
        if logHead.seq < head.seq {
            return "the state directory was rolled back: the anchor \(path) records journal seq \(head.seq), but the log ends at seq \(logHead.seq) — an older copy of the state was put back, and what happened after it (revocations among it) would be undone"
        }
        if head.seq > 0 && !anchorInChain {
            return "the state directory was replaced: the anchor \(path) records journal seq \(head.seq) with another entry than the log holds"
        }
        return nil
    }
}
