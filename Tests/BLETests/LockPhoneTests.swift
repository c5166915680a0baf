import BLE
import ByteCore
import Foundation
import LockBenchTestSupport
import XCTest

/// (b) The Swift lock and the Swift virtual phone over Bumble's virtual controllers.
final class LockPhoneTests: XCTestCase {
    func testSwiftPhoneUnlocksSwiftLockOverBumble() throws {
        let controllers = try bumbleControllers()
        let decisions = Decisions()
        let lock = try startLock(on: controllers.spec(0), transaction: EchoFlow.lockTransaction { decisions.add($0) })
        let phone = try startPhone(on: controllers.spec(1))

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

/// HCI behaviour against Bumble's real controller: commands it never answers time out and give
/// the credit back; failed commands throw with the status; the host keeps working.
final class HostCommandTests: XCTestCase {
    func testUnansweredCommandTimesOutAndFailedCommandReportsStatus() throws {
        let controllers = try bumbleControllers()
        let log = TestLog("host")
        var config = BLEHost.Configuration(open: { () throws(BLEError) in try TransportSpec(parsing: controllers.spec(0)).open() },
                                           addressSeed: 7, services: [], log: log.logger)
        config.commandTimeout = 0.5
        let host = BLEHost(configuration: config)
        host.start()
        defer { host.stop() }
        XCTAssertTrue(host.waitUntilReady(timeout: 10))
        XCTAssertEqual(host.ownAddress.type, 1, "Bumble's BD_ADDR is zero: a static random address is used")

        // LE_Encrypt (0x2017): Bumble's controller sends no event at all.
        let t0 = Date()
        XCTAssertThrowsError(try host.command(.unknown(opcode: 0x2017, parameters: [UInt8](repeating: 0, count: 32)))) {
            XCTAssertEqual(($0 as? BLEError)?.code, .commandTimeout)
        }
        XCTAssertLessThan(Date().timeIntervalSince(t0), 3)
        // The credit came back: the next command goes through.
        XCTAssertEqual(try host.command(.leReadBufferSize).first, 0)
        // LE_Set_Data_Length (0x2022) completes with status 0x01 on Bumble: an error, never fatal.
        XCTAssertThrowsError(try host.command(.unknown(opcode: 0x2022, parameters: [0x01, 0x00, 0xFB, 0x00, 0x48, 0x08]))) {
            XCTAssertEqual(($0 as? BLEError)?.code, .commandFailed)
        }
        XCTAssertEqual(try host.command(.readBDADDR).first, 0)
        XCTAssertTrue(host.isReady)
    }
}

/// Two phones at once (Swift phone and Bumble's host) on one lock: three Bumble controllers on
/// one link; each transaction waits until both are in progress, so they overlap.
final class MultipleConnectionTests: XCTestCase {
    func testLockServesTwoPhonesAtOnce() throws {
        let controllers = try bumbleControllers(count: 3)
        let inProgress = Monitor(0)
        let overlap = Decisions()
        let lock = try startLock(on: controllers.spec(0), transaction: { session in
            // Wait (bounded) until the other phone's transaction is in progress too.
            inProgress.withLock { $0 += 1 }
            overlap.add(inProgress.wait(until: Date(timeIntervalSinceNow: 10), for: { $0 >= 2 }) { _, both in both })
            return EchoFlow.lockTransaction()(session)
        })

        final class Box: @unchecked Sendable { var json: [String: Any] = [:] }
        let bumble = Box()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            bumble.json = (try? BumblePhoneScript.run(port: controllers.ports[2], credential: "echo")) ?? [:]
            group.leave()
        }
        let phone = try startPhone(on: controllers.spec(1), configure: { $0.responseTimeout = 15 })
        let swift = try phone.unlock(with: EchoCredential())
        group.wait()
        XCTAssertEqual(swift.completion, EchoFlow.granted)
        XCTAssertEqual(bumble.json["completion"] as? String, "00020001", "\(bumble.json)")
        XCTAssertEqual(lock.transactionCount, 2)
        XCTAssertTrue(overlap.all.contains(true), "the two transactions did not overlap")
    }
}

/// The same lock and phone on Android's RootCanal (enhanced connection complete, public
/// addresses, fragmented ACL, 30 ms connection intervals).
final class RootCanalTests: XCTestCase {
    func testSwiftPhoneUnlocksSwiftLockOverRootCanal() throws {
        let rootcanal = try rootCanal()
        let lock = try startLock(on: rootcanal.spec(0))
        XCTAssertEqual(lock.host.ownAddress.type, 0, "RootCanal has a public address")
        let phone = try startPhone(on: rootcanal.spec(1))
        XCTAssertEqual(try phone.unlock(with: EchoCredential()).completion, EchoFlow.granted)
        XCTAssertEqual(try phone.unlock(with: EchoCredential(refuse: true)).completion, EchoFlow.denied)
    }
}

/// A phone that walks away mid-transaction: the reader's transceive fails, the transaction ends
/// (denied), and the lock serves the next phone.
final class AbandonedTransactionTests: XCTestCase {
    func testPhoneLeavingMidTransactionDoesNotWedgeTheLock() throws {
        let controllers = try bumbleControllers()
        let decisions = Decisions()
        let lock = try startLock(on: controllers.spec(0), transaction: EchoFlow.lockTransaction { decisions.add($0) })
        let phone = try startPhone(on: controllers.spec(1))

        let session = try phone.connectToLock()
        try session.discover()
        let channel = try session.openChannel()
        let first = try AliroFrame(parsing: try channel.receive(timeout: 5))
        XCTAssertEqual(first, AliroFrame.command(EchoFlow.select))
        session.disconnect()
        XCTAssertTrue(waitUntil(10) { lock.host.connectionCount == 0 })
        XCTAssertTrue(waitUntil(10) { decisions.all == [false] }, "\(decisions.all)")

        XCTAssertEqual(try phone.unlock(with: EchoCredential()).completion, EchoFlow.granted)
        XCTAssertEqual(decisions.all, [false, true])
    }

    private func waitUntil(_ seconds: TimeInterval, _ condition: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline { if condition() { return true }; Thread.sleep(forTimeInterval: 0.05) }
        return condition()
    }
}
