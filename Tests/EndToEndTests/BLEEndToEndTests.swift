import Foundation
import Glibc
import XCTest

/// `lockbench ble lock` and `lockbench ble phone` as a user runs them, over Bumble's controllers.
final class BLEEndToEndTests: XCTestCase {
    private func freePort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return UInt16(bigEndian: addr.sin_port)
    }

    private func listening(_ port: UInt16) -> Bool {
        let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
        let local = String(format: "0100007F:%04X", port)
        return table.split(separator: "\n").contains { let f = $0.split(separator: " "); return f.count > 3 && f[1] == local && f[3] == "0A" }
    }

    /// Starts a child that dies with the test process even if the run is killed
    /// (PR_SET_PDEATHSIG survives exec); killed and reaped at teardown.
    private func spawn(_ executable: String, _ args: [String]) throws -> (Process, Pipe) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", "import ctypes, os, sys; ctypes.CDLL(None).prctl(1, 9); os.execv(sys.argv[1], sys.argv[1:])",
                       executable] + args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        addTeardownBlock { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
        return (p, out)
    }

    func testBLELockAndPhoneCommandsOverBumble() throws {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import bumble.apps.controllers"]
        try probe.run()
        probe.waitUntilExit()
        guard probe.terminationStatus == 0 else { throw MissingTool("bumble is not installed") }

        let ports = (freePort(), freePort())
        _ = try spawn("/usr/bin/env", ["python3", "-m", "bumble.apps.controllers", "tcp-server:127.0.0.1:\(ports.0)", "tcp-server:127.0.0.1:\(ports.1)"])
        let deadline = Date(timeIntervalSinceNow: 20)
        while !(listening(ports.0) && listening(ports.1)) && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }

        let dir = try LockBenchProcess.temporaryDirectory(self)
        let snoop = dir.appendingPathComponent("lock.btsnoop").path
        let (lock, lockOut) = try spawn(LockBenchProcess.binary.path, ["ble", "lock", "--ble", "tcp:127.0.0.1:\(ports.0)", "--count", "2", "--btsnoop", snoop])

        let granted = try LockBenchProcess.run(["ble", "phone", "--ble", "tcp:127.0.0.1:\(ports.1)"])
        XCTAssertEqual(granted.status, 0, granted.stderr)
        XCTAssertTrue(granted.stdout.hasPrefix("granted by "), granted.stdout)
        let denied = try LockBenchProcess.run(["ble", "phone", "--ble", "tcp:127.0.0.1:\(ports.1)", "--refuse"])
        XCTAssertEqual(denied.status, 1, denied.stderr)
        XCTAssertTrue(denied.stdout.hasPrefix("denied by "), denied.stdout)

        lock.waitUntilExit()
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
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import bumble.apps.controllers"]
        try probe.run()
        probe.waitUntilExit()
        guard probe.terminationStatus == 0 else { throw MissingTool("bumble is not installed") }

        let dir = try LockBenchProcess.temporaryDirectory(self)
        XCTAssertEqual(try LockBenchProcess.run(["demo", "--directory", dir.path]).status, 0)
        let ports = (freePort(), freePort())
        _ = try spawn("/usr/bin/env", ["python3", "-m", "bumble.apps.controllers", "tcp-server:127.0.0.1:\(ports.0)", "tcp-server:127.0.0.1:\(ports.1)"])
        let deadline = Date(timeIntervalSinceNow: 20)
        while !(listening(ports.0) && listening(ports.1)) && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }

        let config = dir.appendingPathComponent("lock.json").path
        let lock = try InteractiveProcess(["lock", "run", "--config", config, "--ble", "tcp:127.0.0.1:\(ports.0)", "--json"])
        defer { lock.terminate() }
        _ = try lock.waitForLine(containing: "advertising as")

        func phone(_ name: String) throws -> LockBenchProcess.Result {
            try LockBenchProcess.run(["ble", "phone", "--ble", "tcp:127.0.0.1:\(ports.1)",
                                      "--key", dir.appendingPathComponent("\(name).key.pem").path,
                                      "--document", dir.appendingPathComponent("\(name).access.cbor").path,
                                      "--lock-config", config])
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

        let audit = try String(contentsOf: dir.appendingPathComponent("state/audit.log"), encoding: .utf8)
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
