#if canImport(Glibc)
import Glibc
#endif
import ByteCore
import Codecs
import Crypto
import Foundation
@testable import Lock
import OfflineUnlock
import XCTest

/// A disk that fills up: it takes `budget` more bytes (a write past it is cut short, the next one
/// fails ENOSPC), and fails the next `failingFsyncs` fsyncs with EIO. Only the lock's own writes
/// go through it (`FileIO`); everything else about the files is real.
final class FillingDisk: @unchecked Sendable {
    private let mutex = NSLock()
    private var _budget = Int.max
    private var _failingFsyncs = 0
    var budget: Int { get { mutex.lock(); defer { mutex.unlock() }; return _budget } set { mutex.lock(); _budget = newValue; mutex.unlock() } }
    var failingFsyncs: Int { get { mutex.lock(); defer { mutex.unlock() }; return _failingFsyncs } set { mutex.lock(); _failingFsyncs = newValue; mutex.unlock() } }

    var io: FileIO {
        FileIO(write: { [self] fd, bytes in
            mutex.lock()
            let allowed = min(bytes.count, _budget)
            _budget -= allowed
            mutex.unlock()
            guard allowed > 0 else { errno = ENOSPC; return -1 }
            return FileIO.system.write(fd, UnsafeRawBufferPointer(rebasing: bytes[..<allowed]))
        }, fsync: { [self] fd in
            mutex.lock(); defer { mutex.unlock() }
            if _failingFsyncs > 0 { _failingFsyncs -= 1; errno = EIO; return -1 }
            return FileIO.system.fsync(fd)
        })
    }
}

/// Issue 9 §2.7: a decision is acknowledged only after its record is durable; a record that
/// cannot be written completely is rolled back (no fragment); the phone hears `storage_failure`;
/// the audit log never records an outcome that did not happen.
final class StorageFailureTests: XCTestCase {
    let base = LockFixture()

    func open(_ dir: String, _ disk: FillingDisk) throws -> EmulatedLock {
        try EmulatedLock(configuration: LockConfiguration.load(path: dir + "/lock.json"), io: disk.io)
    }

    func assertLog(_ dir: String, _ decisions: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let (entries, damage) = try AuditLog.verify(directory: dir + "/state")
        XCTAssertNil(damage, "no fragment, no damage", file: file, line: line)
        XCTAssertEqual(entries.map { $0.decision == "deny" ? "deny \($0.reason ?? "")" : $0.decision }, decisions, file: file, line: line)
        XCTAssertEqual(entries.map(\.seq), (0..<UInt64(entries.count)).map { $0 + 1 }, file: file, line: line)
    }

