import ByteCore
import Codecs
import Crypto
import Foundation
@testable import Lock
import LockBenchTestSupport
import OfflineUnlock
import Synchronization
import XCTest

/// Issue 20 §2: a snapshot that must be written (after a revocation list or clock-trust change,
/// at start) and cannot be stops the lock from granting until it can — on the console
/// (`onWarning`), in the audit log and in the refusal — and every other failed snapshot is
/// reported, not swallowed. A directory named `state.json.tmp` blocks every snapshot, as a full
/// or read-only state disk does.
final class SnapshotFailureTests: XCTestCase {
    let base = LockFixture()
    let victim = P256.Signing.PrivateKey()

    func open(_ dir: String) throws -> EmulatedLock { try EmulatedLock(configuration: LockConfiguration.load(path: dir + "/lock.json")) }

    func presentation(_ key: P256.Signing.PrivateKey, _ docs: [[UInt8]] = [], revocation: [[UInt8]] = []) -> Presentation {
        var p = Presentation(credentialPublicKey: Primitives.point(of: key), transactionID: Primitives.randomBytes(16),
                             interface: .nfc, protocolVersion: 0x0100, fast: false, accessDocuments: docs)
        p.revocationDocuments = revocation
        return p
    }

    func victimDocument() -> [UInt8] {
        TestFixtures.accessDocument(credentialPublicKey: Primitives.point(of: victim), id: [0xD2],
                                    from: base.t0.addingTimeInterval(-60), until: base.t0.addingTimeInterval(8 * 3600), issuer: base.issuer)
    }

    /// The list revoking the victim (serial 1).
    func list() throws -> [UInt8] {
        let entry = try RevocationEntry(publicKeyHash: RevocationEntry.hash(credentialPublicKey: Primitives.point(of: victim)),
                                        expiry: base.t0.addingTimeInterval(86_400))
        return TestFixtures.revocationDocument(order: 1, entries: [entry], issued: base.t0.addingTimeInterval(-30),
                                               expiry: base.t0.addingTimeInterval(86_400), issuer: base.issuer)
    }

    func block(_ dir: String) throws {
        try FileManager.default.createDirectory(atPath: dir + "/state/state.json.tmp", withIntermediateDirectories: false)
    }

    func unblock(_ dir: String) throws { try FileManager.default.removeItem(atPath: dir + "/state/state.json.tmp") }

    func decisions(_ dir: String) throws -> [String] {
        let (entries, damage) = try AuditLog.verify(directory: dir + "/state")
        XCTAssertNil(damage)
        return entries.map { $0.decision == "deny" ? "deny \($0.reason ?? "")" : $0.decision }
    }

