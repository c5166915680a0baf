import ByteCore
import Codecs
import Crypto
import Foundation
@testable import Lock
import LockBenchTestSupport
import OfflineUnlock
import XCTest

/// Issue 20 §5: hostile state files are refused with the field and the rule, never trapped on, and
/// a full disk with a journal tail no longer keeps the lock from starting.
final class HostileStateTests: XCTestCase {
    let base = LockFixture()

    func lived(_ dir: String) throws -> (LockConfiguration, key: [UInt8]) {
        let config = try LockConfiguration.load(path: try base.makeConfig(dir))
        var lock: EmulatedLock? = try EmulatedLock(configuration: config)
        XCTAssertTrue(lock!.decide(base.presentation([try base.document()])).isGrant)
        lock = nil
        return (config, try AuditLog.openKey(dir + "/state/audit.key", history: true))
    }

    /// `seq` 2^64−1 as the head the state records: the damage entry's `+ 1` trapped.
    func testTheLargestSeqInTheStatesHeadIsRefusedNotTrappedOn() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let (config, key) = try lived(dir)
        let store = StateStore(directory: dir + "/state", auditKey: key)
        var state = try XCTUnwrap(try store.load())
        state.auditHead = AuditHead(seq: .max, mac: state.auditHead.mac)
        try store.save(state)
        XCTAssertThrowsError(try EmulatedLock(configuration: config)) {
            XCTAssertEqual(($0 as? LockError)?.code, .corruptState)
            XCTAssertTrue("\($0)".contains("18446744073709551615") && "\($0)".contains("lock reset"), "\($0)")
        }
        // `audit verify` reads it without trapping: the head is damage.
        XCTAssertNotNil(try AuditLog.verify(directory: dir + "/state", expectedHead: state.auditHead).damage)
    }

    /// `seq` 2^64−1 in an (authentic) `audit_damage` line: the next append's `+ 1` trapped.
    func testTheLargestSeqInADamageLineIsRefusedNotTrappedOn() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let (config, key) = try lived(dir)
        let path = dir + "/state/" + AuditLog.fileName
        let head = try XCTUnwrap(AuditLog.scan(Array(try Data(contentsOf: URL(fileURLWithPath: path))), key: key).head)
        var entry = AuditEntry(seq: 0, time: base.t0, event: AuditEntry.auditDamageEvent, detail: "forged")
        entry.seq = .max
        let (line, _) = try AuditLog.line(for: entry, previousMAC: Hex.decode(head.mac)!, key: key)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(line))
        try handle.close()
        XCTAssertEqual(try AuditLog.verify(directory: dir + "/state").entries.last?.seq, .max, "read without trapping")
        XCTAssertThrowsError(try EmulatedLock(configuration: config)) {
            XCTAssertTrue("\($0)".contains("18446744073709551615") && "\($0)".contains("no entry can follow"), "\($0)")
        }
    }

    /// A full disk with a journal tail: the start's snapshot cannot be written. Before, `lock run`
    /// did not start at all; now the lock starts read-only and denies, naming the reason, and
    /// grants again once the disk has room.
    func testAFullDiskWithAJournalTailStartsReadOnlyInsteadOfNotAtAll() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let config = try LockConfiguration.load(path: try base.makeConfig(dir))
        var lock: EmulatedLock? = try EmulatedLock(configuration: config)
        XCTAssertTrue(lock!.decide(base.presentation([try base.document()])).isGrant)
        XCTAssertTrue(lock!.decide(base.presentation()).isGrant)
        // A crash: the journal holds both records after the start's snapshot.
        let copy = dir + "/crashed"
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        for name in ["state.json", "audit.log", "audit.key"] { try FileManager.default.copyItem(atPath: dir + "/state/" + name, toPath: copy + "/" + name) }
        lock = nil
        var crashed = config
        crashed.stateDirectory = copy
        let disk = FillingDisk()
        disk.budget = 0
        let reopened = try EmulatedLock(configuration: crashed, io: disk.io)
        XCTAssertNotNil(reopened.snapshotBlock)
        let denied = reopened.apply(.presentation(base.presentation()))
        XCTAssertEqual(denied.refusal?.code, "storage_failure")
        XCTAssertTrue(denied.decision.refusal?.detail.contains("No space left on device") ?? false, "\(denied)")
        disk.budget = .max
        XCTAssertTrue(reopened.decide(base.presentation()).isGrant, "room again: the snapshot is written and the lock grants")
    }
}

/// Issue 20 §5: a number no field can hold, in an authentic state file, names its field (it was
/// "The given data was not valid JSON.").
final class HostileStateNumberTests: XCTestCase {
    let base = LockFixture()

    func testANumberNoFieldCanHoldInTheStateNamesItsField() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let config = try LockConfiguration.load(path: try base.makeConfig(dir))
        var lock: EmulatedLock? = try EmulatedLock(configuration: config)
        XCTAssertTrue(lock!.decide(base.presentation([try base.document()])).isGrant)
        lock = nil
        let key = try AuditLog.openKey(dir + "/state/audit.key", history: true)
        let path = dir + "/state/state.json"
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
        for value in ["1e30", "1.5", "100000000000000000000"] {
            var state = file["state"] as! [String: Any]
            // A fractional time before it is a number its field holds: not the one named.
            var engine = state["engine"] as! [String: Any], clock = engine["clock"] as! [String: Any]
            clock["highWaterMark"] = 794_131_200.25
            engine["clock"] = clock
            state["engine"] = engine
            state["formatVersion"] = 424242
            let body = String(decoding: try JSONSerialization.data(withJSONObject: state, options: [.sortedKeys]), as: UTF8.self)
                .replacingOccurrences(of: "424242", with: value)
            // Signed as the lock signs it: the file is authentic, only its number is hostile.
            let macKey = Primitives.hmacSHA256(key: key, message: Array("lockbench state key".utf8))
            let mac = Primitives.hmacSHA256(key: macKey, message: Array("lockbench state v1\n".utf8) + Array(body.utf8))
            try Data(("{\"mac\":\"" + Hex.encode(mac) + "\",\"state\":" + body + "}\n").utf8).write(to: URL(fileURLWithPath: path))
            XCTAssertThrowsError(try EmulatedLock(configuration: config)) {
                XCTAssertTrue("\($0)".contains("field formatVersion: \(value)"), "\($0)")
                XCTAssertFalse("\($0)".contains("not valid JSON"), "\($0)")
            }
        }
    }
}
