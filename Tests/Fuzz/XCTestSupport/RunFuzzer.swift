import Foundation
import XCTest

// One file, compiled into each test target that runs fuzz targets (CodecsTests, NFCTests,
// BLETests: each holds a symlink to Tests/Fuzz/XCTestSupport/RunFuzzer.swift), so the helper
// exists once without a test-support target.

/// Where the fuzz recipe lives and which build products it links.
enum FuzzRecipe {
    static let repositoryRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        fatalError("Package.swift not found above \(#filePath)")
    }()

    /// The build products directory holding this test bundle (…/.build/<triple>/debug).
    static var buildDirectory: URL {
        var dir = Bundle.main.bundleURL
        for _ in 0..<3 {
            if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Modules/Crypto.swiftmodule").path) { return dir }
            dir.deleteLastPathComponent()
        }
        return repositoryRoot.appendingPathComponent(".build/debug")
    }
}

extension XCTestCase {
    /// Runs the libFuzzer recipe of docs/fuzzing.md for a short while: compiles
    /// Tests/Fuzz/<target>.swift with its module's sources under -sanitize=fuzzer,address, links
    /// the debug build products this test bundle was built with, and runs `runs` inputs from the
    /// seed corpus. A crash, a sanitizer report or a broken property is a non-zero exit and fails
    /// the test with the fuzzer's output.
    func runFuzzer(_ target: String, runs: Int = 20_000) throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: out) }
        let process = Process()
        process.executableURL = FuzzRecipe.repositoryRoot.appendingPathComponent("Tests/Fuzz/fuzz.sh")
        process.arguments = [target, "-runs=\(runs)", "-seed=1"]
        var env = ProcessInfo.processInfo.environment
        env["LOCKBENCH_BUILD_DIR"] = FuzzRecipe.buildDirectory.path
        env["LOCKBENCH_FUZZ_OUT"] = out.path
        process.environment = env
        let log = out.appendingPathComponent("fuzz.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        process.waitUntilExit()
        try handle.close()
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        XCTAssertEqual(process.terminationStatus, 0, "fuzz target \(target) failed:\n\(text.suffix(6000))")
        XCTAssertTrue(text.contains("Done \(runs) runs"), "fuzzer did not finish its runs:\n\(text.suffix(3000))")
    }
}