    func testARequiredSnapshotThatCannotBeWrittenStopsGrantsUntilItCan() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        _ = try base.makeConfig(dir)
        let lock = try open(dir)
        let heard = Mutex<[String]>([])
        lock.onWarning = { warning in heard.withLock { $0.append(warning) } }
        var warnings: [String] { heard.withLock { $0 } }
        XCTAssertTrue(lock.decide(base.presentation([try base.document()])).isGrant)
        try block(dir)
        // The list arrives: that tap's record is durable, so it is acknowledged; its snapshot is not.
        XCTAssertTrue(lock.decide(base.presentation(revocation: [try list()])).isGrant)
        let refused = lock.apply(.presentation(base.presentation()))
        XCTAssertEqual(refused.refusal?.code, "storage_failure", "\(refused)")
        XCTAssertTrue(refused.decision.refusal?.detail.contains("snapshot cannot be written") ?? false, "\(refused)")
        XCTAssertNotNil(lock.snapshotBlock)
        XCTAssertTrue(warnings.contains { $0.hasPrefix("SNAPSHOT FAILED") && $0.contains("grants nothing") }, "\(warnings)")
        XCTAssertEqual(try decisions(dir), ["grant", AuditEntry.revocationListEvent, "grant", AuditEntry.snapshotFailedEvent, "deny storage_failure"])
        // Still blocked at the next taps, reported once (not at every tap); once the directory
        // takes a snapshot again, grants resume.
        for _ in 0..<3 { XCTAssertEqual(lock.apply(.presentation(base.presentation())).refusal?.code, "storage_failure") }
        lock.waitForSnapshots()
        XCTAssertEqual(try decisions(dir).filter { $0 == AuditEntry.snapshotFailedEvent }.count, 1)
        try unblock(dir)
        XCTAssertTrue(lock.decide(base.presentation()).isGrant)
        XCTAssertNil(lock.snapshotBlock)
        XCTAssertEqual(try decisions(dir).suffix(3), ["deny storage_failure", AuditEntry.snapshotWrittenEvent, "grant"])
        XCTAssertTrue(warnings.last?.contains("written again") ?? false, "\(warnings)")
    }

    /// The attack of the issue: with snapshots blocked, the revocation's records are cut from the
    /// end of the log and the lock restarted. Before, the restart started from the old snapshot and
    /// granted the revoked phone with a log that verified; now a start that cannot write its
    /// snapshot denies everything. With snapshots working the same cut is damage.
    func testACutRevocationIsNotGrantedWhileTheSnapshotCannotBeWritten() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        _ = try base.makeConfig(dir)
        var lock: EmulatedLock! = try open(dir)
        XCTAssertTrue(lock.decide(presentation(victim, [victimDocument()])).isGrant)
        XCTAssertTrue(lock.decide(base.presentation([try base.document()])).isGrant)
        lock = nil                                          // a clean stop: the snapshot holds both
        let logPath = dir + "/state/" + AuditLog.fileName
        let beforeList = try Data(contentsOf: URL(fileURLWithPath: logPath))
        lock = try open(dir)
        try block(dir)
        XCTAssertTrue(lock.decide(base.presentation(revocation: [try list()])).isGrant)
        XCTAssertEqual(lock.apply(.presentation(presentation(victim))).refusal?.code, "storage_failure")
        lock = nil
        try beforeList.write(to: URL(fileURLWithPath: logPath))      // the list's records cut away
        XCTAssertNil(try AuditLog.verify(directory: dir + "/state").damage, "the cut is invisible to the chain")
        lock = try open(dir)
        XCTAssertNotNil(lock.snapshotBlock, "the start could not write its snapshot")
        let d = lock.apply(.presentation(presentation(victim)))
        XCTAssertEqual(d.refusal?.code, "storage_failure", "the revoked phone is not granted: \(d)")
        lock = nil

        // The same cut with snapshots working: the snapshot after the list records its head.
        try unblock(dir)
        let dir2 = try temporaryDirectory("lockbench-lock").path
        _ = try base.makeConfig(dir2)
        lock = try open(dir2)
        XCTAssertTrue(lock.decide(presentation(victim, [victimDocument()])).isGrant)
        lock = nil
        let log2 = dir2 + "/state/" + AuditLog.fileName
        let before2 = try Data(contentsOf: URL(fileURLWithPath: log2))
        lock = try open(dir2)
        XCTAssertTrue(lock.decide(base.presentation([try base.document()], revocation: [try list()])).isGrant)
        lock = nil
        try before2.write(to: URL(fileURLWithPath: log2))
        lock = try open(dir2)
        XCTAssertFalse(lock.unacknowledgedAuditDamage.isEmpty, "the cut is damage against the snapshot's head")
        XCTAssertEqual(lock.apply(.presentation(presentation(victim))).refusal?.code, "revoked")
    }

    /// An ordinary snapshot (every `snapshotInterval` records) that fails is reported once, in the
    /// log and on the console; the lock goes on granting (the journal holds every record).
    func testAnOrdinarySnapshotThatFailsIsReportedNotSwallowed() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        _ = try base.makeConfig(dir)
        let lock = try open(dir)
        let heard = Mutex<[String]>([])
        lock.onWarning = { warning in heard.withLock { $0.append(warning) } }
        var warnings: [String] { heard.withLock { $0 } }
        lock.snapshotInterval = 2
        XCTAssertTrue(lock.decide(base.presentation([try base.document()])).isGrant)
        try block(dir)
        XCTAssertTrue(lock.decide(base.presentation()).isGrant)        // the second record: a snapshot, which fails
        lock.waitForSnapshots()                                         // (in the background, after the answer)
        XCTAssertTrue(lock.decide(base.presentation()).isGrant, "an ordinary snapshot does not stop grants")
        XCTAssertNil(lock.snapshotBlock)
        XCTAssertEqual(try decisions(dir), ["grant", "grant", AuditEntry.snapshotFailedEvent, "grant"])
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        XCTAssertTrue(warnings.first?.contains("retried after 2 records") ?? false, "\(warnings)")
    }
}
