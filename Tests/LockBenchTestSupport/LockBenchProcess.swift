import Foundation
import XCTest

/// Runs the built `lockbench` binary as a user would (the test target depends on `lockbench`).
public enum LockBenchProcess {
    public struct Result {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// The repository root (the folder holding Package.swift).
    public static var repositoryRoot: URL { Repository.root }

    /// The built `lockbench` executable beside the test bundle.
    public static let binary = Repository.builtProduct("lockbench")

    /// Runs `lockbench args…` (or another built `executable` of the package) to completion.
    public static func run(_ arguments: [String], executable: URL = binary, stdin: String? = nil,
                           environment: [String: String] = [:], currentDirectory: URL? = nil) throws -> Result {
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
    public static func temporaryDirectory(_ test: XCTestCase) throws -> URL {
        try test.temporaryDirectory("lockbench")
    }
}
