import Foundation

/// A `lockbench` process talked to line by line.
public final class InteractiveProcess {
    public let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer = ""
    private var lines: [String] = []
    private var seen: [String] = []
    private let condition = NSCondition()

    public init(_ arguments: [String], currentDirectory: URL? = nil) throws {
        process.executableURL = LockBenchProcess.binary
        process.arguments = arguments
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            guard let self else { return }
            let data = handle.availableData
            self.condition.lock()
            self.buffer += String(decoding: data, as: UTF8.self)
            while let nl = self.buffer.firstIndex(of: "\n") {
                self.lines.append(String(self.buffer[..<nl]))
                self.seen.append(String(self.buffer[..<nl]))
                self.buffer = String(self.buffer[self.buffer.index(after: nl)...])
            }
            self.condition.broadcast()
            self.condition.unlock()
        }
        try process.run()
    }

    public func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    /// The first line not yet consumed that contains `text`; earlier lines are consumed too.
    public func waitForLine(containing text: String, timeout: TimeInterval = 15) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock(); defer { condition.unlock() }
        while true {
            if let i = lines.firstIndex(where: { $0.contains(text) }) {
                let line = lines[i]
                lines.removeFirst(i + 1)
                return line
            }
            if !condition.wait(until: deadline) {
                throw LineTimeout(expected: text, seen: lines.suffix(5))
            }
        }
    }

    /// Every line printed so far, consumed or not.
    public var allLines: [String] { condition.lock(); defer { condition.unlock() }; return seen }

    public func terminate() {
        if process.isRunning { process.terminate(); process.waitUntilExit() }
        output.fileHandleForReading.readabilityHandler = nil
    }
}

public struct LineTimeout: Error, CustomStringConvertible {
    public var expected: String
    public var seen: ArraySlice<String>
    public init(expected: String, seen: ArraySlice<String>) { self.expected = expected; self.seen = seen }
    public var description: String { "no line containing '\(expected)'; last lines: \(seen.joined(separator: " | "))" }
}
