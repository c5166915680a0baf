import AccessProtocol
import ByteCore
import Foundation
import Lock
import LockRuntime
import OfflineUnlock
import XCTest

/// Issue 10 §1: the decision is the lock's action. Each tap goes through `EmulatedLock.apply`,
/// the phone hears the bolt's real state, and a jammed lock refuses with its own reason.
final class LockOutcomeTests: XCTestCase {
    func testAGrantReportsTheBoltAsItIsAfterActing() throws {
        let lock = try RunningLock(self).start()
        let phone = try lock.provisioning.phone(id: "alice")
        let outcome = try lock.tap(phone.session)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertTrue(outcome.decided)
        XCTAssertNil(outcome.refusal)
        XCTAssertEqual(lock.service.lock.boltName, "unsecured")
        XCTAssertEqual(phone.session.lastReaderStatus, lock.service.lock.readerStatus)
        XCTAssertEqual(phone.session.lastReaderStatus, 0x0101)
    }

    func testAJammedLockDeniesWithItsOwnReasonAndSaysJammed() throws {
        let lock = try RunningLock(self).start()
        let phone = try lock.provisioning.phone(id: "alice")
        try lock.service.lock.jam()
        let outcome = try lock.tap(phone.session)
        // Before: the engine granted, the audit said grant, the phone heard 0101, the bolt stayed jammed.
        XCTAssertFalse(outcome.granted, "\(outcome.decision)")
        XCTAssertEqual(outcome.refusal?.layer, .lock)
        XCTAssertEqual(outcome.refusal?.code, "jammed")
        XCTAssertEqual(phone.session.lastReaderStatus, 0x0102)
        XCTAssertEqual(lock.service.lock.boltName, "jammed")
        let audit = try lock.audit()
        XCTAssertEqual(audit.last?.decision, "deny")
        XCTAssertEqual(audit.last?.reason, "jammed")
        XCTAssertEqual(audit.last?.transaction, outcome.transactionID)
        // Cleared: the same phone is granted.
        try lock.service.lock.clearJam()
        XCTAssertTrue(try lock.tap(phone.session).granted)
    }

    func testEveryOutcomeIsAttributedToItsLayerAndAuditedOnce() throws {
        let lock = try RunningLock(self).start()
        let cases: [(CredentialSession, Refusal.Layer, String)] = [
            (try lock.provisioning.phone(id: "old", validFrom: Date().addingTimeInterval(-10 * 3600)).session, .engine, "expired"),
            (try lock.provisioning.phone(id: "forger", faults: .wrongSignature).session, .protocol, "bad_credential_signature"),
        ]
        for (session, layer, code) in cases {
            let before = try lock.audit().count
            let outcome = try lock.tap(session)
            XCTAssertEqual(outcome.refusal?.layer, layer, "\(outcome.decision)")
            XCTAssertEqual(outcome.refusal?.code, code)
            let audit = try lock.audit()
            XCTAssertEqual(audit.count, before + 1)
            XCTAssertEqual(audit.last?.reason, code)
        }
    }

    func testApplyIsTheOnePathForRefusalsToo() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lockoutcome-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: dir) }
        let provisioning = try LockProvisioning(directory: dir, clock: "2026-03-02T09:00:00Z")
        let lock = try EmulatedLock(configuration: provisioning.configuration)
        let refused = lock.apply(.refused(Refusal(.protocol(.secureChannelFailure), detail: "AUTH1 response did not open"),
                                          transaction: TransactionID([0xAB]), interface: .ble))
        XCTAssertEqual(refused.audit?.reason, "secure_channel_failure")
        XCTAssertEqual(refused.audit?.transport, "ble")
        XCTAssertEqual(refused.bolt, .secured)
        XCTAssertEqual(lock.audit.head.seq, 1)
    }
}
