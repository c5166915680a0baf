import ArgumentParser
import Foundation
import Synchronization
import LockRuntime
import OfflineUnlock
import Scenario

/// `lockbench fleet`: many locks and phones in one process, for load tests and revocation fan-out.
struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Run many virtual locks and phones in one process and tap them: a load test and a revocation fan-out, with a summary.",
        discussion: """
        One trust service (SQLite, its real HTTP API on a loopback port), --locks real locks (each \
        with its own state directory, journal and audit log) and --phones virtual phones, all on one \
        clock. Phone i belongs to user u<i> with grant g<i> on lock i mod --locks; every phone logs \
        in and polls once, so it holds its key before the first tap. Then --workers threads tap: \
        each tap picks a phone (and its lock, or with --foreign PERCENT another lock, which must \
        deny) from --seed, so the same seed gives the same taps. Taps run in memory (no radio): what \
        is measured is the protocol, the lock's decision and its durable record. Every decision is \
        fsynced before the phone hears it; with group commit (the default) the fsyncs waiting at \
        the same moment share one flush of the disk.

        --revoke N revokes N grants at once, when --revoke-after taps have started (default: half \
        of --taps, or 1 s into a --duration run), and every affected phone polls at once (Tapkey \
        "manual polling") and every other phone polls as a wake-up would make it, fetching the \
        new revocation list to carry to the locks. The summary gives the fan-out time, and the \
        revoked phones' later taps: at a lock the list has reached (none may be granted) and at a \
        lock it has not reached yet (an offline lock honours the document it cached until then).

        With --clock virtual (the default) the clock stands still during the load; with --clock \
        system it is the wall clock and --poll-every makes phones poll on schedule.

        The summary: taps, grants, denials by reason, polls, logins, token refreshes, tap latency \
        (p50/p95/p99, milliseconds of wall time), taps per second, the decisions counted in every \
        lock's verified audit log afterwards, and the fsyncs and flushes. A progress line shows on \
        a terminal (plain lines every 5 s otherwise; --quiet for none).

        Exit codes: 0 the run was consistent (every tap's decision is in an audit log, none failed \
        to be stored, no revoked phone was let in); 1 it was not; 2 a bad flag; 3 the environment \
        failed (disk, ports).
        """)

    @Option(help: ArgumentHelp("How many locks.", valueName: "n"))
    var locks = 10
    @Option(help: ArgumentHelp("How many phones (one grant each).", valueName: "n"))
    var phones = 10
    @Option(help: ArgumentHelp("Stop after this many taps (default 1000 unless --duration is given).", valueName: "n"))
    var taps: Int?
    @Option(help: ArgumentHelp("Stop after this long (e.g. 30s, 5m).", valueName: "duration"))
    var duration: String?
    @Option(help: ArgumentHelp("Taps per second over all workers; 0 = as fast as they go.", valueName: "n"))
    var rate: Double = 0
    @Option(help: ArgumentHelp("Threads tapping at once.", valueName: "n"))
    var workers = 8
    @Option(help: ArgumentHelp("Percent of taps at a lock the phone holds no grant for.", valueName: "percent"))
    var foreign: Double = 0
    @Option(help: ArgumentHelp("Grants to revoke at once (revocation fan-out).", valueName: "n"))
    var revoke = 0
    @Option(name: .customLong("revoke-after"), help: ArgumentHelp("Revoke when this many taps have started.", valueName: "n"))
    var revokeAfter: Int?
    @Option(help: ArgumentHelp("Seed for the choice of phones and locks.", valueName: "n"))
    var seed: UInt64 = 1
    @Option(help: ArgumentHelp("virtual or system.", valueName: "mode"))
    var clock = "virtual"
    @Option(name: .customLong("poll-every"), help: ArgumentHelp("Background poll interval of every phone (with --clock system); 0 = never.", valueName: "duration"))
    var pollEvery = "0"
    @Flag(name: .customLong("no-group-commit"), help: "Each lock fsyncs its own journal alone (the single-lock path), for comparison.")
    var noGroupCommit = false
    @Option(name: .customLong("state-dir"), help: ArgumentHelp("Keep the site and the locks' state in this new directory (default: a temporary one, removed).", valueName: "dir"))
    var stateDir: String?
    @Flag(help: "Print the summary as JSON.")
    var json = false
    @Flag(help: "No progress output.")
    var quiet = false

    func plan() throws -> FleetPlan {
        var plan = FleetPlan()
        plan.locks = locks; plan.phones = phones; plan.taps = taps; plan.rate = rate; plan.workers = workers
        plan.foreignPercent = foreign; plan.revoke = revoke; plan.revokeAfterTaps = revokeAfter; plan.seed = seed
        plan.groupCommit = !noGroupCommit; plan.directory = stateDir
        if let duration {
            guard let d = DurationText.parse(duration) else { throw ValidationError("--duration \"\(duration)\" is not a duration like 30s or 5m") }
            plan.duration = d
        }
        guard let c = ScenarioRunner.ClockMode(rawValue: clock) else { throw ValidationError("--clock is virtual or system") }
        plan.clock = c
        if pollEvery != "0" {
            guard let d = DurationText.parse(pollEvery) else { throw ValidationError("--poll-every \"\(pollEvery)\" is not a duration like 10s (0 = never)") }
            plan.pollEvery = d
        }
        if let revokeAfter, revokeAfter < 0 { throw ValidationError("--revoke-after must be 0 or more") }
        do { try plan.validate() } catch { throw ValidationError(error.message) }
        return plan
    }

    func validate() throws {
        _ = try plan()
        if let stateDir, FileManager.default.fileExists(atPath: stateDir) {
            throw ValidationError("--state-dir \(stateDir) exists; name a new directory (the run creates and keeps it)")
        }
    }

    func run() async throws {
        var stage: (@Sendable (String) -> Void)?
        var progress: (@Sendable (FleetProgress) -> Void)?
        if !quiet {
            let tty = isatty(2) == 1
            let last = LastLine()
            stage = { emitError("fleet: \($0)") }
            progress = { p in
                let line = "fleet: \(p.taps)\(p.target.map { "/\($0)" } ?? "") taps, \(p.granted) granted, \(p.denied) denied, "
                    + String(format: "%.0f taps/s, %.1f s", p.seconds > 0 ? Double(p.taps) / p.seconds : 0, p.seconds)
                if tty { FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8)) } else if last.due(p.seconds) { emitError(line) }
            }
        }
        let runner = FleetRunner(plan: try plan(), stage: stage, progress: progress)
        // Ctrl-C (or SIGTERM) ends the load: the summary of the taps so far is printed and the
        // temporary directory removed; a second one stops at once.
        let signals = StopSignals { _ in
            if runner.isInterrupted { Foundation.exit(130) }
            runner.interrupt()
        }
        defer { withExtendedLifetime(signals) {} }
        let summary: FleetSummary
        do { summary = try await runner.run() } catch let e as ScenarioError {
            throw UserError(message: "fleet: \(e.message)", code: ExitCodes.environment)
        } catch {
            throw UserError(message: "fleet: the run could not be set up or finished: \(error)", code: ExitCodes.environment)
        }
        if !quiet && isatty(2) == 1 { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        print(json ? KeyFiles.json(summary) : Self.table(summary))
        if !summary.consistent { throw ExitCode(ExitCodes.negative) }
        if summary.interrupted == true { throw ExitCode(130) }
    }

    /// The human summary.
    static func table(_ s: FleetSummary) -> String {
        var rows: [(String, String)] = [
            ("locks / phones / workers", "\(s.locks) / \(s.phones) / \(s.workers) (clock \(s.clock))"),
            ("taps", "\(s.taps) in \(String(format: "%.2f", s.seconds)) s = \(String(format: "%.0f", s.tapsPerSecond))/s (set-up \(String(format: "%.1f", s.setupSeconds)) s)"),
            ("granted", "\(s.granted)"),
            ("denied", "\(s.denied)"),
        ]
        for (reason, n) in s.deniedBy.sorted(by: { $0.key < $1.key }) { rows.append(("  \(reason)", "\(n)")) }
        rows += [
            ("latency p50 / p95 / p99 / max", String(format: "%.2f / %.2f / %.2f / %.2f ms", s.latency.p50, s.latency.p95, s.latency.p99, s.latency.max)),
            ("polls (failed)", "\(s.polls) (\(s.pollFailures))"),
            ("logins / token refreshes", "\(s.logins) / \(s.refreshes)"),
            ("decisions in the audit logs", "\(s.auditDecisions)" + (s.auditDecisions == s.taps ? " (= taps)" : " (≠ taps \(s.taps)!)")),
        ]
        if let r = s.fsyncRequests, let f = s.flushes {
            rows.append(("journal fsyncs / flushes", "\(r) / \(f)" + (f > 0 ? String(format: " (%.1f per flush)", Double(r) / Double(f)) : "")))
        }
        if let r = s.revocation {
            rows.append(("revocation fan-out", "\(r.grants) grant(s) (list \(r.serial.map(String.init) ?? "none")), \(r.phonesUpdated) key(s) deleted, "
                         + "\(r.phonesCarrying) phone(s) carrying the list, in \(String(format: "%.3f", r.fanOutSeconds)) s"))
            rows.append(("  revoked phones' taps, list at the lock", "\(r.tapsAfter), granted \(r.grantedAfter)"))
            rows.append(("  … list not at the lock yet", "\(r.tapsBeforeListReached), granted \(r.grantedBeforeListReached) (offline: the cached document opens)"))
            rows.append(("  locks holding the list", "\(r.locksHolding) of \(s.locks)"))
        }
        if let m = s.peakRSSMiB { rows.append(("peak RSS", String(format: "%.0f MiB", m))) }
        if s.interrupted == true { rows.append(("interrupted", "yes: stopped early, the counts are the taps made until then")) }
        rows.append(("result", s.consistent ? "consistent" : "INCONSISTENT"))
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }.joined(separator: "\n")
    }

    /// Plain progress lines every 5 s when stderr is not a terminal.
    final class LastLine: Sendable {
        private let last = Mutex(0.0)
        func due(_ t: Double) -> Bool { last.withLock { last in if t - last >= 5 { last = t; return true }; return false } }
    }
}
