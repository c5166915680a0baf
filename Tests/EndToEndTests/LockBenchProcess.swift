import Foundation
import XCTest

/// Runs the built `lockbench` binary as a user would, and finds the repository's files.
enum LockBenchProcess {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The repository root (the folder holding Package.swift).
    static let repositoryRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        fatalError("Package.swift not found above \(#filePath)")
    }()

    /// The built `lockbench` executable beside the test bundle.
    static let binary: URL = {
        var dir = Bundle.main.bundleURL
        for _ in 0..<3 {
            let candidate = dir.appendingPathComponent("lockbench")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir.deleteLastPathComponent()
        }
        fatalError("lockbench binary not found near \(Bundle.main.bundleURL.path); run `swift build` first")
    }()

    /// Runs `lockbench args…` to completion.
    static func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
                    currentDirectory: URL? = nil) throws -> Result {
        let process = Process()
        process.executableURL = binary
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
                      stderr: String(decoding: errData, as: UTF8.self))
    }

    /// A fresh temporary directory, removed when the test ends.
    static func temporaryDirectory(_ test: XCTestCase) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }
}

final class VersionEndToEndTests: XCTestCase {
    func testVersionNamesLockBenchAndRuntimeLibNFC() throws {
        let result = try LockBenchProcess.run(["--version"])
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.stdout.hasPrefix("LockBench "), result.stdout)
        XCTAssertTrue(result.stdout.contains("libnfc 1."), result.stdout)
    }

    func testUnknownFlagIsAUsageError() throws {
        let result = try LockBenchProcess.run(["--no-such-flag"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains("--no-such-flag"), result.stderr)
    }
}
