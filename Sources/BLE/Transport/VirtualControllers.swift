import Foundation
import Synchronization

/// The launcher for the virtual controllers that CI, the tests and `lockbench-bench ble` run the
/// stack on: Bumble's (`python3 -m bumble.apps.controllers tcp-server:127.0.0.1:P1 …`, N
/// controllers on one local link) or Android's RootCanal (one controller per TCP connection on
/// its HCI port). Ports are free loopback ports; the child dies with this process even when it is
/// killed (PR_SET_PDEATHSIG, set by a python3 trampoline, survives exec), and `stop()` (or
/// deinit) kills and reaps it.
public final class VirtualControllers: Sendable {
    public enum Kind: Sendable { case bumble, rootCanal }

    public let kind: Kind
    /// The HCI ports hosts connect to: one per Bumble controller; RootCanal's single port serves
    /// every connection.
    public let ports: [UInt16]
    private let arguments: [String]
    /// The running child, nil when stopped.
    private let process = Mutex<Process?>(nil)

    /// The `--ble` transport of controller `index` (any index on RootCanal).
    public func spec(_ index: Int) -> String {
        "tcp:127.0.0.1:\(ports[kind == .rootCanal ? 0 : index])"
    }

    /// `count` Bumble controllers on one link. `bumble.apps.controllers` takes exactly two; for
    /// more, `script` names a program taking the same `tcp-server:` arguments
    /// (Tests/BLETests/python/controllers.py).
    public static func bumble(count: Int = 2, script: String? = nil, timeout: TimeInterval = 20) throws(BLEError) -> VirtualControllers {
        guard isBumbleInstalled else { throw BLEError(.controllerUnavailable, "bumble is not installed (pip install bumble)") }
        guard count == 2 || script != nil else { throw BLEError(.controllerUnavailable, "\(count) Bumble controllers need a script; bumble.apps.controllers runs two") }
        let program = script.map { ["python3", $0] } ?? ["python3", "-m", "bumble.apps.controllers"]
        // A port free a moment ago may be taken by the time Python binds it (the controllers then
        // exit at once): up to three tries, each on fresh ports.
        var lastError: BLEError?
        for _ in 0..<3 {
            let ports = (0..<count).map { _ in freePort() }
            let controllers = VirtualControllers(kind: .bumble, ports: ports, arguments: program + ports.map { "tcp-server:127.0.0.1:\($0)" })
            do { try controllers.start(timeout: timeout); return controllers } catch { lastError = error }
        }
        throw lastError ?? BLEError(.controllerUnavailable, "bumble controllers did not start")
    }

    /// RootCanal (`pip install rootcanal==1.10.0`); its binary runs directly, since
    /// `python3 -m rootcanal` would leave it orphaned when killed.
    public static func rootCanal(timeout: TimeInterval = 20) throws(BLEError) -> VirtualControllers {
        guard let binary = rootCanalBinary else { throw BLEError(.controllerUnavailable, "rootcanal is not installed (pip install rootcanal==1.10.0)") }
        let hci = freePort()
        let controllers = VirtualControllers(kind: .rootCanal, ports: [hci], arguments: [
            binary, "-hci_port", "\(hci)", "-link_port", "\(freePort())", "-link_ble_port", "\(freePort())", "-test_port", "\(freePort())",
        ])
        try controllers.start(timeout: timeout)
        return controllers
    }

    private init(kind: Kind, ports: [UInt16], arguments: [String]) {
        self.kind = kind
        self.ports = ports
        self.arguments = arguments
    }

    deinit { stop() }

    /// Starts the controllers (again, after `stop()`, on the same ports) and waits until every
    /// port listens.
    public func start(timeout: TimeInterval = 20) throws(BLEError) {
        stop()
        let p = try VirtualControllers.launch(arguments)
        process.withLock { $0 = p }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !ports.allSatisfy(VirtualControllers.isListening) {
            guard Date() < deadline, p.isRunning else {
                stop()
                throw BLEError(.controllerUnavailable, "\(kind == .bumble ? "bumble controllers" : "rootcanal") did not start")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Kills and reaps the controllers (the hosts on them see the transport close).
    public func stop() {
        guard let p = process.withLock({ $0.take() }) else { return }
        VirtualControllers.kill(p)
    }

    // MARK: Children that die with the parent

    /// Starts `arguments` (argv[0] looked up on PATH) so that it dies with this process even when
    /// this process is killed: PR_SET_PDEATHSIG survives exec.
    public static func launch(_ arguments: [String], standardOutput: Pipe? = nil) throws(BLEError) -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", "import ctypes, os, sys; ctypes.CDLL(None).prctl(1, 9); os.execvp(sys.argv[1], sys.argv[1:])"] + arguments
        p.standardOutput = standardOutput ?? FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { throw BLEError(.controllerUnavailable, "cannot start \(arguments.first ?? ""): \(error)") }
        return p
    }

    /// Kills and reaps a launched process (unconditionally: `isRunning` is not trusted).
    public static func kill(_ p: Process) {
        Syscalls.killHard(p.processIdentifier)
        p.waitUntilExit()
    }

    // MARK: Ports and tools

    /// A loopback TCP port that was free a moment ago.
    public static func freePort() -> UInt16 { Syscalls.freeLoopbackPort() }

    /// Whether something listens on `port`, read from the kernel's socket tables rather than by
    /// connecting: Bumble's tcp-server serves one host, and a probe's close would detach a host
    /// that connected meanwhile.
    public static func isListening(_ port: UInt16) -> Bool {
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return Syscalls.loopbackAccepts(port: port) }
        let table6 = (try? String(contentsOfFile: "/proc/net/tcp6", encoding: .utf8)) ?? ""
        let locals = [String(format: "0100007F:%04X", port), String(format: "00000000:%04X", port)]
        let anyV6 = String(format: ":%04X", port)
        return (table + table6).split(separator: "\n").contains { line in
            let f = line.split(separator: " ")
            return f.count > 3 && (locals.contains(String(f[1])) || f[1].hasSuffix(anyV6) && f[1].count > 20) && f[3] == "0A"
        }
    }

    /// Whether `python3 -c "import bumble.apps.controllers"` succeeds.
    public static var isBumbleInstalled: Bool { python(["-c", "import bumble.apps.controllers"]) != nil }

    /// The rootcanal binary inside the pip package, if installed.
    public static let rootCanalBinary: String? = {
        guard let path = python(["-c", "import rootcanal.binaries as b; print(b.get_package_binary_resource_path('rootcanal'))"]),
              FileManager.default.isExecutableFile(atPath: path) else { return nil }
        return path
    }()

    /// python3's trimmed stdout, or nil if it could not run or failed.
    private static func python(_ arguments: [String]) -> String? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3"] + arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return nil }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        p.waitUntilExit()
        return p.terminationStatus == 0 ? text : nil
    }
}
