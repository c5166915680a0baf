import BLE
import ByteCore
import Foundation
import Glibc
import LockBenchTestSupport
import XCTest

/// The other two transports against Bumble's controllers: the lock on a serial line (Bumble's
/// `pty:` transport gives a real pseudo-terminal, opened with termios like a USB-serial HCI
/// board) and the phone on a unix socket (`unix-server:`).
final class TransportMatrixTests: XCTestCase {
    func testLockOverUARTAndPhoneOverUnixSocket() throws {
        guard VirtualControllers.isBumbleInstalled else { throw MissingTool("bumble is not installed") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lb-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        let tty = dir.appendingPathComponent("lock-uart").path
        let sock = dir.appendingPathComponent("phone.sock").path

        let p = try VirtualControllers.launch(["python3", "-m", "bumble.apps.controllers", "pty:\(tty)", "unix-server:\(sock)"])
        addTeardownBlock { VirtualControllers.kill(p) }
        let deadline = Date(timeIntervalSinceNow: 20)
        while !(FileManager.default.fileExists(atPath: tty) && FileManager.default.fileExists(atPath: sock)) {
            guard Date() < deadline, p.isRunning else { throw MissingTool("bumble controllers did not start") }
            Thread.sleep(forTimeInterval: 0.05)
        }

        _ = try startLock(on: "uart:\(tty):1000000")
        let phone = try startPhone(on: "unix:\(sock)")
        XCTAssertEqual(try phone.unlock(with: EchoCredential()).completion, EchoFlow.granted)
        XCTAssertEqual(try phone.unlock(with: EchoCredential(refuse: true)).completion, EchoFlow.denied)
    }
}
