import Foundation
import Lock
import LockBenchTestSupport
import Scenario
import XCTest

/// `lockbench fleet` as a user runs it (the built binary, small counts): the summary against
/// counts taken independently from every lock's audit log and the phones' keys, every decision
/// durable, the revocation fan-out lets no revoked phone in, bad flags exit 2.
final class FleetTests: XCTestCase {
    func fleet(_ args: [String]) throws -> LockBenchProcess.Result {
        try LockBenchProcess.run(["fleet"] + args)
    }

    func testTheSummaryMatchesTheAuditLogsOfEveryLock() throws {
        let dir = try temporaryDirectory("lockbench-fleet").appendingPathComponent("state").path
        let r = try fleet(["--locks", "3", "--phones", "6", "--taps", "80", "--workers", "4", "--foreign", "25",
                           "--revoke", "2", "--revoke-after", "30", "--seed", "7", "--state-dir", dir, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr + r.stdout)
        let s = try JSONDecoder().decode(FleetSummary.self, from: Data(r.stdout.utf8))
        XCTAssertEqual(s.taps, 80)
        XCTAssertEqual(s.granted + s.denied, 80)
        XCTAssertEqual(s.deniedBy.values.reduce(0, +), s.denied)
        XCTAssertGreaterThan(s.granted, 0)
        XCTAssertGreaterThan(s.denied, 0, "25% foreign taps are denied")
        // Independent counts: the locks' own audit logs, verified, read here.
        var grants = 0, denials: [String: Int] = [:]
        for i in 0..<3 {
            let (entries, damage) = try AuditLog.verify(directory: dir + "/lock-L\(i)/state")
            XCTAssertNil(damage)
            for e in entries where e.decision == "grant" { grants += 1 }
            for e in entries where e.decision == "deny" { denials[e.reason ?? "?", default: 0] += 1 }
        }
        XCTAssertEqual(grants, s.granted, "every grant reported is durable in a lock's audit log, and no other")
        XCTAssertEqual(denials, s.deniedBy, "every denial reported, by reason, is in the audit logs")
        XCTAssertEqual(s.auditDecisions, 80)
        XCTAssertNil(s.deniedBy["storage_failure"])
        // The fan-out: both revoked phones deleted their key; none of their later taps opened.
        let rev = try XCTUnwrap(s.revocation)
        XCTAssertEqual(rev.grants, 2)
        XCTAssertEqual(rev.phonesUpdated, 2)
        XCTAssertEqual(rev.grantedAfter, 0, "no revoked phone opens a lock that holds the revocation list")
        XCTAssertEqual(rev.phonesCarrying, 6, "every phone fetched the new list")
        XCTAssertLessThanOrEqual(rev.tapsAfter, s.denied, "each of those taps is among the denials")
        // Every phone logged in once and polled at login; the two revoked ones polled again.
        XCTAssertEqual(s.logins, 6)
        XCTAssertGreaterThanOrEqual(s.polls, 6 + 2)
        XCTAssertEqual(s.pollFailures, 0)
        XCTAssertEqual(s.fsyncRequests.map { $0 >= 80 }, true, "at least one journal fsync per decision")
    }

    func testTheSameSeedGivesTheSameTaps() throws {
        let args = ["--locks", "2", "--phones", "4", "--taps", "40", "--workers", "1", "--foreign", "30", "--seed", "11", "--json"]
        let a = try JSONDecoder().decode(FleetSummary.self, from: Data(try fleet(args).stdout.utf8))
        let b = try JSONDecoder().decode(FleetSummary.self, from: Data(try fleet(args).stdout.utf8))
        XCTAssertEqual(a.granted, b.granted)
        XCTAssertEqual(a.deniedBy, b.deniedBy)
    }

    func testTheTableAndPlainProgressLines() throws {
        let r = try fleet(["--locks", "2", "--phones", "2", "--taps", "20", "--no-group-commit"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let audit = r.stdout.split(separator: "\n").first { $0.hasPrefix("decisions in the audit logs") }
        XCTAssertEqual(audit.map { $0.hasSuffix(" 20 (= taps)") }, true, r.stdout)
        XCTAssertTrue(r.stdout.contains("result"), r.stdout)
        XCTAssertTrue(r.stdout.contains("consistent"), r.stdout)
        XCTAssertFalse(r.stdout.contains("journal fsyncs"), "no group commit: no flush counts")
        XCTAssertTrue(r.stderr.contains("fleet: tapping"), r.stderr)
        XCTAssertFalse(r.stderr.contains("\u{1B}[K"), "no terminal control codes when stderr is not a terminal")
    }

    func testBadFlagsExit2WithTheRule() throws {
        for (args, needle) in [(["--locks", "0"], "--locks must be"), (["--locks", "1", "--foreign", "10"], "--foreign needs"),
                               (["--duration", "soon"], "--duration"), (["--revoke", "5", "--phones", "2"], "--revoke must be"),
                               (["--clock", "lunar"], "--clock"), (["--workers", "5000"], "--workers must be")] {
            let r = try fleet(args)
            XCTAssertEqual(r.status, 2, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(needle), "\(args): \(r.stderr)")
        }
        let existing = try temporaryDirectory("lockbench-fleet").path
        let r = try fleet(["--state-dir", existing])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("exists"), r.stderr)
    }
}
