import BLE
import Foundation
import Glibc
import LockBenchTestSupport
import XCTest

/// `lockbench ble lock` and `lockbench ble phone` as a user runs them, over Bumble's controllers.
final class BLEEndToEndTests: XCTestCase {
    /// Starts a child that dies with the test process even if the run is killed; killed and
    /// reaped at teardown.
    private func spawn(_ executable: String, _ args: [String]) throws -> (Process, Pipe) {
        let out = Pipe()
        let p = try VirtualControllers.launch([executable] + args, standardOutput: out)
        addTeardownBlock { VirtualControllers.kill(p) }
        return (p, out)
    }

    func testBLELockAndPhoneCommandsOverBumble() throws {
        let controllers = try bumbleControllers()

        let dir = try LockBenchProcess.temporaryDirectory(self)
        let snoop = dir.appendingPathComponent("lock.btsnoop").path
        let (lock, lockOut) = try spawn(LockBenchProcess.binary.path, ["ble", "lock", "--ble", controllers.spec(0), "--count", "2", "--btsnoop", snoop])

        let granted = try LockBenchProcess.run(["ble", "phone", "--ble", controllers.spec(1)])
        XCTAssertEqual(granted.status, 0, granted.stderr)
        XCTAssertTrue(granted.stdout.hasPrefix("granted by "), granted.stdout)
        let denied = try LockBenchProcess.run(["ble", "phone", "--ble", controllers.spec(1), "--refuse"])
        XCTAssertEqual(denied.status, 1, denied.stderr)
        XCTAssertTrue(denied.stdout.hasPrefix("denied by "), denied.stdout)

        lock.waitUntilExit(timeout: 120)
        let lockText = String(decoding: lockOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(lock.terminationStatus, 1, "one of two transactions was denied")
        XCTAssertTrue(lockText.contains("advertising as "), lockText)
        XCTAssertTrue(lockText.contains("granted\ndenied\n"), lockText)
        let size = (try FileManager.default.attributesOfItem(atPath: snoop)[.size] as? NSNumber)?.intValue ?? 0
        XCTAssertGreaterThan(size, 16 + 24 * 20)
    }

    /// The whole thing on BLE: `lockbench lock run --ble` with the engine, and the virtual phone
    /// `lockbench ble phone --key … --document …` with the access protocol's credential: a grant
    /// and a denial (revoked), both in the lock's audit log with transport "ble".
    func testLockRunOnBLEGrantsAndDeniesTheVirtualPhone() throws {
        let site = try startDemoLockOnBLE()
        let lock = site.lock

        func phone(_ name: String) throws -> LockBenchProcess.Result {
            try LockBenchProcess.run(["ble", "phone", "--ble", site.controllers.spec(1)] + site.credential(name))
        }
        let carol = try phone("carol")
        XCTAssertEqual(carol.status, 0, carol.stdout + carol.stderr)
        XCTAssertTrue(carol.stdout.hasPrefix("granted by "), carol.stdout)
        let granted = try lock.waitForLine(containing: "\"kind\":\"granted\"")
        XCTAssertTrue(granted.contains("\"radio\":\"ble\""), granted)

        let alice = try phone("alice")
        XCTAssertEqual(alice.status, 1, alice.stdout + alice.stderr)
        XCTAssertTrue(alice.stdout.hasPrefix("denied by "), alice.stdout)
        let denied = try lock.waitForLine(containing: "\"kind\":\"denied\"")
        XCTAssertTrue(denied.contains("\"reason\":\"revoked\""), denied)

        let audit = try String(contentsOf: site.directory.appendingPathComponent("state/audit.log"), encoding: .utf8)
        let transports = audit.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["transport"] as? String }
        XCTAssertEqual(transports.suffix(2), ["ble", "ble"])
    }

    func testPhoneKeyNeedsAReaderToTrust() throws {
        let r = try LockBenchProcess.run(["ble", "phone", "--ble", "tcp:127.0.0.1:1", "--key", "k.pem"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("--trust-reader"), r.stderr)
    }

    func testBadTransportIsAUsageError() throws {
        let r = try LockBenchProcess.run(["ble", "lock", "--ble", "bluetooth:1"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("unknown BLE transport scheme 'bluetooth'"), r.stderr)
    }

    func testHCIUserChannelFailureExplainsTheFix() throws {
        let fd = socket(31, Int32(SOCK_RAW.rawValue), 1)
        if fd >= 0 { close(fd); throw XCTSkip("this kernel has AF_BLUETOOTH") }
        let r = try LockBenchProcess.run(["ble", "phone", "--ble", "hci0"])
        XCTAssertEqual(r.status, 3, r.stderr)
        XCTAssertTrue(r.stderr.contains("AF_BLUETOOTH"), r.stderr)
        XCTAssertTrue(r.stderr.contains("modprobe bluetooth"), r.stderr)
    }

    func testBLEHelpListsTransports() throws {
        let r = try LockBenchProcess.run(["ble", "--help"])
        XCTAssertEqual(r.status, 0)
        for word in ["lock", "phone", "hci0", "uart:", "tcp:", "unix:"] { XCTAssertTrue(r.stdout.contains(word), word) }
    }
}
