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

    final class Split: @unchecked Sendable {
        /// Uptime (ns) at which the lock's last decision was committed (its audit entry fsynced).
        var decidedAt: UInt64 = 0
        /// Every fsync the lock made (through its `FileIO` seam).
        let fsyncs = Spans()
        /// The lock's own fsync time between a transaction's start and its decision, per tap.
        var ownFsync: [TimeInterval] = []
        /// How many fsyncs the lock made between a transaction's start and its decision, per tap.
        var ownFsyncCount: [Int] = []
        /// The phone's own work (its answers) between a transaction's start and its decision, per tap.
        var phoneWork: [TimeInterval] = []
        /// The card in the field now.
        var card: TimedCard?

        /// Wraps each tap's phone so its work is timed.
        func timed(_ card: APDUResponder) -> APDUResponder {
            let t = TimedCard(card)
            self.card = t
            return t
        }

        /// The lock's write/fsync seam, timing each fsync.
        var io: FileIO {
            FileIO(write: FileIO.system.write, fsync: { [fsyncs] fd in fsyncs.time { FileIO.system.fsync(fd) } })
        }
        /// Up to the decision: waiting on libnfc and the phone, and the lock's own work (its
        /// crypto, the engine, the journal record and its fsync).
        var transportToDecision: [TimeInterval] = []
        var lockToDecision: [TimeInterval] = []
        /// The whole transaction, EXCHANGE included.
        var transport: [TimeInterval] = []
        var session: [TimeInterval] = []
        var persist: [TimeInterval] = []

        func discardLast() {
            if !ownFsyncCount.isEmpty { ownFsyncCount.removeLast() }
            for keyPath in [\Split.transportToDecision, \.lockToDecision, \.transport, \.session, \.persist, \.ownFsync, \.phoneWork] where !self[keyPath: keyPath].isEmpty {
                self[keyPath: keyPath].removeLast()
            }
        }

        func stats() -> [NFCBenchmark.Stats] {
            [NFCBenchmark.Stats(name: "    until the decision: the lock's own fsync", samples: ownFsync),
             NFCBenchmark.Stats(name: "    until the decision: the phone's own work", samples: phoneWork),
             NFCBenchmark.Stats(name: "    until the decision: libnfc + phone", samples: transportToDecision),
             NFCBenchmark.Stats(name: "    until the decision: lock (crypto, engine, record + fsync)", samples: lockToDecision),
             NFCBenchmark.Stats(name: "    whole transaction: libnfc + phone", samples: transport),
             NFCBenchmark.Stats(name: "    whole transaction: lock", samples: session),
             NFCBenchmark.Stats(name: "    persisting reader memory", samples: persist)]
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
        tap.ownFsync = { split.ownFsync.last ?? 0 }
        tap.ownFsyncCount = { split.ownFsyncCount.last ?? 0 }
        tap.phoneWork = { split.phoneWork.last ?? 0 }
        let make = tap.makeCard
        tap.makeCard = { split.timed(make()) }
        return Scenario(tap: tap, scratch: scratch, cleanUp: { scratch.close(); cleanUp() }, split: split)
    }

    private static func transaction(_ service: LockService, split: Split, before: @escaping () -> Void = {},
                                    expect: @escaping (TransactionOutcome) -> Bool, path: String)
        -> (APDUTransceiver, TargetInfo) throws -> String {
        return { link, _ in
            before()
            let timed = TimedLink(link)
            let start = DispatchTime.now().uptimeNanoseconds
            let outcome = service.transact(over: timed, interface: .nfc)
            let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let decided = split.decidedAt
            if decided >= start {
                let waited = timed.spans.seconds(from: start, to: decided)
                let own = split.fsyncs.take(from: start, to: decided)
                split.ownFsync.append(own.seconds)
                split.ownFsyncCount.append(own.count)
                split.phoneWork.append(split.card?.spans.seconds(from: start, to: decided) ?? 0)
                split.transportToDecision.append(waited)
                split.lockToDecision.append(max(0, Double(decided - start) / 1e9 - waited))
            }
            split.transport.append(outcome.timings.transport)
            split.session.append(outcome.timings.total - outcome.timings.transport)
            split.persist.append(wall - outcome.timings.total)
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
            service.lock.onAudit = { _ in split.decidedAt = DispatchTime.now().uptimeNanoseconds }
            let phone = try p.phone(id: "standard")
            _ = service.transact(over: InMemoryLink(phone.session), interface: .nfc)  // step-up once: documents cached
            let configuration = phone.session.configuration
            out.append(try scenario(.init(name: "standard",
                                           makeCard: { CredentialSession(configuration: configuration) },
                                           transaction: transaction(service, split: split, before: { service.reader.fastCache = FastCache() },
                                                                    expect: { !$0.fast && !$0.stepUp }, path: "standard"),
                                           ecpPolling: service.walletPolling, decisionTime: { split.decidedAt }),
                                service, split: split, cleanUp: cleanUp))
        }

        // FAST: one phone across taps; both sides keep the Kpersistent learnt at the first grant.
        do {
            let split = Split()
            let (p, service, cleanUp) = try lock("fast", split: split)
            service.lock.onAudit = { _ in split.decidedAt = DispatchTime.now().uptimeNanoseconds }
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
            service.lock.onAudit = { _ in split.decidedAt = DispatchTime.now().uptimeNanoseconds }
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
