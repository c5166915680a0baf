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
        XCTAssertEqual(log.head.seq, 3)
        try log.append(time: t0, credential: nil, transport: .nfc, decision: .grant(credentialID: "z"), transaction: [9])
        let (entries, damage) = try AuditLog.verify(directory: dir)
        XCTAssertNil(damage)
        XCTAssertEqual(entries.map(\.seq), [1, 2, 3, 4])
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
        XCTAssertEqual(log.head.seq, 1)
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
}

final class StateStoreTests: XCTestCase {
    func testAtomicSaveAndLoad() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let store = StateStore(directory: dir)
        XCTAssertNil(try store.load())
        var s = PersistedLockState(engine: EngineState(clock: TrustedClock(trustedAt: Date(timeIntervalSince1970: 100))), clock: .frozen(Date(timeIntervalSince1970: 100)))
        s.fastCache = Data([1, 2, 3])
        s.engine.revocationSerial = 9
        try store.save(s)
        XCTAssertEqual(try store.load(), s)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/state.json.tmp"))
        s.engine.revocationSerial = 10
        try store.save(s)
        XCTAssertEqual(try store.load()?.engine.revocationSerial, 10)
        try Data("{".utf8).write(to: URL(fileURLWithPath: dir + "/state.json"))
        XCTAssertThrowsError(try store.load()) { XCTAssertEqual(($0 as? LockError)?.code, .corruptState) }
    }

    func testWriteIntoMissingDirectoryIsAnIOError() {
        XCTAssertThrowsError(try StateStore(directory: "/nonexistent/lockbench").save(
            PersistedLockState(engine: EngineState(clock: TrustedClock(trustedAt: Date())), clock: .running(offset: 0)))) {
            XCTAssertEqual(($0 as? LockError)?.code, .io)
        }
    }
}
