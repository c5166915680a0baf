import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import LockBenchTestSupport
import XCTest

/// `lockbench-bench` parses like the CLI (swift-argument-parser): its subcommands and flags, a
/// bad value as a usage error (exit 2), and one short run that measures for real.
final class BenchCommandTests: XCTestCase {
    static let binary = Repository.builtProduct("lockbench-bench")

    func bench(_ arguments: [String], stdin: String? = nil) throws -> LockBenchProcess.Result {
        try LockBenchProcess.run(arguments, executable: Self.binary, stdin: stdin)
    }

    func testHelpNamesEverySubcommandAndItsFlags() throws {
        let top = try bench(["--help"])
        XCTAssertEqual(top.status, 0)
        for sub in ["audit", "transaction", "nfc", "ble"] { XCTAssertTrue(top.stdout.contains("  \(sub) "), top.stdout) }
        let flags: [String: [String]] = [
            "audit": ["--rows", "--runs", "--lockbench"],
            "transaction": ["--iterations", "--batches"],
            "nfc": ["--iterations", "--taps", "--poll-interval-ms", "--no-step-up", "--json", "--plot"],
            "ble": ["--count", "--echoes", "--controller", "--engine", "--echo-flow", "--lock", "--phone"],
        ]
        for (sub, names) in flags {
            let help = try bench([sub, "--help"])
            XCTAssertEqual(help.status, 0, sub)
            for name in names { XCTAssertTrue(help.stdout.contains(name), "\(sub) --help lacks \(name):\n\(help.stdout)") }
        }
    }

    /// The trust bench's phones (`trust-load`, spawned by `trust`) are hidden from --help, answer a
    /// job they cannot run with an error line and go on, and refuse a line that is not a job (exit 2).
    func testTrustLoadAnswersJobsAndRefusesOthers() throws {
        let top = try bench(["--help"])
        XCTAssertFalse(top.stdout.contains("trust-load"), top.stdout)
        let r = try bench(["trust-load"], stdin: "{\"op\":\"poll\",\"count\":1}\n{\"op\":\"healthz\",\"count\":0}\n{\"op\":\"quit\"}\n")
        XCTAssertEqual(r.status, 0, r.stderr)
        let answers = r.stdout.split(separator: "\n")
        XCTAssertEqual(answers.count, 2, r.stdout)
        XCTAssertTrue(answers.first?.contains("no setup with access tokens") ?? false, r.stdout)
        XCTAssertTrue(answers.last?.contains("no setup") ?? false, r.stdout)
        let bad = try bench(["trust-load"], stdin: "not json\n")
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderr.contains("not a job"), bad.stderr)
    }

    /// The phones' HTTP client (`HTTPLoad`) against a real `trust serve`: `/healthz` answers
    /// through it, and a poll with a token the server never issued fails naming the status.
    func testTrustLoadSpeaksHTTPToARealTrustServer() throws {
        let dir = try temporaryDirectory("lockbench-trustload")
        let initialized = try LockBenchProcess.run(["trust", "init", dir.path + "/site"])
        XCTAssertEqual(initialized.status, 0, initialized.stderr)
        let server = try InteractiveProcess(["trust", "serve", "--site", "site", "--port", "0"], currentDirectory: dir)
        addTeardownBlock { server.terminate() }
        let line = try server.waitForLine(containing: "listening on", timeout: 60)
        let url = try XCTUnwrap(line.range(of: "http://").map { String(line[$0.lowerBound...]).trimmingCharacters(in: .whitespaces) })
        let jobs = [#"{"op":"setup","baseURL":"\#(url)","concurrency":4,"access":["not-a-token"]}"#,
                    #"{"op":"healthz","count":200}"#, #"{"op":"poll","count":1}"#, #"{"op":"quit"}"#]
        let r = try bench(["trust-load"], stdin: jobs.joined(separator: "\n") + "\n")
        XCTAssertEqual(r.status, 0, r.stderr)
        let answers = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(answers.count, 3, r.stdout)
        guard answers.count == 3 else { return }
        let health = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(answers[1].utf8)) as? [String: Any])
        XCTAssertNil(health["error"], answers[1])
        XCTAssertGreaterThan(health["rate"] as? Double ?? 0, 0, answers[1])
        XCTAssertTrue(answers[2].contains("a poll answered 401"), answers[2])
    }

    /// A short `nfc` run through the real libnfc and the virtual PN532: every reading of the goal
    /// for standard and FAST, none for a step-up's time, and one fsync before each decision.
    func testNFCReportsEveryReadingOfTheGoalAndOneFsyncPerDecision() throws {
        let plot = try LockBenchProcess.temporaryDirectory(self).appendingPathComponent("nfc.svg")
        let r = try bench(["nfc", "--iterations", "20", "--taps", "4", "--rounds", "2", "--json", "--plot", plot.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        // --plot: a well-formed SVG with one line per scenario and the baseline, each labelled.
        final class Lines: NSObject, XMLParserDelegate {
            var names: [String] = [], points: [Int] = []
            func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
                if name == "polyline", let n = attributes["data-name"] { names.append(n); points.append(attributes["points"]?.split(separator: " ").count ?? 0) }
            }
        }
        let lines = Lines()
        let parser = try XMLParser(data: Data(contentsOf: plot))
        parser.delegate = lines
        XCTAssertTrue(parser.parse(), "the plot is well-formed XML: \(parser.parserError.map { "\($0)" } ?? "")")
        XCTAssertEqual(lines.names, ["lone bare fsync", "standard", "FAST", "step-up"])
        XCTAssertEqual(lines.points.dropFirst(), [9, 9, 9], "a step up per tap: 1 + 2 × 4 points")
        let svg = try String(contentsOf: plot, encoding: .utf8)
        XCTAssertTrue(svg.contains("milliseconds") && svg.contains("n=4, median "), String(svg.prefix(400)))
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
        let goals = try XCTUnwrap(report["goals"] as? [[String: Any]], r.stdout)
        for scenario in ["standard", "FAST", "step-up"] {
            let readings = Set(goals.filter { $0["scenario"] as? String == scenario }.compactMap { $0["reading"] as? String })
            XCTAssertEqual(readings, ["lone fsync", "back-to-back fsync", "lock's side", "paired", "own fsync"], scenario)
        }
        for goal in goals {
            XCTAssertGreaterThan(goal["medianMs"] as? Double ?? 0, 0, "\(goal)")
            XCTAssertEqual(goal["met"] == nil, goal["scenario"] as? String == "step-up", "\(goal)")
        }
        let lone = try XCTUnwrap(goals.first { $0["reading"] as? String == "lone fsync" }?["limitMs"] as? Double)
        XCTAssertGreaterThan(lone, 1, "the limit is a bare fsync + 1 ms")
        // 4 taps in each of 3 scenarios; each decision made durable with exactly one fsync.
        XCTAssertEqual(report["lockTaps"] as? Int, 12, r.stdout)
        XCTAssertEqual(report["lockTapsWithOneFsync"] as? Int, 12, r.stdout)
        XCTAssertGreaterThan(report["fastSpeedup"] as? Double ?? 0, 0)
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
