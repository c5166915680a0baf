import Foundation
import Synchronization

/// A `lockbench` process talked to line by line.
public final class InteractiveProcess: Sendable {
    public let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private struct Lines {
        var buffer = ""
        var unread: [String] = []
        var seen: [String] = []
    }
    private let lines = Mutex(Lines())

    public init(_ arguments: [String], currentDirectory: URL? = nil) throws {
        process.executableURL = LockBenchProcess.binary
        process.arguments = arguments
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.lines.withLock { l in
                l.buffer += String(decoding: data, as: UTF8.self)
                while let nl = l.buffer.firstIndex(of: "\n") {
                    l.unread.append(String(l.buffer[..<nl]))
                    l.seen.append(String(l.buffer[..<nl]))
                    l.buffer = String(l.buffer[l.buffer.index(after: nl)...])
                }
            }
        }
        try process.run()
    }

    public func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    /// The first line not yet consumed that contains `text`; earlier lines are consumed too.
    public func waitForLine(containing text: String, timeout: TimeInterval = 15) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let found = lines.withLock { l -> String? in
                guard let i = l.unread.firstIndex(where: { $0.contains(text) }) else { return nil }
                let line = l.unread[i]
                l.unread.removeFirst(i + 1)
                return line
            }
            if let found { return found }
            if Date() >= deadline { throw LineTimeout(expected: text, seen: lines.withLock { $0.unread.suffix(5) }) }
            usleep(10_000)
        }
    }

    /// Every line printed so far, consumed or not.
    public var allLines: [String] { lines.withLock { $0.seen } }

    public func terminate() {
        if process.isRunning { process.terminate(); process.waitUntilExit(timeout: 30) }
        output.fileHandleForReading.readabilityHandler = nil
    }
}

public struct LineTimeout: Error, CustomStringConvertible {
    public var expected: String
    public var seen: ArraySlice<String>
    public init(expected: String, seen: ArraySlice<String>) { self.expected = expected; self.seen = seen }
    public var description: String { "no line containing '\(expected)'; last lines: \(seen.joined(separator: " | "))" }
}
