import AccessProtocol
import ByteCore
import Dispatch
import Foundation
import Synchronization
import LockBenchTestSupport
import Lock
import LockRuntime
import XCTest

/// A peer that answers every command slowly with `61 00`, until it gives up.
final class StallingPeer: APDUResponder {
    let delay: TimeInterval
    let patience: Int
    private let count = Atomic(0)
    init(delay: TimeInterval, patience: Int) { self.delay = delay; self.patience = patience }
    func respond(to command: [UInt8]) -> [UInt8] {
        let answered = count.add(1, ordering: .relaxed).newValue
        Thread.sleep(forTimeInterval: delay)
        return answered >= patience ? [0x6F, 0x00] : [0x61, 0x00]
    }
    func reset() {}
}

/// Issue 9 §1.2: one radio's transaction never blocks another's. The lock service used to hold one
/// mutex for a whole transaction, so a BLE peer stalling blocked every NFC tap until it hung up.
final class ConcurrentRadiosTests: XCTestCase {
    func testAStallingPeerDoesNotHoldUpATapOnTheOtherRadio() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lockruntime-concurrent-\(UUID().uuidString.prefix(8))")
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        let provisioning = try LockProvisioning(directory: dir)
        var config = provisioning.configuration
        config.transaction = TransactionLimits(maxCommands: 4000, maxResponseParts: 4000, maxBytes: 1 << 20, maxDuration: 4)
        let service = try LockService(configuration: config)
        let alice = try provisioning.phone(id: "alice")

        let stalled = DispatchSemaphore(value: 0)
        let slow = Monitor<(outcome: TransactionOutcome?, ended: Date)>((nil, .distantFuture))
        let started = Date()
        Thread.detachNewThread {
            let outcome = service.transact(over: InMemoryLink(StallingPeer(delay: 0.2, patience: 40)), interface: .ble)
            slow.withLock { $0 = (outcome, Date()) }
            stalled.signal()
        }
        Thread.sleep(forTimeInterval: 0.5)        // the stalling peer is mid-transaction
        let tap = service.transact(over: InMemoryLink(alice.session), interface: .nfc)
        let tapEnded = Date()
        XCTAssertEqual(stalled.wait(timeout: .now() + 30), .success)
        let (slowOutcome, slowEnded) = slow.withLock { $0 }
        XCTAssertTrue(tap.granted, "\(tap.decision)")
        XCTAssertLessThan(tapEnded, slowEnded, "the NFC tap finished while the BLE peer was still stalling")
        XCTAssertLessThan(tapEnded.timeIntervalSince(started), 3.5, "the tap did not wait for the stalling peer")
        // And the stalling peer is cut off at its bound (4 s), not when it gives up (8 s).
        XCTAssertEqual(slowOutcome?.reason, .transport(.transactionLimit), "\(String(describing: slowOutcome?.decision))")
        XCTAssertLessThan(slowEnded.timeIntervalSince(started), 7)
        // Both are in the audit log, the tap's grant and the peer's transaction_limit.
        let (entries, damage) = try AuditLog.verify(directory: config.stateDirectoryPath)
        XCTAssertNil(damage)
        XCTAssertEqual(entries.map(\.decision), ["grant", "deny"])
        XCTAssertEqual(entries.last?.reason, "transaction_limit")
        XCTAssertEqual(entries.last?.transport, "ble")
    }
}
