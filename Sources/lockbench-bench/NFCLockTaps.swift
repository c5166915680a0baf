import AccessProtocol
import ByteCore
import Foundation
import Synchronization
import Lock
import LockBenchTestDoubles
import LockRuntime
import NFC
import OfflineUnlock

/// Tap-to-decision scenarios for `lockbench-bench nfc`: the whole lock (`LockService`: reader
/// session, engine, bolt, audit log fsynced, reader memory persisted) behind the NFC loop, and a
/// software phone (`CredentialSession`) in the virtual PN532. Each tap is checked to have taken
/// the path its row is named after, so a row cannot silently measure something else.
enum LockTaps {
    struct Scenario {
        var tap: NFCBenchmark.Tap
        /// The bare fsync baseline's scratch file in the lock's state directory (also the tap's
        /// `fsyncScratch`).
        var scratch: FsyncBaseline.Scratch
        var cleanUp: () -> Void
        /// The transactions' own split: time waiting on libnfc (APDUs through the pty and the
        /// virtual PN532, the phone's work included) and the rest (the lock's crypto, engine,
        /// audit fsync, persisted reader memory).
        let split: Split
    }

    /// Recorded on the reader loop's thread and the lock's (the decision's time), read by the
    /// benchmark's.
    final class Split: Sendable {
        struct Samples: Sendable {
            /// Uptime (ns) at which the lock's last decision was committed (its audit entry fsynced).
            var decidedAt: UInt64 = 0
            /// The lock's own fsync time between a transaction's start and its decision, per tap.
            var ownFsync: [TimeInterval] = []
            /// How many fsyncs the lock made between a transaction's start and its decision, per tap.
            var ownFsyncCount: [Int] = []
            /// The phone's own work (its answers) between a transaction's start and its decision, per tap.
            var phoneWork: [TimeInterval] = []
            /// The card in the field now.
            var card: TimedCard?
            /// Up to the decision: waiting on libnfc and the phone, and the lock's own work (its
            /// crypto, the engine, the journal record and its fsync).
            var transportToDecision: [TimeInterval] = []
            var lockToDecision: [TimeInterval] = []
            /// The whole transaction, EXCHANGE included.
            var transport: [TimeInterval] = []
            var session: [TimeInterval] = []
            var persist: [TimeInterval] = []
        }
        /// Every fsync the lock made (through its `FileIO` seam).
        let fsyncs = Spans()
        private let samples = Mutex(Samples())

        func withSamples<T: Sendable>(_ body: (inout Samples) -> T) -> T { samples.withLock { body(&$0) } }

        var decidedAt: UInt64 { withSamples { $0.decidedAt } }

        /// The lock committed a decision now (its `onAudit`).
        func decided() { withSamples { $0.decidedAt = DispatchTime.now().uptimeNanoseconds } }

        /// Wraps each tap's phone so its work is timed.
        func timed(_ card: APDUResponder) -> APDUResponder {
            let t = TimedCard(card)
            withSamples { $0.card = t }
            return t
        }

        /// The lock's write/fsync seam, timing each fsync.
        var io: FileIO {
            FileIO(write: FileIO.system.write, fsync: { [fsyncs] fd in fsyncs.time { FileIO.system.fsync(fd) } })
        }

        func discardLast() {
            withSamples { s in
                if !s.ownFsyncCount.isEmpty { s.ownFsyncCount.removeLast() }
                for keyPath in [\Samples.transportToDecision, \.lockToDecision, \.transport, \.session, \.persist, \.ownFsync, \.phoneWork] where !s[keyPath: keyPath].isEmpty {
                    s[keyPath: keyPath].removeLast()
                }
            }
        }

        func stats() -> [NFCBenchmark.Stats] {
            let s = withSamples { $0 }
            return [NFCBenchmark.Stats(name: "    until the decision: the lock's own fsync", samples: s.ownFsync),
                    NFCBenchmark.Stats(name: "    until the decision: the phone's own work", samples: s.phoneWork),
                    NFCBenchmark.Stats(name: "    until the decision: libnfc + phone", samples: s.transportToDecision),
                    NFCBenchmark.Stats(name: "    until the decision: lock (crypto, engine, record + fsync)", samples: s.lockToDecision),
                    NFCBenchmark.Stats(name: "    whole transaction: libnfc + phone", samples: s.transport),
                    NFCBenchmark.Stats(name: "    whole transaction: lock", samples: s.session),
                    NFCBenchmark.Stats(name: "    persisting reader memory", samples: s.persist)]
        }
    }

