import Foundation
import Synchronization

/// A command run on a pseudo-terminal, as a person runs it: util-linux `script` opens the pty,
/// makes it the command's controlling terminal (a new session, so an interactive shell gets job
/// control) and relays it: what we write is typed, what the terminal shows we read. Every wait
/// has a deadline; `terminate()` (call it in `defer`) kills the session and everything on it.
public final class TerminalSession: Sendable {
    public let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let text = Mutex("")

    /// Runs `command` (a shell command line) on a fresh pty in `directory`, with `environment` added.
    public init(_ command: String, currentDirectory: URL? = nil, environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        // -q quiet, -f flush at once, -e the command's exit status, -c the command; no typescript file.
        process.arguments = ["-qfec", command, "/dev/null"]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
    }

    /// An interactive bash (job control on) in `directory` with the built binaries first on PATH,
    /// as a person's shell; end it with `endInteractiveShell()`.
    public static func interactiveShell(in directory: URL) throws -> TerminalSession {
        let bin = LockBenchProcess.binary.deletingLastPathComponent().path
        return try TerminalSession("bash --norc --noprofile -i", currentDirectory: directory,
                                   environment: ["PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                                                 "TERM": "dumb"])
    }

    /// Stops the shell's first two background jobs, exits it, and kills what is left.
    public func endInteractiveShell() {
        type("kill %1 %2 2>/dev/null; exit")
        _ = waitForExit(timeout: 10)
        terminate()
    }

    /// Whether util-linux `script` is here (the pty tests need it).
    public static var available: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/script") }

    /// Types `line` and Enter.
    public func type(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    /// Everything the terminal showed so far.
    public var shown: String { text.withLock { $0 } }

    /// Waits until the terminal has shown `needle` after position `from` (a count of characters
    /// shown before); returns the position just past it.
    @discardableResult
    public func waitFor(_ needle: String, from: Int = 0, timeout: TimeInterval = 30) throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let text = shown
            let start = text.index(text.startIndex, offsetBy: min(from, text.count))
            if let r = text.range(of: needle, range: start..<text.endIndex) { return text.distance(from: text.startIndex, to: r.upperBound) }
            if Date() >= deadline { throw LineTimeout(expected: needle, seen: [String(text.suffix(800))]) }
            usleep(10_000)
        }
    }

    /// Waits for the session to end by itself, up to `timeout`; false when it is still running.
    public func waitForExit(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        return !process.isRunning
    }

    /// Kills the session: `script` and, as the pty's controlling process goes, its session gets SIGHUP.
    public func terminate() {
        if process.isRunning {
            process.terminate()
            if !waitForExit(timeout: 5) { kill(process.processIdentifier, SIGKILL) }
            _ = waitForExit(timeout: 5)
        }
        output.fileHandleForReading.readabilityHandler = nil
    }
}
