import Foundation
import Scenario

/// `lockbench-bench fleet`: the density goal — ≥ 1,000 locks and their phones in one process in
/// < 1 GiB, tapping ≥ 1,000 times a second with every decision durable — against baselines from
/// the same run on the same disk: the bare fsync rate (one 300-byte append + fsync after another)
/// and one lock tapped by one phone on one thread (every tap waits for its own fsync).
enum FleetBenchmark {
    static func run(locks: Int, taps: Int, workers: Int, directory: String, report: BenchReport) async -> Int32 {
        let base = directory + "/lockbench-fleet-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: base) }
        do {
            try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
            let scratch = try FsyncBaseline.Scratch(directory: base)
            let fsyncSeconds = FsyncBaseline.median(try scratch.backToBack(count: 300))
            scratch.close()
            let bareRate = 1 / fsyncSeconds
            var single = FleetPlan()
            single.locks = 1; single.phones = 1; single.workers = 1; single.taps = 500; single.groupCommit = false
            single.directory = base + "/single"
            let singlePlan = single
            let one = try await FleetRunner(plan: singlePlan).run()
            var fleet = FleetPlan()
            fleet.locks = locks; fleet.phones = locks; fleet.workers = workers; fleet.taps = taps
            fleet.directory = base + "/fleet"
            let runner = FleetRunner(plan: fleet, stage: { FileHandle.standardError.write(Data("fleet: \($0)\n".utf8)) })
            let many = try await runner.run()
            func f(_ x: Double, _ d: Int = 0) -> String { String(format: "%.\(d)f", x) }
            report.say("directory: \(directory)")
            report.say("load average: \(FsyncBaseline.loadAverage()), cores: \(ProcessInfo.processInfo.activeProcessorCount)")
            report.say("baseline, bare fsync (300-byte append + fsync, median of 300): \(f(fsyncSeconds * 1000, 3)) ms = \(f(bareRate))/s")
            report.say("baseline, 1 lock, 1 phone, 1 thread, own fsync: \(f(one.tapsPerSecond))/s, p50 \(f(one.latency.p50, 2)) ms, p99 \(f(one.latency.p99, 2)) ms (\(one.taps) taps)")
            report.say("fleet, \(many.locks) locks + \(many.phones) phones, \(many.workers) workers, group commit: \(f(many.tapsPerSecond))/s over \(many.taps) taps, "
                  + "p50 \(f(many.latency.p50, 2)) ms, p95 \(f(many.latency.p95, 2)) ms, p99 \(f(many.latency.p99, 2)) ms; set-up \(f(many.setupSeconds, 1)) s")
            if let r = many.fsyncRequests, let fl = many.flushes, fl > 0 {
                report.say("journal fsyncs \(r), flushes \(fl): \(f(Double(r) / Double(fl), 1)) decisions per flush")
            }
            report.say("decisions in the audit logs: \(many.auditDecisions) of \(many.taps) taps (\(many.consistent ? "consistent" : "INCONSISTENT"))")
            let rss = FleetRunner.peakRSSMiB() ?? 0
            report.say("peak RSS of this process (both runs): \(f(rss)) MiB")
            report.say("ratios: fleet ÷ bare fsync rate \(f(many.tapsPerSecond / bareRate, 2))×, fleet ÷ single lock \(f(many.tapsPerSecond / max(one.tapsPerSecond, 0.001), 2))×")
            let rateMet = many.tapsPerSecond >= 1000, memoryMet = rss < 1024, locksMet = many.locks >= 1000
            report.figure("bare fsync rate", bareRate, "per second")
            report.figure("single lock, own fsync", one.tapsPerSecond, "taps per second", baseline: "bare fsync rate")
            report.figure("fleet, group commit", many.tapsPerSecond, "taps per second", baseline: "single lock, own fsync",
                          goal: "≥ 1000 durable taps/s", met: rateMet)
            report.figure("fleet p50 latency", many.latency.p50, "ms")
            report.figure("fleet p95 latency", many.latency.p95, "ms")
            report.figure("fleet p99 latency", many.latency.p99, "ms")
            report.figure("locks", Double(many.locks), "locks", goal: "≥ 1000", met: locksMet)
            report.figure("peak RSS", rss, "MiB", goal: "< 1024", met: memoryMet)
            report.figure("decisions in the audit logs", Double(many.auditDecisions), "decisions", goal: "one per tap (\(many.taps))", met: many.consistent)
            report.say("goal ≥ 1,000 locks: \(locksMet ? "met" : "NOT met"); < 1 GiB: \(memoryMet ? "met" : "NOT met"); ≥ 1,000 taps/s durable: \(rateMet ? "met" : "NOT met")")
            return report.finish(many.consistent && one.consistent ? 0 : 1)
        } catch {
            return report.finish(3, error: "fleet benchmark failed: \(error)")
        }
    }
}
