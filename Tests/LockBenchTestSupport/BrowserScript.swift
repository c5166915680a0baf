import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A Selenium script of Tests/EndToEndTests/python run in headless Chromium as a child process:
/// the test reads what it prints (with deadlines), and the process is killed when the test is
/// done with it. Screenshots go to `.build/test-artifacts/console`.
public final class BrowserScript {
    public let process = Process()
    private let output = Pipe()
    private let errors: PipeDrain
    /// Everything the script printed so far.
    public private(set) var seen = ""

    public static var screenshots: URL {
        get throws {
            let dir = Repository.root.appendingPathComponent(".build/test-artifacts/console")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            return dir
        }
    }

    public init(_ script: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Repository.root.appendingPathComponent("Tests/EndToEndTests/python/" + script).path] + arguments
        process.standardOutput = output
        let errorPipe = Pipe()
        process.standardError = errorPipe
        errors = PipeDrain(errorPipe)
        try process.run()
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    /// Reads until `enough(seen)` holds, the script prints `error`, or `timeout` passes (then the
    /// script is killed); returns everything seen so far.
    @discardableResult
    public func read(timeout: TimeInterval, until enough: @escaping (String) -> Bool) -> String {
        let before = seen
        seen += LockBenchProcess.readOutput(of: process, from: output, timeout: timeout) { enough(before + $0) || $0.contains("error") }
        return seen
    }

    /// The first line printed that starts with `prefix`.
    public func line(startingWith prefix: String) -> String? {
        seen.split(separator: "\n").first { $0.hasPrefix(prefix) }.map(String.init)
    }

    /// What the script wrote on standard error (a Python traceback, chromedriver's complaint).
    public var errorText: String { errors.text }

    /// `lockbench console ARGS --port 0`, and the URL it listens on.
    public static func console(_ arguments: [String]) throws -> (InteractiveProcess, String) {
        let console = try InteractiveProcess(["console"] + arguments + ["--port", "0"])
        let listening = try console.waitForLine(containing: "console listening on http://", timeout: 60)
        guard let url = listening.split(separator: " ").last.map(String.init) else {
            console.terminate()
            throw LineTimeout(expected: "the console's URL", seen: [listening])
        }
        return (console, url)
    }
}