    func testAnAuditLineCutShortIsRolledBackAndTheTapDenied() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        _ = try base.makeConfig(dir)
        let disk = FillingDisk()
        var lock: EmulatedLock! = try open(dir, disk)
        XCTAssertTrue(lock.decide(base.presentation([try base.document()])).isGrant)
        try lock.advanceClock(10)
        disk.budget = 100                                    // half an audit line
        let d = lock.apply(.presentation(base.presentation()))
        XCTAssertEqual(d.refusal?.code, "storage_failure", "\(d)")
        XCTAssertEqual(lock.boltName, "secured")
        try assertLog(dir, ["grant"])
        // Space again: the same credential is granted, numbering follows on, nothing was lost.
        disk.budget = .max
        try lock.advanceClock(10)
        XCTAssertTrue(lock.decide(base.presentation()).isGrant)
        try assertLog(dir, ["grant", "grant"])
        lock = nil
        XCTAssertNil(try EmulatedLock(configuration: LockConfiguration.load(path: dir + "/lock.json")).audit.damage)
    }

    /// The decision's record carries its state change; when the disk takes only part of it, all
    /// of it goes: no entry, no cached document, no replay-window entry.
    func testARecordCutShortTakesTheWholeDecisionBack() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        _ = try base.makeConfig(dir)
        let disk = FillingDisk()
        let lock = try open(dir, disk)
        disk.budget = 600                                    // less than the record with its cached document
        let d = lock.apply(.presentation(base.presentation([try base.document()])))
        XCTAssertEqual(d.refusal?.code, "storage_failure", "\(d)")
        XCTAssertEqual(lock.boltName, "secured")
        try assertLog(dir, [])
        // The engine forgot the undone decision too: the document was not cached, the replay
        // window does not hold its transaction id.
        XCTAssertTrue(lock.wantsStepUp(credentialPublicKey: Primitives.point(of: base.credential)))
        XCTAssertTrue(lock.engine.state.recentTransactionIDs.isEmpty)
        disk.budget = .max
        XCTAssertTrue(lock.decide(base.presentation([try base.document()])).isGrant)
        try assertLog(dir, ["grant"])
    }

    func testAFailedFsyncIsRolledBack() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        _ = try base.makeConfig(dir)
        let disk = FillingDisk()
        let lock = try open(dir, disk)
        disk.failingFsyncs = 1
        let d = lock.apply(.presentation(base.presentation([try base.document()])))
        XCTAssertEqual(d.refusal?.code, "storage_failure", "\(d)")
        // The deny itself was recorded (the disk took it), the grant was not.
        try assertLog(dir, ["deny storage_failure"])
        XCTAssertTrue(lock.decide(base.presentation([try base.document()])).isGrant)
        try assertLog(dir, ["deny storage_failure", "grant"])
    }

    /// The issue's reproduction: a real 64 KiB tmpfs that fills up (root only: `mount`).
    func testOnAFullTmpfs() throws {
        guard getuid() == 0 else { return XCTFail("this test mounts a 64 KiB tmpfs and must run as root (CI does)") }
        let dir = try temporaryDirectory("lockbench-lock").path
        let mnt = dir + "/small"
        try FileManager.default.createDirectory(atPath: mnt, withIntermediateDirectories: true)
        XCTAssertEqual(try run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt]), 0)
        addTeardownBlock { _ = try? self.run("/bin/umount", [mnt]) }
        var config = try LockConfiguration.load(path: try base.makeConfig(dir))
        config.stateDirectory = mnt + "/state"
        let lock = try EmulatedLock(configuration: config)
        var answers = [LockOutcome]()
        answers.append(lock.apply(.presentation(base.presentation([try base.document()]))))
        try lock.advanceClock(6)                             // relocked
        // Fill the disk with a file, leaving no room.
        let filler = FileHandle(forWritingAtPath: { _ = FileManager.default.createFile(atPath: mnt + "/filler", contents: nil); return mnt + "/filler" }())!
        while (try? filler.write(contentsOf: Data(repeating: 0xEE, count: 512))) != nil {}
        while (try? filler.write(contentsOf: Data([0xEE]))) != nil {}
        try? filler.close()
        // The journal is the only file a tap writes: its last page may still hold a few records.
        // Tap until one no longer fits (bounded), then three more.
        var presented = [Presentation]()
        func tap() { let p = base.presentation(); presented.append(p); answers.append(lock.apply(.presentation(p))) }
        while answers.count < 64, answers.last?.refusal?.code != "storage_failure" { try lock.advanceClockIfPossible(1); tap() }
        for _ in 0..<3 { tap() }
        XCTAssertTrue(answers[0].decision.isGrant)
        XCTAssertEqual(answers.suffix(4).map(\.refusal?.code), Array(repeating: "storage_failure", count: 4), "\(answers)")
        XCTAssertTrue(answers.dropLast(4).allSatisfy(\.decision.isGrant), "before the disk was full: \(answers)")
        // The refused taps were undone: their transaction ids are not in the replay window.
        let window = Set(lock.engine.state.recentTransactionIDs)
        XCTAssertTrue(presented.suffix(4).allSatisfy { !window.contains(Hex.encode($0.transactionID)) })
        XCTAssertTrue(presented.dropLast(4).allSatisfy { window.contains(Hex.encode($0.transactionID)) })
        // Room again: taps are granted, and every answer is in the log exactly as given.
        try FileManager.default.removeItem(atPath: mnt + "/filler")
        for _ in 0..<3 { answers.append(lock.apply(.presentation(base.presentation()))) }
        XCTAssertTrue(answers.suffix(3).allSatisfy(\.decision.isGrant), "\(answers)")
        let (entries, damage) = try AuditLog.verify(directory: mnt + "/state")
        XCTAssertNil(damage)
        let grants = entries.filter { $0.decision == "grant" }.count
        XCTAssertEqual(grants, answers.filter(\.decision.isGrant).count, "the log's grants are exactly the grants answered")
        // Besides the answers, only the reports of snapshots the full disk refused (issue 20 §2).
        XCTAssertTrue(entries.allSatisfy { $0.decision == "grant" || $0.reason == "storage_failure"
            || [AuditEntry.snapshotFailedEvent, AuditEntry.snapshotWrittenEvent].contains($0.decision) }, "\(entries.map(\.decision))")
        XCTAssertEqual(entries.map(\.seq), (1...UInt64(entries.count)).map { $0 })
    }

    @discardableResult
    func run(_ tool: String, _ args: [String]) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = args
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus
    }
}

