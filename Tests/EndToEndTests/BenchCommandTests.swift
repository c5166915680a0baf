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
        // --json: the benchmarks' one shape (BenchReport), the human lines on standard error.
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
        XCTAssertEqual(report["benchmark"] as? String, "nfc")
        XCTAssertEqual(report["status"] as? Int, 0)
        XCTAssertTrue(r.stderr.contains("NFC through libnfc"), r.stderr)
        let figures = try XCTUnwrap(report["figures"] as? [[String: Any]], r.stdout)
        func figure(_ name: String) -> [String: Any]? { figures.first { $0["name"] as? String == name } }
        for scenario in ["standard", "FAST", "step-up"] {
            let readings = Set(figures.compactMap { $0["name"] as? String }.filter { $0.hasPrefix(scenario + ": ") }.map { String($0.dropFirst(scenario.count + 2)) })
            XCTAssertEqual(readings, ["lone fsync", "back-to-back fsync", "lock's side", "paired", "own fsync"], scenario)
            for reading in readings {
                let f = try XCTUnwrap(figure("\(scenario): \(reading)"))
                XCTAssertGreaterThan(f["value"] as? Double ?? 0, 0, "\(f)")
                XCTAssertEqual(f["met"] == nil, scenario == "step-up", "a step-up has no time goal: \(f)")
            }
        }
        let lone = try XCTUnwrap(figure("lone bare fsync")?["value"] as? Double)
        let standardLone = try XCTUnwrap(figure("standard: lone fsync"))
        XCTAssertEqual(standardLone["baseline"] as? String, "lone bare fsync")
        XCTAssertEqual(standardLone["ratio"] as? Double ?? 0, (standardLone["value"] as? Double ?? 0) / lone, accuracy: 1e-9)
        XCTAssertTrue((standardLone["goal"] as? String ?? "").hasPrefix("median ≤ "), "\(standardLone)")
        // 4 taps in each of 3 scenarios; each decision made durable with exactly one fsync.
        XCTAssertEqual(figure("lock taps")?["value"] as? Double, 12, r.stdout)
        XCTAssertEqual(figure("lock taps with one fsync before the decision")?["value"] as? Double, 12, r.stdout)
        XCTAssertEqual(figure("lock taps with one fsync before the decision")?["met"] as? Bool, true, r.stdout)
        XCTAssertGreaterThan(figure("FAST speed-up over standard (arrival to decision)")?["value"] as? Double ?? 0, 0)
        let distributions = try XCTUnwrap(report["distributions"] as? [[String: Any]], r.stdout)
        XCTAssertTrue(distributions.contains { ($0["name"] as? String ?? "").contains("lone bare fsync") }, "\(distributions)")
    }

    /// Every benchmark has `--json`; each prints one JSON document on standard output (its text
    /// on standard error), every figure with a baseline carries the ratio to a figure of the same
    /// run, and the document's status is the exit status.
    func testEveryBenchmarkPrintsOneJSONDocumentWithItsBaselines() throws {
        let top = try bench(["--help"])
        let section = top.stdout.components(separatedBy: "SUBCOMMANDS:").last?.components(separatedBy: "\n\n").first ?? ""
        let subcommands = section.split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("  ") && !line.hasPrefix("   ") ? line.split(separator: " ").first.map(String.init) : nil
        }.filter { !["help", "audit-burst", "trust-load"].contains($0) }
        XCTAssertGreaterThanOrEqual(subcommands.count, 10, top.stdout)
        for sub in subcommands {
            XCTAssertTrue(try bench([sub, "--help"]).stdout.contains("--json"), "\(sub) --help lacks --json")
        }
        let runs: [[String]] = [["transaction", "--iterations", "20", "--batches", "1"], ["durability", "--samples", "10"],
                                ["approvals", "--stored", "10", "--samples", "10"], ["fleet", "--locks", "2", "--taps", "20", "--workers", "2"],
                                ["audit", "--rows", "500", "--runs", "1"], ["push", "--runs", "2", "--devices", "10", "--no-pn532"],
                                // One round: a ratio given as the median of per-round ratios is then the figure's own.
                                ["trust", "--phones", "4", "--concurrency", "2", "--rounds", "1", "--rotations", "10"],
                                ["ble", "--count", "2", "--echoes", "5"]]
        for args in runs {
            let r = try bench(args + ["--json"])
            XCTAssertFalse(r.timedOut, "\(args)")
            XCTAssertTrue([0, 1].contains(r.status), "\(args): \(r.stderr)")
            let doc = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(args): \(r.stdout)")
            XCTAssertEqual(doc["benchmark"] as? String, args[0])
            XCTAssertEqual((doc["status"] as? NSNumber)?.int32Value, r.status, "\(args)")
            XCTAssertFalse(r.stderr.isEmpty, "\(args): the human lines go to standard error")
            let figures = try XCTUnwrap(doc["figures"] as? [[String: Any]], r.stdout)
            XCTAssertGreaterThanOrEqual(figures.count, 2, "\(args)")
            var byName: [String: Double] = [:]
            for figure in figures {
                let value = try XCTUnwrap(figure["value"] as? Double, "\(figure)")
                if let baseline = figure["baseline"] as? String {
                    let base = try XCTUnwrap(byName[baseline], "\(args): \(figure["name"] ?? "") names a baseline not measured before it")
                    let ratio = try XCTUnwrap(figure["ratio"] as? Double, "\(figure)")
                    XCTAssertEqual(ratio, value / base, accuracy: max(1e-9, ratio * 1e-6), "\(args): \(figure)")
                }
                byName[try XCTUnwrap(figure["name"] as? String)] = value
            }
            XCTAssertTrue(figures.contains { $0["baseline"] != nil }, "\(args): no figure against a baseline")
            if args[0] == "ble" {
                XCTAssertEqual(r.status, 0, "every unlock granted: \(r.stderr)")
                XCTAssertGreaterThan(figures.first { ($0["name"] as? String)?.hasPrefix("connection → decision, standard") ?? false }?["value"] as? Double ?? 0, 0)
            }
        }
    }

    /// `pcsc --json --plot` through the real pcscd and vpcd: the bare round trip and the FAST
    /// tap's distributions, the ratio against the bare round trip, and a plot with both.
    func testPCSCReportsDistributionsAndDrawsThem() throws {
        let plot = try LockBenchProcess.temporaryDirectory(self).appendingPathComponent("pcsc.svg")
        let r = try bench(["pcsc", "--round-trips", "20", "--taps", "3", "--json", "--plot", plot.path])
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        let doc = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
        let rows = try XCTUnwrap(doc["distributions"] as? [[String: Any]])
        XCTAssertEqual(rows.map { $0["count"] as? Int }, [20, 3, 3, 3, 3], "three FAST taps after the step-up one")
        let svg = try String(contentsOf: plot, encoding: .utf8)
        for name in ["bare SCardTransmit round trip", "arrival to decision", "card inserted to decision"] {
            XCTAssertTrue(svg.contains("data-name=\"\(name)\""), name)
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
