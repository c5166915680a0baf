import Foundation
import Glibc
import XCTest

/// A fresh `python3 -m bumble.apps.controllers` process (two controllers on one local link) on
/// free loopback ports, per test; killed at teardown.
final class BumbleControllers {
    let ports: (UInt16, UInt16)
    /// Ports of controllers beyond the first two (Tests/BLETests/python/controllers.py).
    let extraPorts: [UInt16]
    private var process: Process?

    var lockSpec: String { "tcp:127.0.0.1:\(ports.0)" }
    var phoneSpec: String { "tcp:127.0.0.1:\(ports.1)" }

    static var isAvailable: Bool {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", "import bumble.apps.controllers"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }

    init(test: XCTestCase, count: Int = 2) throws {
        guard BumbleControllers.isAvailable else { throw MissingTool("bumble is not installed (pip install bumble)") }
        ports = (BumbleControllers.freePort(), BumbleControllers.freePort())
        extraPorts = (2..<max(2, count)).map { _ in BumbleControllers.freePort() }
        test.addTeardownBlock { [self] in self.kill() }
        try start()
    }

    /// Starts `arguments` so that it dies with this process even when the test run is killed
    /// (PR_SET_PDEATHSIG survives exec), and never outlives a crashed or interrupted run.
    static func launch(_ arguments: [String]) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", "import ctypes, os, sys; ctypes.CDLL(None).prctl(1, 9); os.execvp(sys.argv[1], sys.argv[1:])"] + arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        return p
    }

    /// Kills and reaps a launched process (unconditionally: `isRunning` is not trusted).
    static func stop(_ p: Process) {
        Glibc.kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
    }

    func start() throws {
        let p: Process
        let all = [ports.0, ports.1] + extraPorts
        if extraPorts.isEmpty {
            p = try BumbleControllers.launch(["python3", "-m", "bumble.apps.controllers"] + all.map { "tcp-server:127.0.0.1:\($0)" })
        } else {
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("python/controllers.py").path
            p = try BumbleControllers.launch(["python3", script] + all.map { "tcp-server:127.0.0.1:\($0)" })
        }
        process = p
        let deadline = Date(timeIntervalSinceNow: 20)
        // Probe by reading the kernel's listening sockets, not by connecting: Bumble's tcp-server
        // serves one host, and a probe's close would detach a host that connected meanwhile.
        while !all.allSatisfy(BumbleControllers.listening) {
            guard Date() < deadline, p.isRunning else {
                kill()
                throw MissingTool("bumble controllers did not start")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    static func listening(_ port: UInt16) -> Bool {
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return accepts(port) }
        let locals = [String(format: "0100007F:%04X", port), String(format: "00000000:%04X", port)]
        let table6 = (try? String(contentsOfFile: "/proc/net/tcp6", encoding: .utf8)) ?? ""
        return (table + table6).split(separator: "\n").contains { line in
            let f = line.split(separator: " ")
            return f.count > 3 && (locals.contains(String(f[1])) || f[1].hasSuffix(String(format: ":%04X", port)) && f[1].count > 20) && f[3] == "0A"
        }
    }

    func kill() {
        guard let p = process else { return }
        BumbleControllers.stop(p)
        process = nil
    }

    static func freePort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return UInt16(bigEndian: addr.sin_port)
    }

    static func accepts(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = port.bigEndian
        return withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
    }
}

/// Collects log lines (printed when LOCKBENCH_BLE_LOG is set).
final class TestLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    let prefix: String
    init(_ prefix: String) { self.prefix = prefix }
    var logger: @Sendable (String) -> Void {
        { [self] line in
            lock.withLock { lines.append(line) }
            if ProcessInfo.processInfo.environment["LOCKBENCH_BLE_LOG"] != nil { FileHandle.standardError.write(Data("[\(prefix)] \(line)\n".utf8)) }
        }
    }
    var all: [String] { lock.withLock { lines } }
}

/// Android's RootCanal (`pip install rootcanal==1.10.0`): one controller per TCP connection on
/// its HCI port, LE Enhanced Connection Complete, public addresses, 27-byte ACL fragments and
/// real connection intervals.
final class RootCanal {
    let hciPort: UInt16
    private var process: Process?
    var spec: String { "tcp:127.0.0.1:\(hciPort)" }

    /// The rootcanal binary inside the pip package (run directly: `python3 -m rootcanal` would
    /// leave it orphaned when killed).
    static let binary: String? = {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", "import rootcanal.binaries as b; print(b.get_package_binary_resource_path('rootcanal'))"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return nil }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        p.waitUntilExit()
        return p.terminationStatus == 0 && FileManager.default.isExecutableFile(atPath: text) ? text : nil
    }()

    init(test: XCTestCase) throws {
        guard let binary = RootCanal.binary else { throw MissingTool("rootcanal is not installed (pip install rootcanal==1.10.0)") }
        hciPort = BumbleControllers.freePort()
        let p = try BumbleControllers.launch([binary, "-hci_port", "\(hciPort)", "-link_port", "\(BumbleControllers.freePort())",
                                              "-link_ble_port", "\(BumbleControllers.freePort())", "-test_port", "\(BumbleControllers.freePort())"])
        process = p
        test.addTeardownBlock { BumbleControllers.stop(p) }
        let deadline = Date(timeIntervalSinceNow: 20)
        while !BumbleControllers.listening(hciPort) {
            guard Date() < deadline, p.isRunning else { throw MissingTool("rootcanal did not start") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}

/// A tool the README installs is missing or did not start: a failure, never a skip, so CI cannot
/// pass without having run the test (.ci/run installs every tool).
struct MissingTool: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description + " — install what the README lists" }
}
