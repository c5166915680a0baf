import Foundation
@testable import Lock
import Synchronization
import XCTest

final class LockStateMachineTests: XCTestCase {
    let t0 = Date(timeIntervalSince1970: 1_772_442_000)

    func testGrantUnsecuresThenRelocksOnTime() {
        var m = LockStateMachine(relockTime: 5)
        XCTAssertEqual(m.readerStatus(at: t0), 0x0100)
        XCTAssertEqual(m.handle(.grant, at: t0), [.unsecure(relockAt: t0.addingTimeInterval(5))])
        XCTAssertEqual(m.readerStatus(at: t0.addingTimeInterval(4)), 0x0101)
        XCTAssertEqual(m.handle(.tick, at: t0.addingTimeInterval(4)), [])
        XCTAssertEqual(m.handle(.tick, at: t0.addingTimeInterval(5)), [.secure])
        XCTAssertEqual(m.state, .secured)
        // Reads as secured past the relock time even without a tick.
        m.handle(.grant, at: t0)
        XCTAssertEqual(m.state(at: t0.addingTimeInterval(6)), .secured)
        XCTAssertEqual(m.name(at: t0.addingTimeInterval(1)), "unsecured")
    }

    func testSecondGrantExtends() {
        var m = LockStateMachine(relockTime: 5)
        m.handle(.grant, at: t0)
        XCTAssertEqual(m.handle(.grant, at: t0.addingTimeInterval(3)), [.unsecure(relockAt: t0.addingTimeInterval(8))])
    }

    func testJammedIgnoresGrantsUntilCleared() {
        var m = LockStateMachine(relockTime: 5)
        XCTAssertEqual(m.handle(.jam, at: t0), [.reportJammed])
        XCTAssertEqual(m.handle(.grant, at: t0), [.reportJammed])
        XCTAssertEqual(m.readerStatus(at: t0), 0x0102)
        XCTAssertEqual(m.handle(.clearJam, at: t0), [.secure])
        XCTAssertEqual(m.handle(.clearJam, at: t0), [])
        m.handle(.grant, at: t0)
        XCTAssertEqual(m.handle(.secureNow, at: t0), [.secure])
    }

    func testCodableRoundTrip() throws {
        var m = LockStateMachine(relockTime: 5)
        m.handle(.grant, at: t0)
        XCTAssertEqual(try JSONDecoder().decode(LockStateMachine.self, from: JSONEncoder().encode(m)), m)
    }
}

final class VirtualClockTests: XCTestCase {
    func testFrozenSetAdvance() {
        let t = Date(timeIntervalSince1970: 1_000_000)
        let c = VirtualClock(.frozen(t))
        XCTAssertEqual(c.now(), t)
        c.advance(3600)
        XCTAssertEqual(c.now(), t.addingTimeInterval(3600))
        c.advance(-7200)
        XCTAssertEqual(c.now(), t.addingTimeInterval(-3600))
        c.set(t)
        XCTAssertEqual(c.mode, .frozen(t))
    }

    func testRunningFollowsSystemWithOffset() {
        final class SystemTime: Sendable { let date = Mutex(Date(timeIntervalSince1970: 5_000)) }
        let system = SystemTime()
        let c = VirtualClock(.running(offset: 0), systemNow: { system.date.withLock { $0 } })
        c.set(Date(timeIntervalSince1970: 10_000))
        system.date.withLock { $0 = $0.addingTimeInterval(30) }
        XCTAssertEqual(c.now(), Date(timeIntervalSince1970: 10_030))
        c.advance(60)
        XCTAssertEqual(c.now(), Date(timeIntervalSince1970: 10_090))
    }
}
