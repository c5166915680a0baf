import BLE
import ByteCore
import Foundation
import Glibc
import XCTest

/// The other two transports against Bumble's controllers: the lock on a serial line (Bumble's
/// `pty:` transport gives a real pseudo-terminal, opened with termios like a USB-serial HCI
/// board) and the phone on a unix socket (`unix-server:`).
final class TransportMatrixTests: XCTestCase {
    func testLockOverUARTAndPhoneOverUnixSocket() throws {
        guard BumbleControllers.isAvailable else { throw MissingTool("bumble is not installed") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lb-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        let tty = dir.appendingPathComponent("lock-uart").path
        let sock = dir.appendingPathComponent("phone.sock").path

        let p = try BumbleControllers.launch(["python3", "-m", "bumble.apps.controllers", "pty:\(tty)", "unix-server:\(sock)"])
        addTeardownBlock { BumbleControllers.stop(p) }
        let deadline = Date(timeIntervalSinceNow: 20)
        while !(FileManager.default.fileExists(atPath: tty) && FileManager.default.fileExists(atPath: sock)) {
            guard Date() < deadline, p.isRunning else { throw MissingTool("bumble controllers did not start") }
            Thread.sleep(forTimeInterval: 0.05)
        }

        var lockConfig = BLELock.Configuration(transport: try TransportSpec(parsing: "uart:\(tty):1000000"))
        lockConfig.log = TestLog("lock").logger
        let lock = try BLELock(configuration: lockConfig, transaction: EchoFlow.lockTransaction())
        lock.start()
        defer { lock.stop() }
        XCTAssertTrue(lock.waitUntilAdvertising(timeout: 10))

        var phoneConfig = BLEPhone.Configuration(transport: try TransportSpec(parsing: "unix:\(sock)"))
        phoneConfig.log = TestLog("phone").logger
        let phone = try BLEPhone(configuration: phoneConfig)
        try phone.start()
        defer { phone.stop() }
        XCTAssertEqual(try phone.unlock(with: EchoCredential()).completion, EchoFlow.granted)
        XCTAssertEqual(try phone.unlock(with: EchoCredential(refuse: true)).completion, EchoFlow.denied)
    }
}
