import Foundation
import XCTest

extension XCTestCase {
    /// Runs the libFuzzer recipe of docs/fuzzing.md for a short while: compiles
    /// Tests/Fuzz/<target>.swift with its module's sources under -sanitize=fuzzer,address, links
    /// the debug build products this test bundle was built with, and runs `runs` inputs from the
    /// seed corpus. The compiled harness is cached by fuzz.sh (under the build directory, keyed by
    /// a hash of everything it is built from), so only the first run after a change compiles. A crash, a sanitizer report or a broken property is a non-zero exit and fails
    /// the test with the fuzzer's output.
    public func runFuzzer(_ target: String, runs: Int = 5_000) throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: out) }
        let process = Process()
        process.executableURL = Repository.url("Tests/Fuzz/fuzz.sh")
        process.arguments = [target, "-runs=\(runs)", "-seed=1"]
        var env = ProcessInfo.processInfo.environment
        env["LOCKBENCH_BUILD_DIR"] = Repository.buildDirectory.path
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