extension EmulatedLock {
    /// Moves the clock when the state can be saved; on a full disk the move is undone and that is fine here.
    func advanceClockIfPossible(_ seconds: TimeInterval) throws { try? advanceClock(seconds) }
}

/// Issue 9 §2.8 and §2.9 at the lock: damage is reported until an audited acknowledgement; a lock
/// whose state is gone but whose log has a history refuses to start until `reset` (audited).
final class LockDamageTests: XCTestCase {
    let base = LockFixture()

    func testDamageStaysReportedUntilAcknowledged() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let path = try base.makeConfig(dir)
        var lock: EmulatedLock? = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        XCTAssertTrue(lock!.decide(base.presentation([try base.document()])).isGrant)
        XCTAssertTrue(lock!.decide(base.presentation()).isGrant)
        lock = nil
        // Delete the last entry.
        let log = dir + "/state/audit.log"
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        try (lines.prefix(1).joined(separator: "\n") + "\n").write(toFile: log, atomically: false, encoding: .utf8)
        for _ in 0..<2 {   // reported at every start, not only the first
            lock = try EmulatedLock(configuration: LockConfiguration.load(path: path))
            XCTAssertEqual(lock!.unacknowledgedAuditDamage.count, 1)
            XCTAssertTrue(lock!.unacknowledgedAuditDamage[0].detail?.contains("missing_entries") ?? false)
            lock = nil
        }
        lock = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        let ack = try lock!.acknowledgeAuditDamage(note: "checked the backup")
        XCTAssertEqual(ack.decision, AuditEntry.auditAcknowledgedEvent)
        XCTAssertTrue(lock!.unacknowledgedAuditDamage.isEmpty)
        XCTAssertTrue(lock!.decide(base.presentation()).isGrant)
        let head = lock!.audit.head
        lock = nil
        let reopened = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        XCTAssertTrue(reopened.unacknowledgedAuditDamage.isEmpty, "\(reopened.unacknowledgedAuditDamage)")
        _ = consume reopened
        let v = try AuditLog.verify(directory: dir + "/state", expectedHead: head)
        XCTAssertTrue(v.isClean)
        XCTAssertEqual(v.entries.map(\.decision), ["grant", AuditEntry.auditDamageEvent, AuditEntry.auditAcknowledgedEvent, "grant"])
        XCTAssertEqual(v.entries.map(\.seq), [1, 3, 4, 5], "seq 2 is never used again")
    }

    func testMissingStateWithAHistoryRefusesUntilReset() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let path = try base.makeConfig(dir)
        var lock: EmulatedLock? = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        XCTAssertTrue(lock!.decide(base.presentation([try base.document()])).isGrant)
        let entry = try RevocationEntry(publicKeyHash: RevocationEntry.hash(credentialPublicKey: Primitives.point(of: base.credential)), expiry: base.t0.addingTimeInterval(86_400))
        var p = base.presentation()
        p.revocationDocuments = [RevocationDocument.issue(revocation: RevocationData(entries: [entry]), issued: base.t0.addingTimeInterval(-60),
                                                          expiry: base.t0.addingTimeInterval(86_400), issuerKey: base.issuer).encoded()]
        XCTAssertEqual(lock!.decide(p).reason, .engine(.revoked))
        lock = nil
        try FileManager.default.removeItem(atPath: dir + "/state/state.json")
        XCTAssertThrowsError(try EmulatedLock(configuration: LockConfiguration.load(path: path))) {
            XCTAssertEqual(($0 as? LockError)?.code, .corruptState)
            XCTAssertTrue("\($0)".contains("lockbench lock reset"), "\($0)")
        }
        let reset = try EmulatedLock.reset(configuration: LockConfiguration.load(path: path), reason: "disk replaced")
        XCTAssertEqual(reset.decision, AuditEntry.lockResetEvent)
        lock = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        XCTAssertNil(lock!.audit.damage)
        let v = try AuditLog.verify(directory: dir + "/state", expectedHead: lock!.audit.head)
        XCTAssertTrue(v.isClean)
        XCTAssertEqual(v.entries.last?.decision, AuditEntry.lockResetEvent)
        XCTAssertTrue(v.entries.last?.detail?.contains("disk replaced") ?? false)
    }
}

