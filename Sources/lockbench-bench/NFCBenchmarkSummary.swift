import Foundation

extension NFCBenchmark {
    /// One reading of the goal "arrival to decision (median) ≤ one fsync + 1 ms" for one scenario.
    struct Reading {
        /// `lone fsync` (the goal's own reading), `back-to-back fsync`, `lock's side`, `paired`, `own fsync`.
        var reading: String
        var scenario: String
        /// The median compared with the limit (for `paired` and `own fsync`: of each tap's rest).
        var medianMs: Double
        var limitMs: Double
        /// nil: the scenario has no time goal (a step-up's goal is in `lockbench-bench durability`).
        var met: Bool?
    }

    /// The goal's readings. "One fsync" is the lock's single journal fsync before it answers, as a
    /// tap meets it: a lone one, after the disk was idle since the last tap. The goal's own reading
    /// compares with a lone bare fsync timed in the same directory just before each tap; the
    /// others show the same taps against the back-to-back fsync (the disk's least), without the
    /// emulated phone's work, paired tap by tap, and against the lock's own fsync.
    struct Summary {
        let scenarios: [String]
        let samples: [TapSamples]
        let roundMedians: [[Double]]
        /// Medians, seconds: back to back (all rounds, and per round) and lone (before each tap).
        let backToBack: Double
        let roundBackToBack: [Double]
        let lone: Double

        private static let slack = 0.001
        private func hasGoal(_ i: Int) -> Bool { scenarios[i] != "step-up" }
        private func decision(_ i: Int) -> Double { FsyncBaseline.median(samples[i].decision) }

        var readings: [Reading] {
            var out: [Reading] = []
            for i in scenarios.indices {
                func add(_ reading: String, _ median: Double, limit: Double) {
                    guard !median.isNaN else { return }
                    out.append(Reading(reading: reading, scenario: scenarios[i], medianMs: median * 1000, limitMs: limit * 1000,
                                       met: hasGoal(i) ? median <= limit : nil))
                }
                let s = samples[i]
                add("lone fsync", decision(i), limit: lone + Self.slack)
                add("back-to-back fsync", decision(i), limit: backToBack + Self.slack)
                if !s.phoneWork.isEmpty {
                    add("lock's side", FsyncBaseline.median(s.decisionWithoutPhoneWork), limit: lone + Self.slack)
                }
                if !s.fsync.isEmpty { add("paired", FsyncBaseline.median(s.decisionOverFsync), limit: Self.slack) }
                if !s.ownFsync.isEmpty { add("own fsync", FsyncBaseline.median(s.decisionOverOwnFsync), limit: Self.slack) }
            }
            return out
        }

        /// Taps whose fsyncs were counted, and those with exactly one before the decision.
        var fsyncCounts: (taps: Int, one: Int) {
            let counts = samples.flatMap(\.ownFsyncCount)
            return (counts.count, counts.filter { $0 == 1 }.count)
        }

        /// FAST's median arrival to decision against standard's (how many times faster).
        var fastSpeedup: Double? {
            guard let s = scenarios.firstIndex(of: "standard"), let f = scenarios.firstIndex(of: "FAST") else { return nil }
            return decision(s) / decision(f)
        }

        /// The figures of `--json` (BenchReport's shape): the lone fsync; each reading as
        /// "SCENARIO: READING" in ms with its limit as the goal (the lone-fsync reading divided by
        /// the lone fsync); the lock taps and those with one fsync; FAST against standard.
        func record(in report: BenchReport) {
            report.figure("lone bare fsync", lone * 1000, "ms")
            for r in readings {
                report.figure("\(r.scenario): \(r.reading)", r.medianMs, "ms", baseline: r.reading == "lone fsync" ? "lone bare fsync" : nil,
                              goal: r.met == nil ? nil : String(format: "median ≤ %.3f ms", r.limitMs), met: r.met)
            }
            let counts = fsyncCounts
            report.figure("lock taps", Double(counts.taps), "taps")
            report.figure("lock taps with one fsync before the decision", Double(counts.one), "taps", baseline: "lock taps",
                          goal: "every tap", met: counts.one == counts.taps)
            if let speedup = fastSpeedup { report.figure("FAST speed-up over standard (arrival to decision)", speedup, "×") }
        }

        func print(_ say: (String) -> Void) {
            func ms(_ s: Double) -> String { String(format: "%.3f ms", s * 1000) }
            let all = readings
            func verdict(_ r: Reading) -> String { r.met.map { $0 ? "met" : "NOT met" } ?? "(no time goal)" }
            func lines(_ reading: String, _ text: (Reading, Int) -> String) {
                for r in all where r.reading == reading {
                    say("  \(r.scenario): \(text(r, scenarios.firstIndex(of: r.scenario)!)) → \(verdict(r))")
                }
            }
            let counts = fsyncCounts
            say("goal: arrival to decision (median) ≤ one fsync + 1 ms. One fsync: a lone bare fsync, timed in the lock's directory "
                        + "just before each tap after the same idle (median \(ms(lone)) in this run); the lock made exactly one fsync "
                        + "before the decision in \(counts.one) of \(counts.taps) taps.")
            lines("lone fsync") { r, i in
                "\(ms(r.medianMs / 1000)) = fsync + \(ms(r.medianMs / 1000 - lone)); per round \(roundMedians[i].map(ms).joined(separator: ", "))"
            }
            say("the same taps against the bare fsync back to back (median \(ms(backToBack)); per round "
                        + "\(roundBackToBack.map(ms).joined(separator: ", "))): the disk's least, which a tap's fsync after idle does not get")
            lines("back-to-back fsync") { r, _ in "\(ms(r.medianMs / 1000)) = fsync + \(ms(r.medianMs / 1000 - backToBack))" }
            say("the lock's side: arrival to decision minus the emulated phone's own work (its parsing and crypto, which a real "
                        + "phone does on its own hardware), against the lone fsync")
            lines("lock's side") { r, _ in "\(ms(r.medianMs / 1000)) = fsync + \(ms(r.medianMs / 1000 - lone))" }
            say("paired: each tap's arrival to decision minus the lone bare fsync timed just before it (goal: median ≤ 1 ms)")
            lines("paired") { r, i in
                let sorted = samples[i].decisionOverFsync.sorted()
                return "median \(ms(r.medianMs / 1000)); quartiles \(ms(sorted[sorted.count / 4])) – \(ms(sorted[sorted.count * 3 / 4]))"
            }
            say("its own fsync: each tap's arrival to decision minus the fsync the lock made in it (goal: the rest ≤ 1 ms, median)")
            lines("own fsync") { r, i in
                "the rest \(ms(r.medianMs / 1000)) + its fsync \(ms(FsyncBaseline.median(samples[i].ownFsync))) (median); of the rest, "
                    + "the phone's own work \(ms(FsyncBaseline.median(samples[i].phoneWork))), the lock and the link "
                    + "\(ms(FsyncBaseline.median(samples[i].lockAndLink)))"
            }
            if let speedup = fastSpeedup, let s = scenarios.firstIndex(of: "standard"), let f = scenarios.firstIndex(of: "FAST") {
                let faster = zip(roundMedians[s], roundMedians[f]).filter { $1 < $0 }.count
                say("FAST vs standard, arrival to decision: " + String(format: "%.2f", speedup)
                            + "× faster (medians \(ms(decision(f))) vs \(ms(decision(s)))); FAST faster in \(faster) of \(roundMedians[s].count) rounds")
            }
        }
    }
}
