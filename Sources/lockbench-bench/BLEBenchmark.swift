import AccessProtocol
import BLE
import ByteCore
import Codecs
import Crypto
import Foundation
import Synchronization
import Lock
import LockRuntime
import OfflineUnlock
import ReaderSeam

/// `lockbench-bench ble [--count N] [--echoes N] [--echo-flow] [--controller bumble|rootcanal]
/// [--lock SPEC --phone SPEC]`: connection to decision, median over N unlocks of the Swift phone
/// on the Swift lock over virtual controllers, with the bare link's round trip (an L2CAP echo on
/// an open credit-based channel) measured in the same run as the baseline. By default the lock
/// runs the real reader + engine (`LockService`) and the phone the access protocol's credential
/// (N standard, then N FAST transactions); `--echo-flow` measures the radio alone with
/// LockBench's echo flow (connection to APDU exchange complete).
enum BLEBenchmark {
    static func run(count: Int, echoes: Int, lockSpec: String?, phoneSpec: String?, controller: String, engine: Bool,
                    report: BenchReport, plot: String? = nil) -> Int32 {
        var lockSpec = lockSpec, phoneSpec = phoneSpec
        // Virtual controllers unless both ends were given: Bumble's two on one link, or RootCanal
        // (one controller per connection on its HCI port; models connection events).
        var controllers: VirtualControllers?
        if lockSpec == nil || phoneSpec == nil {
            do {
                let started = try controller == "rootcanal" ? VirtualControllers.rootCanal() : VirtualControllers.bumble()
                lockSpec = started.spec(0)
                phoneSpec = started.spec(1)
                controllers = started
            } catch {
                return report.finish(3, error: "cannot start the \(controller) controller: \(error)")
            }
        }
        defer { controllers?.stop() }
        do {
            var lockConfig = BLELock.Configuration(transport: try TransportSpec(parsing: lockSpec!))
            lockConfig.echoPSM = AliroBLE.echoPSM
            let site = engine ? try EngineSite() : nil
            let transaction: @Sendable (BLEReaderSession) -> Bool
            if let site {
                transaction = { session in
                    let outcome = site.service.transact(over: session, interface: .ble)
                    site.record(outcome)
                    return outcome.granted
                }
            } else {
                transaction = EchoFlow.lockTransaction()
            }
            let lock = try BLELock(configuration: lockConfig)
            lock.start()
            defer { lock.stop() }
            let loop = ReaderLoop(reader: lock, configuration: .init(maxConcurrent: 4), granted: { $0 }, transaction: transaction)
            loop.start()
            defer { loop.stop() }
            guard lock.waitUntilAdvertising(timeout: 20) else { return report.finish(3, error: "the lock's controller did not come up") }
            let phone = try BLEPhone(configuration: BLEPhone.Configuration(transport: try TransportSpec(parsing: phoneSpec!)))
            try phone.start(timeout: 20)
            defer { phone.stop() }

            // Baseline: bare L2CAP echo round trips on one open credit-based channel.
            let session = try phone.connectToLock()
            let echo = try session.openChannel(psm: AliroBLE.echoPSM)
            let probe = [UInt8](repeating: 0x5A, count: 20)
            var rtts = [Double]()
            for _ in 0..<echoes {
                let t0 = Date()
                try echo.send(probe)
                guard try echo.receive(timeout: 5) == probe else { return report.finish(1, error: "echo mismatch") }
                rtts.append(Date().timeIntervalSince(t0) * 1000)
            }
            echo.close()
            session.disconnect()

            // Unlocks: connection complete → discovery → channel → APDU exchange complete.
            var total = [Double](), toChannel = [Double](), exchange = [Double]()
            var fastTotal = [Double]()
            var failures = 0
            // Engine: one warm-up (step-up caches the access document), then `count` standard
            // transactions (a fresh credential session: no FAST key) and `count` FAST ones.
            if let site { _ = try? phone.unlock(with: site.credential(fast: false)) }
            let fastPhone = site?.credential(fast: true)
            if let fastPhone { _ = try? phone.unlock(with: fastPhone) }  // its first grant caches the FAST key
            for _ in 0..<count {
                do {
                    let o = try phone.unlock(with: site?.credential(fast: false) ?? EchoCredential())
                    guard o.granted else {
                        failures += 1
                        FileHandle.standardError.write(Data("unlock \(failures): completion \(o.completion.map { Hex.encode($0) } ?? "none") after \(o.commandsAnswered) commands\n".utf8))
                        continue
                    }
                    total.append(o.connectToCompleted * 1000)
                    toChannel.append(o.connectToChannel * 1000)
                    exchange.append((o.connectToCompleted - o.connectToChannel) * 1000)
                } catch {
                    failures += 1
                    FileHandle.standardError.write(Data("unlock \(failures) failed: \(error)\n".utf8))
                }
            }
            if let fastPhone {
                for _ in 0..<count {
                    if let o = try? phone.unlock(with: fastPhone), o.granted {
                        fastTotal.append(o.connectToCompleted * 1000)
                    } else {
                        failures += 1
                    }
                }
            }
            report.say("BLE over \(controller == "rootcanal" ? "RootCanal" : "Bumble") virtual controllers (\(lockSpec!) ↔ \(phoneSpec!))"
                  + (engine ? ", real reader + engine + credential" : ", echo flow"))
            report.say(line("baseline: L2CAP echo round trip (20-byte SDU)", rtts))
            report.say(line(engine ? "connection → decision, standard (granted)" : "connection → APDU exchange complete (granted)", total))
            if engine { report.say(line("connection → decision, FAST (granted)", fastTotal)) }
            report.say(line("  connection → channel open (MTU, discovery, SPSM read, version write, CoC)", toChannel))
            report.say(line(engine ? "  channel open → completed (SELECT, AUTH0, AUTH1, EXCHANGE, completed)" : "  channel open → completed (SELECT + 2 APDUs + completed notification)", exchange))
            if let site { report.say("lock decisions: \(site.summary)") }
            report.say("unlocks: \(total.count + fastTotal.count) granted, \(failures) failed")
            if let m = median(total), let e = median(rtts) {
                report.say(String(format: "ratio: unlock median = %.1f × echo median; goal ≤ 50 ms median: %@", m / e, m <= 50 ? "met" : "NOT met"))
            }
            let unlock = engine ? "connection → decision, standard" : "connection → APDU exchange complete"
            report.figure("L2CAP echo round trip, median", median(rtts) ?? 0, "ms")
            report.figure("\(unlock), median", median(total) ?? 0, "ms", baseline: "L2CAP echo round trip, median",
                          goal: "≤ 50 ms", met: median(total).map { $0 <= 50 })
            if engine { report.figure("connection → decision, FAST, median", median(fastTotal) ?? 0, "ms", baseline: "L2CAP echo round trip, median") }
            report.figure("failed unlocks", Double(failures), "unlocks", goal: "0", met: failures == 0)
            if let plot {
                let drawn = LatencyPlot(title: "BLE unlock over virtual controllers, against a bare L2CAP echo",
                                        series: [("L2CAP echo round trip", rtts.map { $0 / 1000 }), (unlock, total.map { $0 / 1000 })]
                                            + (engine ? [("connection → decision, FAST", fastTotal.map { $0 / 1000 })] : []))
                do { try drawn.write(to: plot) } catch { return report.finish(3) }
            }
            return report.finish(failures == 0 ? 0 : 1)
        } catch let error as BLEError {
            return report.finish(3, error: "BLE benchmark failed: \(error.reason)")
        } catch {
            return report.finish(3, error: "BLE benchmark failed: \(error)")
        }
    }

