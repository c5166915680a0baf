#if canImport(Glibc)
import Glibc
#endif
import AccessProtocol
import ByteCore
import Codecs
import Crypto
import Dispatch
import Foundation
import Lock
import OfflineUnlock

/// `lockbench-bench durability`: what making one decision durable costs the lock, against a bare
/// fsync of one audit-sized append measured in the same run on the same directory.
///
/// Two decisions, each `EmulatedLock.decide` made durable (the engine's checks and one journal
/// record — the audit entry with its state delta — appended and fsynced): a FAST-style decision for
/// a credential whose access document is cached, and a step-up (a new phone presents its access
/// document: signature check, the document cached). Each runs on a lock that has met 1 and 256
/// phones, and the step-up also on a lock whose cache is full (each step-up evicts a document):
/// the cost must not grow with the cache. Medians over `samples`
/// decisions; point `directory` at the disk you care about. The load average is printed with the
/// numbers (a shared machine's other writers move the fsync).
enum DurabilityBenchmark {
    static func run(samples: Int, directory: String, report: BenchReport) -> Int32 {
        let dir = directory + "/lockbench-durability-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            // One scratch file for every bare fsync, kept open as the lock keeps its journal.
            let scratch = try FsyncBaseline.Scratch(directory: dir)
            defer { scratch.close() }
            let fsyncBefore = median(try scratch.backToBack(count: samples))
            // Interleaved, sample by sample, so that another writer's burst on a shared disk hits
            // both sizes alike.
            let oneLock = try decisions(dir + "/one", cached: 1, samples: samples)
            let manyLock = try decisions(dir + "/many", cached: 256, samples: samples)
            let fullLock = try decisions(dir + "/full", cached: 256, samples: samples, full: true)
            var times = (oneCached: [Double](), manyCached: [Double](), oneStep: [Double](), manyStep: [Double](), fullStep: [Double]())
            for n in 0..<samples {
                times.oneCached.append(try oneLock.cached(n)); times.manyCached.append(try manyLock.cached(n))
                times.oneStep.append(try oneLock.stepUp(n)); times.manyStep.append(try manyLock.stepUp(n))
                times.fullStep.append(try fullLock.stepUp(n))
            }
            let one = (cached: median(times.oneCached), stepUp: median(times.oneStep))
            let many = (cached: median(times.manyCached), stepUp: median(times.manyStep))
            let full = median(times.fullStep)
            let fsyncAfter = median(try scratch.backToBack(count: samples))
            let fsyncMedian = (fsyncBefore + fsyncAfter) / 2
            let lone = try [0.002, 0.010].map { idle in (idle, median(try scratch.lone(count: samples, idle: idle))) }
            func ms(_ s: Double) -> String { String(format: "%.3f ms", s * 1000) }
            report.figure("bare fsync, back to back", fsyncMedian * 1000, "ms")
            for (idle, m) in lone { report.figure("bare fsync alone after \(Int(idle * 1000)) ms idle", m * 1000, "ms", baseline: "bare fsync, back to back") }
            report.say("directory: \(directory)")
            report.say("load average: \(FsyncBaseline.loadAverage())")
            report.say("bare fsync (300-byte append + fsync), median of \(samples): \(ms(fsyncBefore)) before, \(ms(fsyncAfter)) after the decisions")
            report.say("the same fsync alone, after the disk was idle (as a tap's, which follows idle): "
                  + lone.map { "\(Int($0.0 * 1000)) ms idle \(ms($0.1)) (" + String(format: "%.2f", $0.1 / fsyncMedian) + "× back to back)" }
                    .joined(separator: ", "))
            for (kind, a, b) in [("cached-document decision", one.cached, many.cached), ("step-up decision", one.stepUp, many.stepUp)] {
                for (label, m) in [("1 cached document", a), ("256 cached documents", b)] {
                    report.figure("\(kind) made durable, \(label)", m * 1000, "ms", baseline: "bare fsync, back to back",
                                  goal: "≤ one fsync + 1 ms", met: m <= fsyncMedian + 0.001)
                    report.say("\(kind) made durable, \(label): median \(ms(m)) = bare fsync + \(ms(m - fsyncMedian)); " +
                          "goal ≤ one fsync + 1 ms (\(ms(fsyncMedian + 0.001))): \(m <= fsyncMedian + 0.001 ? "met" : "NOT met")")
                }
                report.say(String(format: "\(kind): cost with 256 vs 1 cached documents: %.2f×", b / a))
            }
            report.say("step-up decision made durable, 256 cached documents and the cache full (each step-up evicts the document " +
                  "expiring soonest): median \(ms(full)) = bare fsync + \(ms(full - fsyncMedian))")
            report.say(String(format: "step-up decision, cache full: cost with 256 vs 1 cached documents: %.2f×", full / one.stepUp))
            report.figure("step-up decision made durable, 256 cached documents, cache full", full * 1000, "ms",
                          baseline: "step-up decision made durable, 1 cached document")
            return report.finish(0)
        } catch {
            return report.finish(3, error: "durability benchmark failed: \(error)")
        }
    }

    static func median(_ xs: [Double]) -> Double { FsyncBaseline.median(xs) }

    /// Median times of `decide` for a cached credential and for a step-up (a new phone's document),
    /// on a lock that has cached `cached` documents.
    /// `full`: the cache holds at most `cached` documents, so each step-up evicts one.
    static func decisions(_ dir: String, cached: Int, samples: Int, full: Bool = false) throws -> (cached: (Int) throws -> Double, stepUp: (Int) throws -> Double) {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let issuer = P256.Signing.PrivateKey(), reader = P256.Signing.PrivateKey()
        let group = Primitives.randomBytes(16), sub = Primitives.randomBytes(16)
        let now = Date(timeIntervalSince1970: 1_772_442_000)
        try PrivateKeyFile.write(reader, to: dir + "/reader.key.pem")
        try issuer.publicKey.pemRepresentation.write(toFile: dir + "/issuer.pub.pem", atomically: true, encoding: .utf8)
        var policy = LockPolicy()
        policy.maxCachedDocuments = full ? cached : cached + samples
        let config = LockConfiguration(model: "NDE", firmware: "03.20.00",
                                       reader: .init(signingKey: "reader.key.pem", groupID: Hex.encode(group), subID: Hex.encode(sub)),
                                       trustedIssuers: ["issuer.pub.pem"], policy: policy, stateDirectory: "state",
                                       clock: RFC3339.format(now), baseDirectory: dir)
        let lock = try EmulatedLock(configuration: config)
        func phone(_ n: Int) throws -> (key: [UInt8], document: [UInt8]) {
            let key = Array(P256.Signing.PrivateKey().publicKey.x963Representation)
            let doc = try AccessDocument.issue(access: AccessData(id: Array("p\(n)".utf8), readers: [ReaderRule(groupID: group)]),
                                               credentialPublicKey: key,
                                               validity: .init(signed: now - 3600, validFrom: now - 3600, validUntil: now + 86_400 + Double(n)),
                                               issuerKey: issuer).encoded()
            return (key, doc)
        }
        func stepUp(_ p: (key: [UInt8], document: [UInt8])) -> TransactionDecision {
            lock.decide(Presentation(credentialPublicKey: p.key, transactionID: Primitives.randomBytes(16), interface: .nfc,
                                     protocolVersion: 0x0100, fast: false, accessDocuments: [p.document]))
        }
        var keys = [[UInt8]]()
        for n in 0..<cached {
            let p = try phone(n)
            let d = stepUp(p)
            guard d.isGrant else { throw LockError(.invalidInput, "setup decision: \(d)") }
            keys.append(p.key)
        }
        let newPhones = try (0..<samples).map { try phone(cached + $0) }
        func timed(_ body: () -> TransactionDecision, _ what: String) throws -> Double {
            let t0 = DispatchTime.now().uptimeNanoseconds
            let d = body()
            let t = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
            guard d.isGrant else { throw LockError(.invalidInput, "\(what) decision: \(d)") }
            return t
        }
        return ({ n in
            let p = Presentation(credentialPublicKey: keys[n % keys.count], transactionID: Primitives.randomBytes(16), interface: .nfc,
                                 protocolVersion: 0x0100, fast: true)
            return try timed({ lock.decide(p) }, "cached")
        }, { n in try timed({ stepUp(newPhones[n]) }, "step-up") })
    }
}