    /// Timed intervals (uptime ns), recorded from any thread: the parts of a tap.
    final class Spans: Sendable {
        private let spans = Mutex<[(start: UInt64, end: UInt64)]>([])

        func time<T>(_ body: () throws -> T) rethrows -> T {
            let start = DispatchTime.now().uptimeNanoseconds
            defer { let end = DispatchTime.now().uptimeNanoseconds; spans.withLock { $0.append((start, end)) } }
            return try body()
        }

        /// The spans that lie within `start…end`: their time in seconds and how many; forgets them all.
        func take(from start: UInt64, to end: UInt64) -> (seconds: TimeInterval, count: Int) {
            spans.withLock { spans in
                defer { spans.removeAll() }
                let inside = spans.filter { $0.start >= start && $0.end <= end }
                return (Double(inside.reduce(UInt64(0)) { $0 + ($1.end - $1.start) }) / 1e9, inside.count)
            }
        }

        /// The time of the spans that lie within `start…end`, in seconds; forgets them all.
        func seconds(from start: UInt64, to end: UInt64) -> TimeInterval { take(from: start, to: end).seconds }
    }

    /// The link as the lock's transaction sees it, each round trip timed.
    final class TimedLink: APDUTransceiver {
        let inner: APDUTransceiver
        let spans = Spans()
        init(_ inner: APDUTransceiver) { self.inner = inner }
        func transceive(_ command: [UInt8]) throws -> [UInt8] { try spans.time { try inner.transceive(command) } }
    }

    /// The phone as the virtual PN532 sees it, with the time of each of its answers (uptime ns):
    /// its own work (parsing, its crypto), which a real phone does on its own hardware.
    final class TimedCard: APDUResponder {
        let inner: APDUResponder
        let spans = Spans()
        init(_ inner: APDUResponder) { self.inner = inner }
        func respond(to command: [UInt8]) -> [UInt8] { spans.time { inner.respond(to: command) } }
        func reset() { inner.reset() }
        var answersAtOnce: Bool { inner.answersAtOnce }
        func answerSent() { inner.answerSent() }
    }

    struct WrongPath: Error, CustomStringConvertible {
        var description: String
    }

