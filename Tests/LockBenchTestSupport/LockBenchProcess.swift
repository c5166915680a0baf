import Foundation
import Synchronization
import XCTest

/// Runs the built `lockbench` binary as a user would (the test target depends on `lockbench`).
public enum LockBenchProcess {
    public struct Result {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        /// The process outlived its `timeout` and was killed (SIGKILL).
        public var timedOut = false
    }

    /// The repository root (the folder holding Package.swift).
    public static var repositoryRoot: URL { Repository.root }

    /// The built `lockbench` executable beside the test bundle.
    public static let binary = Repository.builtProduct("lockbench")

    /// Runs each command line (words split on spaces) in `directory`, as a user types a README's
    /// set-up, failing the test on a non-zero exit; returns what they printed on stdout.
    @discardableResult
    public static func runEach(_ commands: [String], in directory: URL, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        try commands.map { command in
            let r = try run(command.split(separator: " ").map(String.init), currentDirectory: directory)
            XCTAssertEqual(r.status, 0, "lockbench \(command): \(r.stdout)\(r.stderr)", file: file, line: line)
            return r.stdout
        }
    }

    /// The login code `trust device add` printed among `outputs` (empty: none).
    public static func loginCode(in outputs: [String]) -> String {
        for out in outputs {
            if let line = out.split(separator: "\n").first(where: { $0.hasPrefix("login code: ") }) { return String(line.dropFirst("login code: ".count)) }
        }
        return ""
    }

    /// Runs `lockbench args…` (or another built `executable` of the package) to completion.
    /// Starts `lockbench ARGUMENTS` (a server that prints "… 127.0.0.1:PORT" first) and returns the
    /// process, still running, and that port (0 when the first line names none).
    public static func startServer(_ arguments: [String], currentDirectory: URL) throws -> (process: Process, port: UInt16, firstLine: String) {
        let p = Process()
        p.executableURL = binary
        p.currentDirectoryURL = currentDirectory
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: "127.0.0.1:"), let port = UInt16(text[range.upperBound...].prefix { $0.isNumber }) else {
            return (p, 0, text)
        }
        return (p, port, text)
    }

    /// A process still running after `timeout` seconds is killed and the result says so
    /// (`timedOut`), so a command that hangs fails its test instead of hanging the suite.
    public static func run(_ arguments: [String], executable: URL = binary, stdin: String? = nil,
                           environment: [String: String] = [:], currentDirectory: URL? = nil,
                           timeout: TimeInterval = 600) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let dir = currentDirectory { process.currentDirectoryURL = dir }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = input
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        // The killer holds the pid and a flag, not the Process: the scheduled block lives until
        // its deadline, and a Process kept that long would keep its pipes' descriptors open.
        let pid = process.processIdentifier
        let finished = Finished()
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { if !finished.value { kill(pid, SIGKILL) } }
        defer { finished.value = true }
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read both pipes before waiting so a large output cannot deadlock the child.
        var outData = Data(), errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self),
                      timedOut: process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL && Date() >= deadline)
    }

    /// A fresh temporary directory, removed when the test ends.
    public static func temporaryDirectory(_ test: XCTestCase) throws -> URL {
        try test.temporaryDirectory("lockbench")
    }
}

/// Set once the child has been waited for: its pid may be reused after that.
final class Finished: Sendable {
    private let done = Mutex(false)
    var value: Bool {
        get { done.withLock { $0 } }
        set { done.withLock { $0 = newValue } }
    }
}