    /// A site for `--engine`: issuer, reader identity, a lock configuration in a temporary
    /// directory, and a phone with an access document for that lock.
    final class EngineSite: Sendable {
        let directory: URL
        let service: LockService
        let phoneKey = P256.Signing.PrivateKey()
        let trusted: TrustedReader
        let document: [UInt8]
        /// Outcomes by kind, recorded from the reader loop's threads.
        private let counts = Mutex<[String: Int]>([:])

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-ble-bench-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let issuer = P256.Signing.PrivateKey(), readerKey = P256.Signing.PrivateKey()
            let groupID = (0..<16).map { _ in UInt8.random(in: 0...255) }, subID = (0..<16).map { _ in UInt8.random(in: 0...255) }
            try Data(issuer.publicKey.pemRepresentation.utf8).write(to: directory.appendingPathComponent("issuer.pub.pem"))
            try PrivateKeyFile.write(readerKey, to: directory.appendingPathComponent("reader.key.pem").path)
            let config = LockConfiguration(model: "Schlage NDE", firmware: "02.12.72",
                                           reader: .init(signingKey: "reader.key.pem", groupID: groupID.hex, subID: subID.hex),
                                           trustedIssuers: ["issuer.pub.pem"], stateDirectory: "state", clock: "system",
                                           baseDirectory: directory.path)
            service = try LockService(configuration: config)
            trusted = TrustedReader(groupID: groupID, publicKey: Primitives.point(of: readerKey))
            let now = Date()
            let access = try AccessData(id: Array("bench".utf8), readers: [try ReaderRule(groupID: groupID)])
            document = try AccessDocument.issue(access: access, credentialPublicKey: Primitives.point(of: phoneKey),
                                                validity: .init(signed: now, validFrom: now.addingTimeInterval(-600), validUntil: now.addingTimeInterval(8 * 3600)),
                                                issuerKey: issuer).encoded()
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        /// A credential session; `fast` sessions are reused so FAST keys carry over.
        func credential(fast: Bool) -> CredentialSession {
            CredentialSession(configuration: CredentialConfiguration(signingKey: phoneKey, trustedReaders: [trusted],
                                                                     accessDocuments: [document], interface: .ble))
        }

        func record(_ outcome: TransactionOutcome) {
            let key = (outcome.granted ? "granted" : "denied") + (outcome.fast ? " fast" : "") + (outcome.stepUp ? " step-up" : "")
            counts.withLock { $0[key, default: 0] += 1 }
        }

        var summary: String { counts.withLock { $0.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") } }
    }

    static func median(_ xs: [Double]) -> Double? {
        guard !xs.isEmpty else { return nil }
        let s = xs.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    static func line(_ label: String, _ xs: [Double]) -> String {
        guard let m = median(xs) else { return "\(label): no samples" }
        let s = xs.sorted()
        return String(format: "%@: median %.2f ms, p90 %.2f ms, min %.2f ms, max %.2f ms (n=%d)",
                      label, m, s[min(s.count - 1, Int(Double(s.count) * 0.9))], s.first!, s.last!, s.count)
    }
}