/// Issue 9 §2.9: the audit key may live outside the state directory; the state is authenticated
/// with it, so editing state.json (say, to drop a revocation list) stops the lock instead of
/// letting a revoked phone in.
final class AuthenticatedStateTests: XCTestCase {
    let base = LockFixture()

    func testAuditKeyOutsideTheStateDirectoryAndAnEditedStateIsRefused() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        var config = try LockConfiguration.load(path: try base.makeConfig(dir))
        config.auditKeyFile = "keys/door.audit.key"
        var lock: EmulatedLock? = try EmulatedLock(configuration: config)
        XCTAssertTrue(lock!.decide(base.presentation([try base.document()])).isGrant)
        let entry = try RevocationEntry(publicKeyHash: RevocationEntry.hash(credentialPublicKey: Primitives.point(of: base.credential)), expiry: base.t0.addingTimeInterval(86_400))
        var p = base.presentation()
        p.revocationDocuments = [RevocationDocument.issue(revocation: RevocationData(entries: [entry]), issued: base.t0.addingTimeInterval(-60),
                                                          expiry: base.t0.addingTimeInterval(86_400), issuerKey: base.issuer).encoded()]
        XCTAssertEqual(lock!.decide(p).reason, .engine(.revoked))
        lock = nil
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/state/audit.key"))
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: dir + "/keys/door.audit.key")[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        XCTAssertEqual(try AuditLog.verify(directory: dir + "/state", expectedHead: nil, keyFile: dir + "/keys/door.audit.key").entries.count, 3)
        // Drop the revocation list from state.json by hand.
        let url = URL(fileURLWithPath: dir + "/state/state.json")
        let text = try String(contentsOf: url, encoding: .utf8)
        let edited = text.replacingOccurrences(of: #""entries":["#, with: #""entries":[],"was":["#)
        XCTAssertNotEqual(edited, text)
        try edited.write(to: url, atomically: false, encoding: .utf8)
        XCTAssertThrowsError(try EmulatedLock(configuration: config)) {
            XCTAssertEqual(($0 as? LockError)?.code, .corruptState)
            XCTAssertTrue("\($0)".contains("does not verify"), "\($0)")
        }
    }
}
