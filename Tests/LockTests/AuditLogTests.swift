import AccessProtocol
import ByteCore
import Foundation
@testable import Lock
import LockBenchTestSupport
import OfflineUnlock
import XCTest

final class AuditLogTests: XCTestCase {
    let t0 = Date(timeIntervalSince1970: 1_772_442_000)

    func fill(_ dir: String, _ n: Int) throws -> AuditLog {
        let log = try AuditLog(directory: dir)
        for i in 0..<n {
            try log.append(time: t0.addingTimeInterval(Double(i)), credential: nil, transport: .nfc,
                           decision: i % 2 == 0 ? .grant(credentialID: "d00\(i)") : .deny(Refusal(.engine(.expired), detail: "expired \"quoted\" / slashed")),
                           transaction: Array(repeating: UInt8(i), count: 16))
        }
        return log
    }

    var logPath: (String) -> String { { $0 + "/audit.log" } }

    /// Issue 10 §1: a denial records its layer beside its code; a log written before layers were
    /// recorded (deny lines without `layer`) still verifies, and new entries chain onto it.
    func testDenialsRecordTheirLayerAndOldLinesWithoutOneStillVerify() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let log = try AuditLog(directory: dir)
        var old = AuditEntry(seq: 0, time: t0, credential: nil, transport: .nfc,
                             decision: .deny(Refusal(.protocol(.malformedInput), detail: "transport: gone")), transaction: [1])
        old.layer = nil                                  // the line as the lock wrote it before
        try log.append([old])
        try log.append(time: t0, credential: nil, transport: .nfc,
                       decision: .deny(Refusal(.transport(.linkLost), detail: "transport: gone")), transaction: [2])
        let (entries, damage) = try AuditLog.verify(directory: dir)
        XCTAssertNil(damage)
        XCTAssertEqual(entries.map(\.reason), ["malformed_input", "link_lost"])
        XCTAssertEqual(entries.map(\.layer), [nil, "transport"])
        let lines = try String(contentsOfFile: logPath(dir), encoding: .utf8).split(separator: "\n")
        XCTAssertFalse(lines[0].contains("\"layer\""), String(lines[0]))
        XCTAssertTrue(lines[1].contains("\"layer\":\"transport\",\"reason\":\"link_lost\""), String(lines[1]))
    }

    func testAppendVerifyReopen() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let log = try fill(dir, 5)
        XCTAssertEqual(log.head.seq, 5)
        let (entries, damage) = try AuditLog.verify(directory: dir)
        XCTAssertNil(damage)
        XCTAssertEqual(entries.map(\.seq), [1, 2, 3, 4, 5])
        XCTAssertEqual(entries[0].decision, "grant")
        XCTAssertEqual(entries[0].credential, "d000")
        XCTAssertEqual(entries[1].reason, "expired")
        XCTAssertEqual(entries[1].transport, "nfc")
        XCTAssertEqual(entries[1].transaction, Hex.encode([UInt8](repeating: 1, count: 16)))
        // Every line is JSON with the documented fields.
        let lines = try String(contentsOfFile: logPath(dir), encoding: .utf8).split(separator: "\n")
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as! [String: Any]
        XCTAssertEqual(Set(first.keys), ["seq", "time", "credential", "transport", "decision", "transaction", "mac"])
        XCTAssertEqual(first["time"] as? String, "2026-03-02T09:00:00Z")
        // Reopening continues the chain.
        let again = try AuditLog(directory: dir, expectedHead: log.head)
        XCTAssertNil(again.damage)
        try again.append(time: t0, credential: nil, transport: .ble, decision: .grant(credentialID: "x"), transaction: [1])
        XCTAssertEqual(try AuditLog.verify(directory: dir).entries.count, 6)
        // The key file is private.
        let attrs = try FileManager.default.attributesOfItem(atPath: dir + "/audit.key")
        XCTAssertEqual((attrs[.posixPermissions] as? NSNumber)?.intValue, 0o600)
    }

    func testTruncatedTailIsReportedCutAndLoggingContinues() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        _ = try fill(dir, 4)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: logPath(dir)))
        bytes.removeLast(30)
        try bytes.write(to: URL(fileURLWithPath: logPath(dir)))
        XCTAssertEqual(try AuditLog.verify(directory: dir).damage?.kind, .truncatedLine)
        let log = try AuditLog(directory: dir)
        XCTAssertEqual(log.damage?.kind, .truncatedLine)
        XCTAssertEqual(log.damage?.line, 4)
        XCTAssertEqual(log.damage?.validEntries, 3)
        // The damage is an entry of its own, numbered past the cut line's seq 4 (never reused).
        XCTAssertEqual(log.head.seq, 5)
        try log.append(time: t0, credential: nil, transport: .nfc, decision: .grant(credentialID: "z"), transaction: [9])
        let v = try AuditLog.verify(directory: dir, expectedHead: nil)
        XCTAssertNil(v.damage)
        XCTAssertEqual(v.entries.map(\.seq), [1, 2, 3, 5, 6])
        XCTAssertEqual(v.entries[3].decision, AuditEntry.auditDamageEvent)
        XCTAssertTrue(v.entries[3].detail?.contains("truncated_line at line 4") ?? false, "\(v.entries[3])")
        XCTAssertEqual(v.unacknowledgedDamage.map(\.seq), [5], "reported until acknowledged")
        XCTAssertFalse(v.isClean)
        // The cut-off bytes are kept aside.
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: dir).contains { $0.hasPrefix("audit.log.damaged-") })
    }

    func testEditedEntryBreaksTheChainFromThere() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        _ = try fill(dir, 5)
        var text = try String(contentsOfFile: logPath(dir), encoding: .utf8)
        text = text.replacingOccurrences(of: "\"decision\":\"deny\",\"detail\":\"expired", with: "\"decision\":\"grant\",\"detail\":\"expired", options: [], range: nil)
        try text.write(toFile: logPath(dir), atomically: false, encoding: .utf8)
        let damage = try AuditLog.verify(directory: dir).damage
        XCTAssertEqual(damage?.kind, .badMAC)
        XCTAssertEqual(damage?.line, 2)
        let log = try AuditLog(directory: dir)
        XCTAssertEqual(log.head.seq, 6, "entry 1 kept, then the damage entry numbered after seq 5")
    }

    func testDeletedOrReorderedLinesAreDetected() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        _ = try fill(dir, 4)
        var lines = try String(contentsOfFile: logPath(dir), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: true)
        lines.remove(at: 1)
        try (lines.joined(separator: "\n") + "\n").write(toFile: logPath(dir), atomically: false, encoding: .utf8)
        XCTAssertEqual(try AuditLog.verify(directory: dir).damage?.kind, .badMAC)
        XCTAssertEqual(try AuditLog.verify(directory: dir).damage?.line, 2)
    }

    func testWholeEntriesCutFromTheEndAreNoticedAgainstTheHead() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let log = try fill(dir, 4)
        let head = log.head
        let lines = try String(contentsOfFile: logPath(dir), encoding: .utf8).split(separator: "\n")
        try (lines.prefix(2).joined(separator: "\n") + "\n").write(toFile: logPath(dir), atomically: false, encoding: .utf8)
        XCTAssertNil(try AuditLog.verify(directory: dir).damage)   // the chain itself is fine…
        let reopened = try AuditLog(directory: dir, expectedHead: head)
        XCTAssertEqual(reopened.damage?.kind, .missingEntries)    // …but seq 4 was acknowledged
    }

    func testForeignKeyFailsFromTheFirstLine() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        _ = try fill(dir, 2)
        try Data(repeating: 7, count: 32).write(to: URL(fileURLWithPath: dir + "/audit.key"))
        XCTAssertEqual(try AuditLog.verify(directory: dir).damage?.line, 1)
    }

    // MARK: Issue 9 §2.8: damage is not hidden

    func testDeletingTheLastEntryIsDamageAgainstTheRecordedHead() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let head = try fill(dir, 4).head
        let lines = try String(contentsOfFile: logPath(dir), encoding: .utf8).split(separator: "\n")
        try (lines.prefix(3).joined(separator: "\n") + "\n").write(toFile: logPath(dir), atomically: false, encoding: .utf8)
        let v = try AuditLog.verify(directory: dir, expectedHead: head)
        XCTAssertEqual(v.damage?.kind, .missingEntries)
        XCTAssertFalse(v.isClean)
    }

    func testAnEmptiedOrDeletedLogIsDamage() throws {
        for delete in [false, true] {
            let dir = try temporaryDirectory("lockbench-lock").path
            let head = try fill(dir, 3).head
            if delete { try FileManager.default.removeItem(atPath: logPath(dir)) } else { try Data().write(to: URL(fileURLWithPath: logPath(dir))) }
            let v = try AuditLog.verify(directory: dir, expectedHead: head)
            XCTAssertEqual(v.damage?.kind, .missingEntries, "delete: \(delete)")
            XCTAssertTrue(v.damage?.message.contains("empty or was deleted") ?? false)
            // Opened, the lock says so in the log and numbers on after seq 3.
            let log = try AuditLog(directory: dir, expectedHead: head)
            XCTAssertEqual(log.head.seq, 4)
            XCTAssertEqual(try AuditLog.verify(directory: dir, expectedHead: nil).unacknowledgedDamage.count, 1)
        }
    }

    func testAReplacedLogWithTheSameLengthIsDamage() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let head = try fill(dir, 3).head
        try FileManager.default.removeItem(atPath: logPath(dir))
        let other = try AuditLog(directory: dir)        // same key, a new history of 3 entries
        for i in 0..<3 { try other.append(time: t0, credential: nil, transport: .nfc, decision: .grant(credentialID: "f\(i)"), transaction: [UInt8(i)]) }
        XCTAssertEqual(try AuditLog.verify(directory: dir, expectedHead: head).damage?.kind, .badMAC)
    }

    func testSequenceNumbersAreNeverReused() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let head = try fill(dir, 4).head
        let lines = try String(contentsOfFile: logPath(dir), encoding: .utf8).split(separator: "\n")
        try (lines.prefix(2).joined(separator: "\n") + "\n").write(toFile: logPath(dir), atomically: false, encoding: .utf8)
        let log = try AuditLog(directory: dir, expectedHead: head)
        try log.append(time: t0, credential: nil, transport: .nfc, decision: .grant(credentialID: "n"), transaction: [7])
        XCTAssertEqual(try AuditLog.verify(directory: dir, expectedHead: log.head).entries.map(\.seq), [1, 2, 5, 6])
    }

    func testAMissingKeyWithAHistoryIsRefusedNotReplaced() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        _ = try fill(dir, 2)
        try FileManager.default.removeItem(atPath: dir + "/audit.key")
        XCTAssertThrowsError(try AuditLog(directory: dir)) {
            XCTAssertEqual(($0 as? LockError)?.code, .corruptState)
            XCTAssertTrue("\($0)".contains("lock reset"), "\($0)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/audit.key"))
    }
}

