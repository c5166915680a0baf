import ByteCore
import Foundation
import XCTest

/// `Monitor`: the state threads wait on. Every wait here has a deadline.
final class MonitorTests: XCTestCase {
    func testAChangeWakesAWaiterAtOnce() {
        let monitor = Monitor(0)
        Thread.detachNewThread { Thread.sleep(forTimeInterval: 0.05); monitor.withLock { $0 = 1 } }
        let started = Date()
        let ready = monitor.wait(until: started.addingTimeInterval(5), for: { $0 == 1 }) { _, ready in ready }
        XCTAssertTrue(ready)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2, "woken by the change, not by the deadline")
    }

    func testAWaitThatIsNotMetEndsAtItsDeadlineAndSaysSo() {
        let monitor = Monitor(0)
        let started = Date()
        let ready = monitor.wait(until: started.addingTimeInterval(0.1), for: { $0 == 1 }) { _, ready in ready }
        XCTAssertFalse(ready)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.09)
    }

    /// A quiet change (one no waiter waits for: the NFC benchmark's card arrival) wakes no one;
    /// a waiter sees it when it next looks.
    func testAQuietChangeWakesNoWaiter() {
        let monitor = Monitor(0)
        Thread.detachNewThread { Thread.sleep(forTimeInterval: 0.05); monitor.withLockQuietly { $0 = 1 } }
        let started = Date()
        let ready = monitor.wait(until: started.addingTimeInterval(0.5), for: { $0 == 1 }) { _, ready in ready }
        XCTAssertTrue(ready, "the change is there when the waiter looks")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.45, "the waiter slept to its deadline")
        XCTAssertEqual(monitor.withLock { $0 }, 1)
    }
}
