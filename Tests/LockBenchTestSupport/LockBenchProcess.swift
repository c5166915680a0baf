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

    /// Starts `lockbench ARGUMENTS` (a server that prints "… 127.0.0.1:PORT" first) and returns the
    /// process, still running, and that port (0 when the first line names none).
    public static func startServer(_ arguments: [String], currentDirectory: URL, timeout: TimeInterval = 60) throws -> (process: Process, port: UInt16, firstLine: String) {
        let p = Process()
        p.executableURL = binary
        p.currentDirectoryURL = currentDirectory
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let text = readOutput(of: p, from: out, timeout: timeout) { $0.contains("\n") }
        guard let range = text.range(of: "127.0.0.1:"), let port = UInt16(text[range.upperBound...].prefix { $0.isNumber }) else {
            return (p, 0, text)
        }
        return (p, port, text)
    }

    /// What `process` writes to `pipe` until `enough` holds for it, the pipe ends, or `timeout`
    /// passes (then the process is killed, so a server that never says it is ready fails its test
    /// instead of hanging the suite).
    public static func readOutput(of process: Process, from pipe: Pipe, timeout: TimeInterval,
                                  until enough: (String) -> Bool) -> String {
        let fd = pipe.fileHandleForReading.fileDescriptor
        let deadline = Date().addingTimeInterval(timeout)
        var seen = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !enough(String(decoding: seen, as: UTF8.self)) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else {
                kill(process.processIdentifier, SIGKILL)
                return String(decoding: seen, as: UTF8.self) + "\n[no answer within \(Int(timeout)) s: killed]"
            }
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&ready, 1, Int32(min(left, 1) * 1000)) <= 0 { continue }
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            seen += buffer[0..<n]
        }
        return String(decoding: seen, as: UTF8.self)
    }

    /// Runs `lockbench args…` (or another built `executable` of the package) to completion; a
    /// process still running after `timeout` seconds is killed and the result says so (`timedOut`).
    public static func run(_ arguments: [String], executable: URL = binary, stdin: String? = nil,
                           environment: [String: String] = [:], currentDirectory: URL? = nil,
                           timeout: TimeInterval = 300) throws -> Result {
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
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read both pipes before waiting so a large output cannot deadlock the child; a child that
        // outlives `timeout` is killed, so a hang fails its test instead of stalling the suite.
        let outData = PipeDrain(out), errData = PipeDrain(err)
        var timedOut = false
        if !outData.wait(until: Date().addingTimeInterval(timeout)) {
            timedOut = true
            kill(process.processIdentifier, SIGKILL)
        }
        _ = outData.wait(until: .distantFuture)
        _ = errData.wait(until: .distantFuture)
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: outData.text,
                      stderr: errData.text + (timedOut ? "\n[lockbench \(arguments.joined(separator: " ")) still running after \(Int(timeout)) s: killed]" : ""),
                      timedOut: timedOut)
    }

    /// A fresh temporary directory, removed when the test ends.
    public static func temporaryDirectory(_ test: XCTestCase) throws -> URL {
        try test.temporaryDirectory("lockbench")
    }
}

/// Reads a pipe to its end on a thread of its own.
public final class PipeDrain: Sendable {
    private let data = Mutex(Data())
    /// Left once the pipe has ended: a group, so every later wait returns at once.
    private let done = DispatchGroup()

    public init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        done.enter()
        Thread { [self] in
            let all = handle.readDataToEndOfFile()
            data.withLock { $0 = all }
            done.leave()
        }.start()
    }

    /// True once the pipe has ended; false when `deadline` passed first.
    public func wait(until deadline: Date) -> Bool {
        done.wait(timeout: .now() + min(deadline.timeIntervalSinceNow, 86_400)) == .success
    }

    public var text: String { String(decoding: data.withLock { $0 }, as: UTF8.self) }
}

extension Process {
    /// Waits until the process ends, or kills it once `timeout` passes (a hung child fails its
    /// test instead of stalling the suite); true when it ended by itself.
    @discardableResult
    public func waitUntilExit(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning && Date() < deadline { usleep(20_000) }
        let ended = !isRunning
        if !ended { kill(processIdentifier, SIGKILL) }
        waitUntilExit()
        return ended
    }
}