final class StateStoreTests: XCTestCase {
    func testAtomicSaveAndLoad() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let store = StateStore(directory: dir, auditKey: Array(repeating: 9, count: 32))
        XCTAssertNil(try store.load())
        var s = PersistedLockState(engine: EngineState(clock: TrustedClock(trustedAt: Date(timeIntervalSince1970: 100))), clock: .frozen(Date(timeIntervalSince1970: 100)))
        s.fastCache = Data([1, 2, 3])
        s.engine.revocationLists = RevocationLists(["ab": IssuerRevocationList(issued: Date(timeIntervalSince1970: 50), entries: [])])
        try store.save(s)
        XCTAssertEqual(try store.load(), s)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/state.json.tmp"))
        s.engine.revocationLists = RevocationLists(["ab": IssuerRevocationList(issued: Date(timeIntervalSince1970: 60), entries: [])])
        try store.save(s)
        XCTAssertEqual(try store.load()?.engine.revocationLists["ab"]?.issued, Date(timeIntervalSince1970: 60))
        try Data("{".utf8).write(to: URL(fileURLWithPath: dir + "/state.json"))
        XCTAssertThrowsError(try store.load()) { XCTAssertEqual(($0 as? LockError)?.code, .corruptState) }
    }

    /// §2.9: the state is authenticated with the audit key; an edit, another key, or an
    /// unauthenticated (old-format) file is refused with the way out in the message.
    func testStateIsAuthenticated() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let store = StateStore(directory: dir, auditKey: Array(repeating: 9, count: 32))
        var s = PersistedLockState(engine: EngineState(clock: TrustedClock(trustedAt: Date(timeIntervalSince1970: 100))), clock: .frozen(Date(timeIntervalSince1970: 100)))
        s.engine.revocationLists = RevocationLists(["ab": IssuerRevocationList(issued: Date(timeIntervalSince1970: 50), entries: [])])
        try store.save(s)
        let url = URL(fileURLWithPath: dir + "/state.json")
        let good = try String(contentsOf: url, encoding: .utf8)
        XCTAssertTrue(good.hasPrefix("{\"mac\":\""), good)
        func assertRefused(_ text: String, _ store: StateStore, mentioning: String, line: UInt = #line) throws {
            try text.write(to: url, atomically: false, encoding: .utf8)
            XCTAssertThrowsError(try store.load(), line: line) {
                XCTAssertEqual(($0 as? LockError)?.code, .corruptState, line: line)
                XCTAssertTrue("\($0)".contains(mentioning) && "\($0)".contains("lockbench lock reset"), "\($0)", line: line)
            }
        }
        XCTAssertTrue(good.contains("\"entries\":["), good)
        try assertRefused(good.replacingOccurrences(of: "\"entries\":[", with: "\"entries\":[],\"was\":["), store, mentioning: "does not verify")
        try assertRefused(good, StateStore(directory: dir, auditKey: Array(repeating: 8, count: 32)), mentioning: "does not verify")
        let body = String(good[good.range(of: "\"state\":")!.upperBound...].dropLast(2))
        try assertRefused(body, store, mentioning: "not an authenticated")
        try good.write(to: url, atomically: false, encoding: .utf8)
        XCTAssertEqual(try store.load(), s)
    }

    func testWriteIntoMissingDirectoryIsAnIOError() {
        XCTAssertThrowsError(try StateStore(directory: "/nonexistent/lockbench", auditKey: Array(repeating: 1, count: 32)).save(
            PersistedLockState(engine: EngineState(clock: TrustedClock(trustedAt: Date())), clock: .running(offset: 0)))) {
            XCTAssertEqual(($0 as? LockError)?.code, .io)
        }
    }
}
