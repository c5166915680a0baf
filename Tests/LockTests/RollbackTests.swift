import ByteCore
import Codecs
import Crypto
import Foundation
@testable import Lock
import LockBenchTestSupport
import OfflineUnlock
import XCTest

/// Issue 20 §4: rolling a lock back. Every copy of a state directory is self-consistent (the chain
/// and the state's MAC verify), so an older genuine copy put back undoes what came after it; the
/// optional anchor on other media (`anchorFile`) is what it cannot rewind. And no cut of journal
/// records moves the clock's high-water mark back by more than the leeway.
final class RollbackTests: XCTestCase {
    let base = LockFixture()
    let victim = P256.Signing.PrivateKey()

    func config(_ dir: String, anchor: Bool) throws -> LockConfiguration {
        var config = try LockConfiguration.load(path: try base.makeConfig(dir))
        if anchor { config.anchorFile = "media/door.anchor" }
        return config
    }

    func presentation(_ key: P256.Signing.PrivateKey, _ docs: [[UInt8]] = []) -> Presentation {
        Presentation(credentialPublicKey: Primitives.point(of: key), transactionID: Primitives.randomBytes(16),
                     interface: .nfc, protocolVersion: 0x0100, fast: false, accessDocuments: docs)
    }

    func document(_ key: P256.Signing.PrivateKey, id: UInt8, until: TimeInterval) -> [UInt8] {
        TestFixtures.accessDocument(credentialPublicKey: Primitives.point(of: key), id: [id],
                                    from: base.t0.addingTimeInterval(-60), until: base.t0.addingTimeInterval(until), issuer: base.issuer)
    }

    func revokingVictim() throws -> [UInt8] {
        let entry = try RevocationEntry(publicKeyHash: RevocationEntry.hash(credentialPublicKey: Primitives.point(of: victim)),
                                        expiry: base.t0.addingTimeInterval(86_400))
        return TestFixtures.revocationDocument(order: 1, entries: [entry], issued: base.t0.addingTimeInterval(-30),
                                               expiry: base.t0.addingTimeInterval(86_400), issuer: base.issuer)
    }

    /// The victim is known, a copy of the state directory is kept, then a list revokes the victim;
    /// the copy is put back. Returns the lock configuration.
    func restoreAnOlderCopy(_ dir: String, anchor: Bool) throws -> LockConfiguration {
        let config = try self.config(dir, anchor: anchor)
        var lock: EmulatedLock! = try EmulatedLock(configuration: config)
        XCTAssertTrue(lock.decide(presentation(victim, [document(victim, id: 0xD2, until: 8 * 3600)])).isGrant)
        lock = nil
        let state = dir + "/state", copy = dir + "/state-copy"
        try FileManager.default.copyItem(atPath: state, toPath: copy)
        lock = try EmulatedLock(configuration: config)
        XCTAssertEqual(lock.decide(base.presentation([try base.document()], revocation: [try revokingVictim()])).isGrant, true)
        XCTAssertEqual(lock.apply(.presentation(presentation(victim))).refusal?.code, "revoked")
        lock = nil
        try FileManager.default.removeItem(atPath: state)
        try FileManager.default.copyItem(atPath: copy, toPath: state)
        return config
    }

