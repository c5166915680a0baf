import AccessProtocol
import ByteCore
import Foundation
import LockRuntime
import PCSC
import ReaderSeam
import VirtualPN532

/// `lockbench-bench pcsc [--round-trips N] [--taps N] [--reader NAME] [--port N] [--json] [--plot F]`: the
/// lock on a PC/SC reader through the real pcscd and vsmartcard's vpcd, a software phone as the
/// virtual card (`VirtualICC`). Baseline in the same run: the bare SCardTransmit SELECT round
/// trip (libpcsclite → pcscd → vpcd → TCP → the card and back). Then taps through `LockRunner`:
/// card inserted → the lock's decision, split into insertion → arrival (vpcd and pcscd noticing
/// the card: polling, ATR, SCardGetStatusChange) and arrival → decision (the transaction), with
/// the transaction's own time waiting on PC/SC. Needs pcscd running with vsmartcard-vpcd.
enum PCSCBenchmark {
    static func main(roundTrips: Int, taps: Int, reader: String, port: UInt16, report: BenchReport, plot: String? = nil) -> Int32 {
        do {
            let bare = try baseline(reader: reader, port: port, count: roundTrips)
            let tapped = try self.taps(reader: reader, port: port, count: taps)
            report.say("PC/SC through pcscd + vpcd on \"\(reader)\" (port \(port))")
            for row in [bare.stats] + tapped.stats { report.distribution(row) }
            let ratio = tapped.stats[1].medianMs / max(bare.stats.medianMs, 0.001)
            report.say(String(format: "arrival to decision / bare round trip: %.0f×", ratio))
            report.figure("bare SCardTransmit SELECT round trip, median", bare.stats.medianMs, "ms")
            report.figure("FAST tap, arrival to decision, median", tapped.stats[1].medianMs, "ms", baseline: "bare SCardTransmit SELECT round trip, median")
            report.figure("FAST tap, card inserted to decision, median", tapped.stats[0].medianMs, "ms", baseline: "bare SCardTransmit SELECT round trip, median")
            if let plot {
                let drawn = LatencyPlot(title: "PC/SC FAST tap through pcscd and vpcd, against a bare SCardTransmit round trip",
                                        series: [("bare SCardTransmit round trip", bare.samples), ("arrival to decision", tapped.decide),
                                                 ("card inserted to decision", tapped.total)])
                do { try drawn.write(to: plot) } catch { return report.finish(3) }
            }
            return report.finish(0)
        } catch {
            return report.finish(3, error: "pcsc benchmark failed: \(error)")
        }
    }

    /// The bare SCardTransmit SELECT round trip to a `SimpleCard`.
    static func baseline(reader name: String, port: UInt16, count: Int) throws -> (stats: NFCBenchmark.Stats, samples: [TimeInterval]) {
        let reader = PCSCReader(readerName: name)
        _ = try reader.open()
        defer { reader.close() }
        let icc = VirtualICC(responder: SimpleCard())
        try icc.insert(port: port)
        defer { icc.remove() }
        let deadline = Date().addingTimeInterval(15)
        var card: PCSCReader.Card?
        while card == nil && Date() < deadline { card = try reader.waitForCard(timeout: 0.25) }
        guard let card else { throw BenchFailure(description: "no card on \(name) within 15 s") }
        let select: [UInt8] = [0x00, 0xA4, 0x04, 0x00, 0x09, 0xA0, 0x00, 0x00, 0x09, 0x09, 0xAC, 0xCE, 0x55, 0x01, 0x00]
        var samples: [TimeInterval] = []
        for _ in 0..<(count + 10) {
            let t0 = DispatchTime.now().uptimeNanoseconds
            _ = try card.link.transceive(select)
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9)
        }
        // Pull the card and wait until pcscd has seen it go, so the first tap is a fresh card.
        icc.remove()
        while !(try reader.waitForRemoval(card, timeout: 0.25)) {
            guard Date() < deadline.addingTimeInterval(15) else { throw BenchFailure(description: "pcscd did not see the card leave") }
        }
        let kept = Array(samples.dropFirst(10))
        return (NFCBenchmark.Stats(name: "bare SCardTransmit SELECT round trip", samples: kept), kept)
    }

    /// Taps of one phone through the whole lock; the first (step-up) is dropped, the rest are FAST.
    static func taps(reader name: String, port: UInt16, count: Int) throws -> (stats: [NFCBenchmark.Stats], total: [TimeInterval], decide: [TimeInterval]) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-bench-pcsc-\(getpid())")
        defer { try? FileManager.default.removeItem(at: dir) }
        try? FileManager.default.removeItem(at: dir)
        let provisioning = try LockProvisioning(directory: dir)
        let service = try LockService(configuration: provisioning.configuration)
        /// What the lock reported, for the tapping thread to wait on.
        struct Heard: Sendable {
            var arrivedAt: UInt64 = 0, decidedAt: UInt64 = 0, removed = 0
            var outcome: TransactionOutcome?
        }
        let heard = Monitor(Heard())
        let runner = LockRunner(service: service, nfc: .pcsc(reader: name), ble: nil) { event in
            heard.withLock { h in
                if event.radioEvent == .cardArrived { h.arrivedAt = DispatchTime.now().uptimeNanoseconds }
                if event.radioEvent == .cardRemoved { h.removed += 1 }
            }
        }
        runner.onOutcome = { o in heard.withLock { $0.decidedAt = DispatchTime.now().uptimeNanoseconds; $0.outcome = o } }
        try runner.start()
        defer { runner.stop() }
        let phone = try provisioning.phone(id: "bench")
        var total: [TimeInterval] = [], detect: [TimeInterval] = [], decide: [TimeInterval] = [], transport: [TimeInterval] = []
        func wait(_ what: String, _ done: (Heard) -> Bool) throws -> Heard {
            try heard.wait(until: Date().addingTimeInterval(20), for: done) { h, ready in
                guard ready else { throw BenchFailure(description: "no \(what) within 20 s") }
                return h
            }
        }
        for i in 0..<(count + 1) {
            let icc = VirtualICC(responder: phone.session)
            let removedBefore = heard.withLock { h in h.outcome = nil; return h.removed }
            let t0 = DispatchTime.now().uptimeNanoseconds
            try icc.insert(port: port)
            let now = try wait("decision") { $0.outcome != nil }
            let o = now.outcome!, arrived = now.arrivedAt, decided = now.decidedAt
            icc.remove()
            _ = try wait("removal") { $0.removed > removedBefore }
            guard o.granted else { throw BenchFailure(description: "tap \(i) denied: \(o.decision)") }
            if i == 0 { continue }  // the step-up tap
            guard o.fast else { throw BenchFailure(description: "tap \(i) was not FAST") }
            total.append(Double(decided - t0) / 1e9)
            detect.append(Double(arrived - t0) / 1e9)
            decide.append(Double(decided - arrived) / 1e9)
            transport.append(o.timings.transport)
        }
        return ([NFCBenchmark.Stats(name: "FAST tap: card inserted to decision", samples: total),
                 NFCBenchmark.Stats(name: "  arrival to decision", samples: decide),
                 NFCBenchmark.Stats(name: "    waiting on PC/SC + phone", samples: transport),
                 NFCBenchmark.Stats(name: "  insertion to arrival (vpcd + pcscd)", samples: detect)], total, decide)
    }

    struct BenchFailure: Error, CustomStringConvertible {
        var description: String
    }
}
