import BLE
import ByteCore
import Foundation
import XCTest

/// (b) The Swift lock and the Swift virtual phone over Bumble's virtual controllers.
final class LockPhoneTests: XCTestCase {
    func testSwiftPhoneUnlocksSwiftLockOverBumble() throws {
        let controllers = try BumbleControllers(test: self)
        let lockLog = TestLog("lock"), phoneLog = TestLog("phone")
        var lockConfig = BLELock.Configuration(transport: try TransportSpec(parsing: controllers.lockSpec))
        lockConfig.log = lockLog.logger
        let decisions = Decisions()
        let lock = try BLELock(configuration: lockConfig, transaction: EchoFlow.lockTransaction { decisions.add($0) })
        lock.start()
        defer { lock.stop() }
        XCTAssertTrue(lock.waitUntilAdvertising(timeout: 10))

        var phoneConfig = BLEPhone.Configuration(transport: try TransportSpec(parsing: controllers.phoneSpec))
        phoneConfig.log = phoneLog.logger
        let phone = try BLEPhone(configuration: phoneConfig)
        try phone.start()
        defer { phone.stop() }

        let outcome = try phone.unlock(with: EchoCredential())
        XCTAssertEqual(outcome.commandsAnswered, 3)
        XCTAssertEqual(outcome.completion, EchoFlow.granted)

        let denied = try phone.unlock(with: EchoCredential(refuse: true))
        XCTAssertEqual(denied.completion, EchoFlow.denied)
        XCTAssertEqual(decisions.all, [true, false])
        XCTAssertEqual(lock.selectedVersion, [0x01, 0x00])
    }
}

final class Decisions: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [Bool] = []
    func add(_ d: Bool) { lock.withLock { list.append(d) } }
    var all: [Bool] { lock.withLock { list } }
}