    func testWithAnAnchorARestoredOlderStateDirectoryIsRefused() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let config = try restoreAnOlderCopy(dir, anchor: true)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/media/door.anchor"))
        XCTAssertNil(try AuditLog.verify(directory: dir + "/state").damage, "the copy verifies on its own")
        XCTAssertThrowsError(try EmulatedLock(configuration: config)) {
            XCTAssertEqual(($0 as? LockError)?.code, .corruptState)
            XCTAssertTrue("\($0)".contains("rolled back") && "\($0)".contains("door.anchor") && "\($0)".contains("lock reset"), "\($0)")
        }
        // An edited anchor is refused too, not believed.
        let anchorPath = dir + "/media/door.anchor"
        let genuine = try Data(contentsOf: URL(fileURLWithPath: anchorPath))
        try Data(String(decoding: genuine, as: UTF8.self).replacingOccurrences(of: "\"seq\":", with: "\"seq\":1").utf8).write(to: URL(fileURLWithPath: anchorPath))
        XCTAssertThrowsError(try EmulatedLock(configuration: config)) { XCTAssertTrue("\($0)".contains("does not verify"), "\($0)") }
        try genuine.write(to: URL(fileURLWithPath: anchorPath))
        // The operator's way on is an audited reset, which moves the anchor to the new head.
        try EmulatedLock.reset(configuration: config, reason: "restored from backup")
        let lock = try EmulatedLock(configuration: config)
        XCTAssertEqual(try AuditLog.verify(directory: dir + "/state").entries.last?.decision, AuditEntry.lockResetEvent)
        XCTAssertEqual(lock.apply(.presentation(presentation(victim))).refusal?.code, "unknown_credential", "reset forgets every phone")
    }

    /// Without an anchor, the same restore is not detected: the revocation after the copy is
    /// undone (docs/security.md says so plainly).
    func testWithoutAnAnchorARestoredOlderStateDirectoryUndoesWhatCameAfter() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let config = try restoreAnOlderCopy(dir, anchor: false)
        let lock = try EmulatedLock(configuration: config)
        XCTAssertTrue(lock.decide(presentation(victim)).isGrant, "the documented window: the revocation is undone")
    }

    /// Before: cutting the journal records after the last snapshot (up to 64) moved the high-water
    /// mark back to that snapshot's, so a clock then set back opened with a document that had
    /// expired. Now a high-water mark more than the leeway past the snapshot's is snapshotted at
    /// once: every cut leaves it within the leeway, and the clock set back is `clock_rollback`.
    func testNoCutOfRecordsMovesTheHighWaterMarkBackByMoreThanTheLeeway() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let config = try self.config(dir, anchor: false)
        let lock = try EmulatedLock(configuration: config)
        let shortLived = P256.Signing.PrivateKey()
        XCTAssertTrue(lock.decide(presentation(shortLived, [document(shortLived, id: 0xD3, until: 1800)])).isGrant)
        XCTAssertTrue(lock.decide(base.presentation([try base.document()])).isGrant)
        for _ in 0..<40 {                                     // 40 grants, two minutes apart
            try lock.advanceClock(120)
            XCTAssertTrue(lock.decide(base.presentation()).isGrant)
        }
        lock.waitForSnapshots()
        let mark = try XCTUnwrap(lock.engine.trustedClock.highWaterMark)
        // A crash now, then every record after the last snapshot cut from the end of the log.
        let copy = dir + "/crashed"
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        for name in ["state.json", "audit.log", "audit.key"] { try FileManager.default.copyItem(atPath: dir + "/state/" + name, toPath: copy + "/" + name) }
        let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: copy + "/state.json"))) as! [String: Any]
        let head = ((saved["state"] as! [String: Any])["auditHead"] as! [String: Any])["seq"] as! Int
        let lines = try String(contentsOfFile: copy + "/audit.log", encoding: .utf8).split(separator: "\n")
        XCTAssertLessThanOrEqual(lines.count - head, 3, "the snapshot follows the high-water mark: only a few records after it")
        try (lines.prefix(head).joined(separator: "\n") + "\n").write(toFile: copy + "/audit.log", atomically: false, encoding: .utf8)
        XCTAssertNil(try AuditLog.verify(directory: copy).damage, "a cut back to the snapshot's head verifies (the documented window)")
        var crashed = config
        crashed.stateDirectory = copy
        let reopened = try EmulatedLock(configuration: crashed)
        let recovered = try XCTUnwrap(reopened.engine.trustedClock.highWaterMark)
        XCTAssertGreaterThanOrEqual(recovered, mark.addingTimeInterval(-config.policy.clockLeeway), "the mark moved back by at most the leeway")
        // The clock set back (not by an operator) to when the short-lived document was valid.
        try reopened.setClock(base.t0.addingTimeInterval(600), trusted: false)
        XCTAssertEqual(reopened.apply(.presentation(presentation(shortLived))).refusal?.code, "clock_rollback")
    }
}