    /// A fresh lock in a temporary directory, on certified firmware (ECP polling on).
    private static func lock(_ name: String, split: Split) throws -> (LockProvisioning, LockService, () -> Void) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-bench-\(name)-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        let provisioning = try LockProvisioning(directory: dir)
        let service = try LockService(configuration: provisioning.configuration, io: split.io)
        return (provisioning, service, { service.lock.onAudit = nil; try? FileManager.default.removeItem(at: dir) })
    }

    private static func scenario(_ tap: NFCBenchmark.Tap, _ service: LockService, split: Split, cleanUp: @escaping () -> Void) throws -> Scenario {
        var tap = tap
        let scratch = try FsyncBaseline.Scratch(directory: service.configuration.stateDirectoryPath)
        tap.fsyncScratch = scratch
        tap.discardWarmUp = { split.discardLast() }
        tap.ownFsync = { split.withSamples { $0.ownFsync.last ?? 0 } }
        tap.ownFsyncCount = { split.withSamples { $0.ownFsyncCount.last ?? 0 } }
        tap.phoneWork = { split.withSamples { $0.phoneWork.last ?? 0 } }
        let make = tap.makeCard
        tap.makeCard = { split.timed(make()) }
        return Scenario(tap: tap, scratch: scratch, cleanUp: { scratch.close(); cleanUp() }, split: split)
    }

    private static func transaction(_ service: LockService, split: Split, before: @escaping @Sendable () -> Void = {},
                                    expect: @escaping @Sendable (TransactionOutcome) -> Bool, path: String)
        -> @Sendable (APDUTransceiver, TargetInfo) throws -> String {
        return { link, _ in
            before()
            let timed = TimedLink(link)
            let start = DispatchTime.now().uptimeNanoseconds
            let outcome = service.transact(over: timed, interface: .nfc)
            let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let (decided, card) = split.withSamples { ($0.decidedAt, $0.card) }
            // Until the decision, when this transaction reached one: the spans inside it.
            let untilDecision = decided < start ? nil
                : (waited: timed.spans.seconds(from: start, to: decided), own: split.fsyncs.take(from: start, to: decided),
                   phone: card?.spans.seconds(from: start, to: decided) ?? 0)
            split.withSamples { s in
                if let d = untilDecision {
                    s.ownFsync.append(d.own.seconds)
                    s.ownFsyncCount.append(d.own.count)
                    s.phoneWork.append(d.phone)
                    s.transportToDecision.append(d.waited)
                    s.lockToDecision.append(max(0, Double(decided - start) / 1e9 - d.waited))
                }
                s.transport.append(outcome.timings.transport)
                s.session.append(outcome.timings.total - outcome.timings.transport)
                s.persist.append(wall - outcome.timings.total)
            }
            guard outcome.granted, expect(outcome) else {
                throw WrongPath(description: "expected a \(path) grant, got \(outcome.decision) fast=\(outcome.fast) stepUp=\(outcome.stepUp)")
            }
            return "granted"
        }
    }

    static func scenarios(stepUp: Bool) throws -> [Scenario] {
        var out: [Scenario] = []

        // Standard: the lock holds the phone's documents (no step-up), but neither side has a
        // FAST key: a fresh session of the same phone each tap, and the reader's FAST cache
        // cleared before each transaction. ECDH, both signatures, the secure channel.
        do {
            let split = Split()
            let (p, service, cleanUp) = try lock("standard", split: split)
            service.lock.onAudit = { _ in split.decided() }
            let phone = try p.phone(id: "standard")
            _ = service.transact(over: InMemoryLink(phone.session), interface: .nfc)  // step-up once: documents cached
            let configuration = phone.session.configuration
            out.append(try scenario(.init(name: "standard",
                                           makeCard: { CredentialSession(configuration: configuration) },
                                           transaction: transaction(service, split: split, before: { service.withReader { $0.fastCache = FastCache() } },
                                                                    expect: { !$0.fast && !$0.stepUp }, path: "standard"),
                                           ecpPolling: service.walletPolling, decisionTime: { split.decidedAt }),
                                service, split: split, cleanUp: cleanUp))
        }

        // FAST: one phone across taps; both sides keep the Kpersistent learnt at the first grant.
        do {
            let split = Split()
            let (p, service, cleanUp) = try lock("fast", split: split)
            service.lock.onAudit = { _ in split.decided() }
            let phone = try p.phone(id: "fast")
            _ = service.transact(over: InMemoryLink(phone.session), interface: .nfc)
            let session = phone.session
            out.append(try scenario(.init(name: "FAST", makeCard: { session },
                                           transaction: transaction(service, split: split, expect: { $0.fast && !$0.stepUp }, path: "FAST"),
                                           ecpPolling: service.walletPolling, decisionTime: { split.decidedAt }),
                                service, split: split, cleanUp: cleanUp))
        }

        // Step-up: a phone the lock has never seen each tap (a new key and document, made before
        // the tap is timed): standard, then the step-up SELECT, ENVELOPE and the DeviceResponse.
        if stepUp {
            let split = Split()
            let (p, service, cleanUp) = try lock("stepup", split: split)
            service.lock.onAudit = { _ in split.decided() }
            var n = 0
            out.append(try scenario(.init(name: "step-up",
                                           makeCard: { n += 1; return try! p.phone(id: "stepup-\(n)").session },
                                           transaction: transaction(service, split: split, expect: { !$0.fast && $0.stepUp }, path: "step-up"),
                                           ecpPolling: service.walletPolling, decisionTime: { split.decidedAt }),
                                service, split: split, cleanUp: cleanUp))
        }
        return out
    }
}
