import ByteCore
import Foundation
import NFC
import ReaderSeam
import VirtualPN532

/// `lockbench-bench nfc`: latencies through the real libnfc and the virtual PN532.
///
/// - **SELECT round trip**: one SELECT APDU through `nfc_initiator_transceive_bytes` →
///   pn532_uart → pty → virtual PN532 → card and back, on an open reader with a selected card.
/// - **tap to transaction**: a card placed in the field until the reader loop (`ReaderLoop` over `LibNFCReader`) reports the
///   transaction done (poll, anticollision, RATS, the transaction, the event), one tap at a time.
///
/// The tap benchmark takes the card and the transaction as parameters (`Tap`), so the engine's
/// credential (an `APDUResponder`) and reader session (the transaction closure) plug in to give
/// tap-to-decision, standard and FAST, next to the bare SELECT in the same run.
enum NFCBenchmark {
    static let selectAPDU: [UInt8] = [0x00, 0xA4, 0x04, 0x00, 0x07, 0xA0, 0x00, 0x00, 0x08, 0x58, 0x01, 0x01, 0x00]

    struct Stats: Codable {
        var name: String
        var count: Int
        var medianMs: Double
        var p95Ms: Double
        var minMs: Double
        var maxMs: Double

        init(name: String, samples: [TimeInterval]) {
            let sorted = samples.sorted()
            func at(_ q: Double) -> Double {
                sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))] * 1000
            }
            self.name = name
            count = sorted.count
            medianMs = at(0.5)
            p95Ms = at(0.95)
            minMs = (sorted.first ?? 0) * 1000
            maxMs = (sorted.last ?? 0) * 1000
        }

        var line: String {
            name.padding(toLength: 46, withPad: " ", startingAt: 0)
                + String(format: " n=%-5d median %7.3f ms   p95 %7.3f ms   min %7.3f ms   max %7.3f ms", count, medianMs, p95Ms, minMs, maxMs)
        }
    }

    /// One tap scenario: the card to place in the field and the transaction the lock runs on it.
    struct Tap {
        var name: String
        var makeCard: () -> APDUResponder
        /// Runs one transaction; returns a short outcome (e.g. "granted"); throws on failure.
        var transaction: @Sendable (APDUTransceiver, TargetInfo) throws -> String
        /// Send the ECP frame before each poll, as a lock on certified firmware does.
        var ecpPolling = false
        /// When the lock's decision of the last transaction was committed (uptime ns: the audit
        /// entry fsynced, the bolt acting); nil = the transaction's end is the decision.
        var decisionTime: (() -> UInt64)? = nil
        /// Called after each warm-up tap (not counted): the scenario drops what it recorded.
        var discardWarmUp: (() -> Void)? = nil
        /// A scratch file where the lock writes: a lone bare fsync there is timed just before each
        /// tap, after the same idle, so each decision has a baseline from the same moment of a
        /// disk other writers share.
        var fsyncScratch: FsyncBaseline.Scratch? = nil
        /// The time the lock spent in its own fsyncs up to the decision of the last transaction.
        var ownFsync: (() -> TimeInterval)? = nil
        /// How many fsyncs the lock made up to the decision of the last transaction.
        var ownFsyncCount: (() -> Int)? = nil
        /// The time the phone spent answering, up to the decision of the last transaction.
        var phoneWork: (() -> TimeInterval)? = nil
    }

    /// The bare tap: the lock only SELECTs.
    static var selectOnlyTap: Tap { Tap(name: "SELECT only", makeCard: { SimpleCard() }) { link, _ in
        let response = try link.transceive(selectAPDU)
        return response == [0x90, 0x00] ? "selected" : "refused \(response.hex)"
    } }

    /// SELECT round trips on one open reader with the card selected once.
    static func selectRoundTrips(iterations: Int) throws -> Stats {
        let reader = try VirtualReader(card: SimpleCard())
        defer { reader.stop() }
        let context = try NFCContext()
        let device = try context.open(reader.connstring)
        defer { device.close() }
        try device.initiatorInit()
        guard let target = try device.selectISO14443A() else { throw NFCError(.noDevice, "the virtual card was not found") }
        let link = device.link(target)
        for _ in 0..<20 { _ = try link.transceive(selectAPDU) }  // warm-up
        var samples: [TimeInterval] = []
        samples.reserveCapacity(iterations)
        for _ in 0..<iterations {
            let start = DispatchTime.now().uptimeNanoseconds
            let response = try link.transceive(selectAPDU)
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            guard response == [0x90, 0x00] else { throw NFCError(.chip, "SELECT answered \(response.hex)") }
        }
        return Stats(name: "bare libnfc SELECT round trip", samples: samples)
    }

    /// One scenario's taps, split: card in the field → decision (what a user waits for) =
    /// card in the field → card selected (the poll-interval wait, anticollision, RATS) + card
    /// selected → decision (the transaction: every APDU through libnfc, the engine, the audit).
    /// Raw samples in seconds, so that several rounds add up before the statistics.
    struct TapSamples {
        var total: [TimeInterval] = []
        var detection: [TimeInterval] = []
        var decision: [TimeInterval] = []
        /// Card selected → the loop's transaction closure returned (the phone has heard the
        /// answer, the reader's memory is persisted); only when the decision comes earlier.
        var transactionEnd: [TimeInterval] = []
        /// A lone bare fsync in the lock's directory just before each tap (when the tap names one).
        var fsync: [TimeInterval] = []
        /// The lock's own fsyncs in each tap, up to the decision (when the tap times them): time, count.
        var ownFsync: [TimeInterval] = []
        var ownFsyncCount: [Int] = []
        /// The phone's own work in each tap, up to the decision (when the tap times it).
        var phoneWork: [TimeInterval] = []

        mutating func add(_ other: TapSamples) {
            total += other.total; detection += other.detection; decision += other.decision; transactionEnd += other.transactionEnd
            fsync += other.fsync; ownFsync += other.ownFsync; ownFsyncCount += other.ownFsyncCount; phoneWork += other.phoneWork
        }

        /// Each tap's arrival to decision minus the bare fsync timed just before it.
        var decisionOverFsync: [TimeInterval] { zip(decision, fsync).map { $0 - $1 } }
        /// Each tap's arrival to decision minus the phone's own work: the lock's side.
        var decisionWithoutPhoneWork: [TimeInterval] { zip(decision, phoneWork).map { $0 - $1 } }
        /// Each tap's arrival to decision minus the fsync the lock made in it: all the rest.
        var decisionOverOwnFsync: [TimeInterval] { zip(decision, ownFsync).map { $0 - $1 } }
        /// … and minus the phone's own work: the lock and the link.
        var lockAndLink: [TimeInterval] { zip(decisionOverOwnFsync, phoneWork).map { $0 - $1 } }

        func stats(_ name: String) -> [Stats] {
            [Stats(name: "\(name): tap to decision", samples: total),
             Stats(name: "  poll wait + select", samples: detection),
             Stats(name: "  arrival to decision", samples: decision)]
                + (transactionEnd.isEmpty ? [] : [Stats(name: "  arrival to transaction end", samples: transactionEnd)])
        }
    }

    /// Taps through the lock loop: from the card entering the field to the transaction's end.
    /// The first `warmUp` taps are not counted (`tap.discardWarmUp` is called after each).
    static func taps(_ tap: Tap, count: Int, pollInterval: TimeInterval, warmUp: Int = 5) throws -> TapSamples {
        let reader = try VirtualReader()
        defer { reader.stop() }
        /// What the loop reported, for the tapping thread to wait on.
        struct Heard: Sendable {
            var completed = 0, removed = 0, opened = false
            var failures: [String] = []
            var finishedAt: UInt64 = 0, arrivedAt: UInt64 = 0
            var transactionSeconds: TimeInterval = 0
        }
        let heard = Monitor(Heard())
        let transaction = tap.transaction
        let loop = ReaderLoop<LibNFCReader, String>(reader: LibNFCReader(connstring: reader.connstring, ecpPolling: tap.ecpPolling),
                                                    configuration: .init(pollInterval: pollInterval, presenceInterval: pollInterval)) {
            card in try transaction(card.link, card.target)
        }
        loop.onEvent = { event in
            switch event {
            case .readerOpened: heard.withLock { $0.opened = true }
            // Noted, not announced: the waiting thread woken mid-tap would take a CPU from the tap it times.
            case .cardArrived: heard.withLockQuietly { $0.arrivedAt = DispatchTime.now().uptimeNanoseconds }
            case .transactionCompleted(_, _, let d):
                heard.withLock { $0.finishedAt = DispatchTime.now().uptimeNanoseconds; $0.transactionSeconds = d; $0.completed += 1 }
            case .transactionFailed(_, let error, _): heard.withLock { $0.failures.append("\(error)"); $0.completed += 1 }
            case .cardRemoved: heard.withLock { $0.removed += 1 }
            default: return
            }
        }
        loop.start()
        defer { loop.stop() }
        func wait(_ done: (Heard) -> Bool) throws -> Heard {
            try heard.wait(until: Date().addingTimeInterval(10), for: done) { h, ready in
                guard ready else { throw NFCError(.timeout, "the lock loop did not react within 10 s") }
                return h
            }
        }
        _ = try wait { $0.opened }
        var out = TapSamples()
        for i in 0..<(count + warmUp) {
            let card = tap.makeCard()
            // Let the loop settle into polling, then tap at a random phase of its poll cycle.
            Thread.sleep(forTimeInterval: 0.01 + Double.random(in: 0..<max(pollInterval, 0.0001)))
            let fsync = try tap.fsyncScratch?.time()
            let start = DispatchTime.now().uptimeNanoseconds
            try reader.insert(card)
            let now = try wait { $0.completed > i }
            let end = now.finishedAt, arrived = now.arrivedAt, transaction = now.transactionSeconds
            if i >= warmUp {
                let decided = tap.decisionTime?() ?? end
                guard decided >= arrived, decided <= end else {
                    throw NFCError(.chip, "tap \(i): decision time outside the transaction")
                }
                out.total.append(Double(decided - start) / 1e9)
                out.decision.append(Double(decided - arrived) / 1e9)
                if tap.decisionTime != nil { out.transactionEnd.append(transaction) }
                out.detection.append(Double(arrived - start) / 1e9)
                if let fsync { out.fsync.append(fsync) }
                if let own = tap.ownFsync { out.ownFsync.append(own()) }
                if let count = tap.ownFsyncCount { out.ownFsyncCount.append(count()) }
                if let phone = tap.phoneWork { out.phoneWork.append(phone()) }
            } else {
                tap.discardWarmUp?()
            }
            reader.remove()
            _ = try wait { $0.removed > i }
        }
        let failures = heard.withLock { $0.failures }
        if !failures.isEmpty { throw NFCError(.chip, "\(failures.count) transactions failed: \(failures[0])") }
        return out
    }

    /// The lock loop's own poll interval, the default of `--poll-interval-ms`.
    static var defaultPollInterval: TimeInterval { ReaderLoop<LibNFCReader, String>.Configuration().pollInterval }

    /// Bare SELECT round trips, then the SELECT-only tap, then `rounds` rounds of each lock
    /// scenario (standard, FAST, step-up) with a bare fsync baseline in the lock's own directory at
    /// the start of each round: the scenarios alternate, so a shared machine's load drifts over
    /// all of them alike, and each round's medians show the spread.
    static func main(iterations: Int, tapCount: Int, rounds: Int, pollInterval: TimeInterval, json: Bool, stepUp: Bool, plot: String? = nil) -> Int32 {
        let report = BenchReport("nfc", parameters: ["iterations": "\(iterations)", "taps": "\(tapCount)", "rounds": "\(rounds)",
                                                     "pollIntervalMs": "\(Int(pollInterval * 1000))", "stepUp": "\(stepUp)"], json: json)
        do {
            var results = [try selectRoundTrips(iterations: iterations)]
            results += try taps(selectOnlyTap, count: tapCount, pollInterval: pollInterval).stats(selectOnlyTap.name)
            let scenarios = try LockTaps.scenarios(stepUp: stepUp)
            defer { scenarios.forEach { $0.cleanUp() } }
            var fsync: [Double] = [], roundFsync: [Double] = []
            var samples = [TapSamples](repeating: TapSamples(), count: scenarios.count)
            var roundMedians = [[Double]](repeating: [], count: scenarios.count)
            let perRound = max(1, (tapCount + rounds - 1) / rounds)
            for _ in 0..<rounds {
                let f = try scenarios[0].scratch.backToBack(count: 60)
                fsync += f
                roundFsync.append(FsyncBaseline.median(f))
                for (i, scenario) in scenarios.enumerated() {
                    let s = try taps(scenario.tap, count: perRound, pollInterval: pollInterval)
                    roundMedians[i].append(FsyncBaseline.median(s.decision))
                    samples[i].add(s)
                }
            }
            let fsyncStats = Stats(name: "bare fsync back to back (300 B append, lock's directory)", samples: fsync)
            let lone = samples.flatMap(\.fsync)
            results.append(fsyncStats)
            results.append(Stats(name: "lone bare fsync, just before each lock tap", samples: lone))
            for (i, scenario) in scenarios.enumerated() {
                results += samples[i].stats(scenario.tap.name) + scenario.split.stats()
            }
            if let plot {
                let drawn = LatencyPlot(title: "NFC tap, arrival to decision (virtual PN532 through libnfc), against a lone bare fsync",
                                        series: [("lone bare fsync", lone)] + scenarios.enumerated().map { (i, s) in (s.tap.name, samples[i].decision) })
                do { try drawn.write(to: plot) } catch { return 3 }
            }
            let summary = Summary(scenarios: scenarios.map(\.tap.name), samples: samples, roundMedians: roundMedians,
                                  backToBack: FsyncBaseline.median(fsync), roundBackToBack: roundFsync, lone: FsyncBaseline.median(lone))
            report.say("NFC through libnfc \(LibNFC.version) and the virtual PN532 (lock loop poll interval \(Int(pollInterval * 1000)) ms); load average \(FsyncBaseline.loadAverage())")
            report.say("tap to decision = poll wait + select (card in the field → selected) + arrival to decision (→ audit entry fsynced, bolt acts);")
            report.say("transaction end: the phone has heard the answer and the reader's memory is persisted, then the loop re-arms.")
            report.say("SELECT only: the loop's transaction is one SELECT; standard: documents cached, no FAST key on either side;")
            report.say("FAST: cached Kpersistent; step-up: a phone the lock has never seen (documents fetched). Lock on certified firmware: ECP polling on.")
            report.say("\(rounds) rounds of \(perRound) taps per scenario, alternating; 60 bare fsyncs back to back at the start of each round, and a lone one before each tap.")
            for r in results { report.distribution(r) }
            report.say("")
            summary.print(report.say)
            summary.record(in: report)
            return report.finish(0)
        } catch {
            return report.finish(3, error: "nfc benchmark failed: \(error)")
        }
    }
}
