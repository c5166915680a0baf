import Foundation
import LockBenchTestSupport
import XCTest

/// `lockbench-bench` parses like the CLI (swift-argument-parser): its subcommands and flags, a
/// bad value as a usage error (exit 2), and one short run that measures for real.
final class BenchCommandTests: XCTestCase {
    static let binary = Repository.builtProduct("lockbench-bench")

    func bench(_ arguments: [String]) throws -> LockBenchProcess.Result {
        try LockBenchProcess.run(arguments, executable: Self.binary)
    }

    func testHelpNamesEverySubcommandAndItsFlags() throws {
        let top = try bench(["--help"])
        XCTAssertEqual(top.status, 0)
        for sub in ["audit", "transaction", "nfc", "ble"] { XCTAssertTrue(top.stdout.contains("  \(sub) "), top.stdout) }
        let flags: [String: [String]] = [
            "audit": ["--rows", "--runs", "--lockbench"],
            "transaction": ["--iterations", "--batches"],
            "nfc": ["--iterations", "--taps", "--poll-interval-ms", "--no-step-up", "--json"],
            "ble": ["--count", "--echoes", "--controller", "--engine", "--echo-flow", "--lock", "--phone"],
        ]
        for (sub, names) in flags {
            let help = try bench([sub, "--help"])
            XCTAssertEqual(help.status, 0, sub)
            for name in names { XCTAssertTrue(help.stdout.contains(name), "\(sub) --help lacks \(name):\n\(help.stdout)") }
        }
    }

    func testBadValuesAreUsageErrors() throws {
        for args in [["transaction", "--iterations", "many"], ["transaction", "--batches", "0"], ["audit", "--rows", "-1"],
                     ["ble", "--controller", "nope"], ["nfc", "--poll-interval-ms", "0"], ["no-such-benchmark"]] {
            let r = try bench(args)
            XCTAssertEqual(r.status, 2, "\(args): \(r.stdout) \(r.stderr)")
            XCTAssertFalse(r.stderr.isEmpty, "\(args)")
        }
    }

    func testTransactionMeasuresWithItsBaseline() throws {
        let r = try bench(["transaction", "--iterations", "20", "--batches", "1"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("1 batches × 20 transactions"), r.stdout)
        XCTAssertTrue(r.stdout.contains("crypto floor"), r.stdout)
        XCTAssertTrue(r.stdout.contains("FAST vs standard (lock side)"), r.stdout)
    }
}
