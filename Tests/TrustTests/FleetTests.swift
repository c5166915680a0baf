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

    /// The progress line is redrawn in place (`\r`, erase line) when stderr is a terminal — here a
    /// pseudo-terminal — and never drawn when it is not (plain lines every 5 s instead).
    func testTheProgressLineOnATerminalAndNotOff() throws {
        let args = ["fleet", "--locks", "2", "--phones", "2", "--duration", "2s", "--rate", "20", "--workers", "2"]
        // stderr on a pseudo-terminal's slave side; we read the master side.
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        XCTAssertGreaterThanOrEqual(master, 0, "open /dev/ptmx")
        defer { close(master) }
        var unlock: Int32 = 0, number: UInt32 = 0
        XCTAssertEqual(ioctl(master, 0x4004_5431 /* TIOCSPTLCK */, &unlock), 0)
        XCTAssertEqual(ioctl(master, 0x8004_5430 /* TIOCGPTN */, &number), 0)
        let slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        XCTAssertGreaterThanOrEqual(slave, 0, "open /dev/pts/\(number)")
        let process = Process()
        process.executableURL = LockBenchProcess.binary
        process.arguments = args
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        try process.run()
        let terminal = TerminalOutput()
        let done = DispatchSemaphore(value: 0)
        Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(master, &buffer, buffer.count)
                if n <= 0 { break }     // EIO once every slave fd is closed
                terminal.append(buffer[0..<n])
            }
            done.signal()
        }.start()
        let drain = PipeDrain(out)
        XCTAssertTrue(drain.wait(until: Date().addingTimeInterval(180)), "fleet still running after 180 s")
        process.waitUntilExit(timeout: 10)
        let summary = drain.text
        close(slave)   // the child has exited: with ours closed too, the master reads EIO
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "the terminal closed")
        let drawn = terminal.text
        XCTAssertEqual(process.terminationStatus, 0, drawn + summary)
        XCTAssertTrue(drawn.contains("\r\u{1B}[Kfleet: "), "a progress line drawn in place: \(drawn.debugDescription)")
        XCTAssertTrue(drawn.contains(" taps/s, "), drawn.debugDescription)
        XCTAssertTrue(drawn.hasSuffix("\r\u{1B}[K"), "the line is erased before the summary: \(drawn.debugDescription)")
        XCTAssertFalse(summary.contains("\u{1B}"), "the summary on stdout has no control codes")
        XCTAssertTrue(summary.contains("consistent"), summary)

        // Off a terminal, the same run for long enough to pass 5 s: a plain line, no control codes.
        let plain = try LockBenchProcess.run(args.map { $0 == "2s" ? "6s" : $0 })
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertFalse(plain.stderr.contains("\u{1B}"), plain.stderr.debugDescription)
        XCTAssertFalse(plain.stderr.contains("\r"), plain.stderr.debugDescription)
        XCTAssertTrue(plain.stderr.split(separator: "\n").contains { $0.hasPrefix("fleet: ") && $0.contains(" taps/s, ") },
                      "a plain progress line every 5 s: \(plain.stderr)")
    }

    /// With `--clock system --poll-every`, phones poll on the wall clock while the load runs: more
    /// polls than the one each phone makes at login, which is all a run without it makes.
    func testPhonesPollOnTheSystemClock() throws {
        let base = ["--locks", "2", "--phones", "3", "--duration", "3.5s", "--rate", "20", "--workers", "2", "--clock", "system", "--json"]
        let polling = try fleet(base + ["--poll-every", "1s"])
        XCTAssertEqual(polling.status, 0, polling.stderr)
        let s = try JSONDecoder().decode(FleetSummary.self, from: Data(polling.stdout.utf8))
        XCTAssertEqual(s.clock, "system")
        XCTAssertEqual(s.logins, 3)
        XCTAssertEqual(s.pollFailures, 0)
        XCTAssertGreaterThanOrEqual(s.polls, 3 + 3, "each phone polled at login and at least once on schedule in 3.5 s: \(s.polls)")
        XCTAssertGreaterThan(s.granted, 0)
        XCTAssertTrue(s.consistent)
        let quiet = try fleet(base)
        XCTAssertEqual(quiet.status, 0, quiet.stderr)
        let q = try JSONDecoder().decode(FleetSummary.self, from: Data(quiet.stdout.utf8))
        XCTAssertEqual(q.polls, 3, "without --poll-every only the login polls")
    }
}

/// What a pseudo-terminal's master side read (from a reader thread).
private final class TerminalOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ bytes: ArraySlice<UInt8>) { lock.withLock { data.append(contentsOf: bytes) } }
    var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
}
