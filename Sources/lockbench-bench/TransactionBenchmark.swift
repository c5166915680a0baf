import AccessProtocol
import ByteCore
import Codecs
import Crypto
import Dispatch
import Foundation
import LockBenchTestDoubles
import OfflineUnlock

/// `lockbench-bench transaction`: the lock side of a standard and of a FAST transaction, both
/// state machines in-process over an in-memory APDU link, against the cost of the crypto each one
/// cannot avoid, measured in the same run.
///
/// Lock-side time = the transaction's wall time minus the time spent inside the link (which, in
/// memory, is the credential computing its answers). Each figure is the best mean over several
/// batches (shared cores make the best batch the least disturbed one).
/// Passes through to the engine and adds up the time spent in it.
final class TimingDecider: AccessDecider {
    let inner: AccessDecider
    var seconds = 0.0
    init(_ inner: AccessDecider) { self.inner = inner }
    func wantsStepUp(credentialPublicKey: [UInt8], timestamps: SignedTimestamps) -> Bool {
        let t0 = DispatchTime.now().uptimeNanoseconds
        defer { seconds += Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9 }
        return inner.wantsStepUp(credentialPublicKey: credentialPublicKey, timestamps: timestamps)
    }
    func decide(_ presentation: Presentation) -> Decision {
        let t0 = DispatchTime.now().uptimeNanoseconds
        defer { seconds += Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9 }
        return inner.decide(presentation)
    }
}

enum TransactionBenchmark {
    static func run(iterations: Int, batches: Int, report: BenchReport) -> Int32 {

        // Fixture: a reader, a credential holding an access document, and the real engine with
        // that document cached (so the standard path has no step-up).
        let readerKey = P256.Signing.PrivateKey(), credentialKey = P256.Signing.PrivateKey(), issuerKey = P256.Signing.PrivateKey()
        let group = Primitives.randomBytes(16), sub = Primitives.randomBytes(16)
        let now = Date(timeIntervalSince1970: 1_772_442_000)
        let doc = try! AccessDocument.issue(access: try! AccessData(id: Array("bench".utf8), readers: [try! ReaderRule(groupID: group)]),
                                            credentialPublicKey: credentialKey.publicBytes,
                                            validity: .init(signed: now - 3600, validFrom: now - 3600, validUntil: now + 86_400),
                                            issuerKey: issuerKey).encoded()
        func engine() -> OfflineUnlockEngine {
            var state = EngineState(clock: TrustedClock(trustedAt: now))
            state.cachedDocuments[Hex.encode(credentialKey.publicBytes)] = doc
            let core = DecisionCore(reader: OfflineUnlock.ReaderIdentity(groupID: group, subID: sub), policy: LockPolicy(),
                                    trust: try! TrustStore(issuerPublicKeys: [issuerKey.publicBytes]))
            return OfflineUnlockEngine(core: core, state: state, now: { now })
        }
        let identity = AccessProtocol.ReaderSigningIdentity(signingKey: readerKey, groupID: group, subID: sub)
        let credential = CredentialSession(configuration: CredentialConfiguration(
            signingKey: credentialKey, trustedReaders: [TrustedReader(groupID: group, publicKey: readerKey.publicBytes)],
            accessDocuments: [doc]))
        let link = InMemoryLink(credential)

        /// Best per-iteration mean over `batches` batches, seconds.
        func measure(_ n: Int = iterations, _ body: () -> Void) -> Double {
            var best = Double.infinity
            for _ in 0..<batches {
                let t0 = DispatchTime.now().uptimeNanoseconds
                for _ in 0..<n { body() }
                best = min(best, Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9 / Double(n))
            }
            return best
        }
        /// Best lock-side time (total − link) per transaction, its engine part, and best total.
        func measureTransactions(_ reader: LockReader, expectFast: Bool) -> (lock: Double, total: Double, engine: Double) {
            var bestLock = Double.infinity, bestTotal = Double.infinity, engineAtBest = 0.0
            let timing = reader.decider as! TimingDecider
            for _ in 0..<batches {
                var lockSum = 0.0, totalSum = 0.0
                timing.seconds = 0
                for _ in 0..<iterations {
                    let o = reader.runTransaction(over: link, at: now)
                    precondition(o.granted && o.fast == expectFast, "benchmark transaction: \(o.decision), fast \(o.fast)")
                    lockSum += o.timings.total - o.timings.transport
                    totalSum += o.timings.total
                }
                if lockSum / Double(iterations) < bestLock { engineAtBest = timing.seconds / Double(iterations) }
                bestLock = min(bestLock, lockSum / Double(iterations))
                bestTotal = min(bestTotal, totalSum / Double(iterations))
            }
            return (bestLock, bestTotal, engineAtBest)
        }

        // Transactions. The reader's replay memory is cleared per batch only by its own bound.
        let standardReader = LockReader(configuration: ReaderConfiguration(identity: identity, useFast: false), decider: TimingDecider(engine()))
        _ = standardReader.runTransaction(over: link, at: now)  // warm up
        let standard = measureTransactions(standardReader, expectFast: false)
        let fastReader = LockReader(configuration: ReaderConfiguration(identity: identity, useFast: true), decider: TimingDecider(engine()))
        _ = fastReader.runTransaction(over: link, at: now)      // standard once: both sides learn Kpersistent
        let fast = measureTransactions(fastReader, expectFast: true)

        // The crypto the lock side cannot avoid, on inputs of the real sizes.
        let peer = P256.KeyAgreement.PrivateKey()
        let peerPublic = Array(peer.publicKey.x963Representation)
        let mine = P256.KeyAgreement.PrivateKey()
        let tid = Primitives.randomBytes(16)
        let signed = Primitives.randomBytes(4 + 32 + 4 + 32 + 4 + 32 + 2 + 16 + 6)
        let deviceSignature = Primitives.sign(signed, with: credentialKey)
        let z = try! Primitives.ecdh(privateKey: mine, peerPublicKey: peerPublic)
        let salt = Primitives.randomBytes(32 + 12 + 32 + 1 + 4 + 32 + 16 + 2 + 21)
        let info = Primitives.randomBytes(32)
        let key = Primitives.randomBytes(32)
        let ivR = [UInt8](repeating: 0, count: 8) + [0, 0, 0, 1], ivD = [UInt8](repeating: 0, count: 7) + [1, 0, 0, 0, 1]
        let auth1Response = try! Primitives.seal(key: key, nonce: ivD, plaintext: Primitives.randomBytes(67 + 66 + 4 + 22 + 22))
        let exchangeResponse = try! Primitives.seal(key: key, nonce: ivD, plaintext: [0, 2, 0x90, 0])
        let cryptogram = try! Primitives.seal(key: key, nonce: [UInt8](repeating: 0, count: 12), plaintext: Primitives.randomBytes(48))
        let n = max(iterations, 500)
        // Key generation as the protocol does it: a scalar from 32 random bytes (swift-crypto's
        // `P256.KeyAgreement.PrivateKey()` is several times slower on this platform).
        let rng = SystemRandom()
        let keygen = measure(n) { _ = try? P256.KeyAgreement.PrivateKey(rawRepresentation: rng.bytes(32)) }
        let ecdh = measure(n) { _ = try! Primitives.ecdh(privateKey: mine, peerPublicKey: peerPublic) }
        let sign = measure(n) { _ = Primitives.sign(signed, with: readerKey) }
        let verify = measure(n) { _ = Primitives.verifyRaw(signature: deviceSignature, message: signed, publicKey: credentialKey.publicBytes) }
        let x963 = measure(n) { _ = Primitives.x963KDF(sharedSecret: z, sharedInfo: tid, length: 32) }
        let hkdf160 = measure(n) { _ = try? Primitives.hkdf(ikm: z, salt: salt, info: info, length: 160) }
        let hkdf32 = measure(n) { _ = try? Primitives.hkdf(ikm: z, salt: salt + info, info: info, length: 32) }
        let openAuth1 = measure(n) { _ = try! Primitives.open(key: key, nonce: ivD, sealed: auth1Response) }
        let sealExchange = measure(n) { _ = try! Primitives.seal(key: key, nonce: ivR, plaintext: [0x97, 2, 1, 1]) }
        let openExchange = measure(n) { _ = try! Primitives.open(key: key, nonce: ivD, sealed: exchangeResponse) }
        let openCryptogram = measure(n) { _ = try! Primitives.open(key: key, nonce: [UInt8](repeating: 0, count: 12), sealed: cryptogram) }

        func us(_ s: Double) -> String { String(format: "%8.1f µs", s * 1e6) }
        // Where the lock side's time goes beyond the primitives.
        let e = engine()
        let system = SystemRandom()
        let keyFromBytes = measure(n) { _ = try? P256.KeyAgreement.PrivateKey(rawRepresentation: system.bytes(32)) }
        let randomBytes = measure(n) { _ = system.bytes(32) }
        let credentialPoint = credentialKey.publicBytes  // outside the loop: deriving it costs more than the lookup
        let wantsStepUp = measure(n) { _ = e.wantsStepUp(credentialPublicKey: credentialPoint) }
        let isPoint = measure(n) { _ = Primitives.isPoint(peerPublic) }
        report.say("components")
        for (name, t) in [("key from 32 random bytes", keyFromBytes), ("SystemRandom 32 bytes", randomBytes),
                          ("engine wantsStepUp (cached doc)", wantsStepUp), ("P-256 point check", isPoint)] {
            report.say("  \(name.padding(toLength: 32, withPad: " ", startingAt: 0)) \(us(t))")
        }
        let standardFloor = keygen + ecdh + x963 + hkdf160 + hkdf32 + sign + verify + openAuth1 + sealExchange + openExchange
        let fastFloor = keygen + hkdf160 + openCryptogram + sealExchange + openExchange

        report.say("lockbench-bench transaction: \(batches) batches × \(iterations) transactions, best batch mean")
        report.say("")
        report.say("crypto primitives (lock side)")
        for (name, t) in [("P-256 key generation", keygen), ("ECDH (incl. peer key check)", ecdh), ("ECDSA sign", sign),
                          ("ECDSA verify (incl. key check)", verify), ("X9.63 KDF", x963), ("HKDF-SHA256 → 160", hkdf160),
                          ("HKDF-SHA256 → 32", hkdf32), ("AES-GCM open AUTH1 response", openAuth1),
                          ("AES-GCM seal EXCHANGE", sealExchange), ("AES-GCM open EXCHANGE response", openExchange),
                          ("AES-GCM open cryptogram", openCryptogram)] {
            report.say("  \(name.padding(toLength: 32, withPad: " ", startingAt: 0)) \(us(t))")
        }
        report.say("")
        /// One transaction kind against its crypto floor: five lines for people, the figures for --json.
        func section(_ title: String, _ name: String, floor: Double, floorParts: String, _ m: (lock: Double, engine: Double, total: Double), goal: Double? = nil) {
            func ratio(_ x: Double) -> String { String(format: "%.2f", x / floor) }
            report.say(title)
            report.say("  crypto floor                     \(us(floor))   \(floorParts)")
            report.say("  lock side                        \(us(m.lock))   ratio \(ratio(m.lock))× floor" + (goal.map { String(format: " (goal ≤ %.2f)", $0) } ?? ""))
            report.say("    of which the engine            \(us(m.engine))   (wantsStepUp + decide)")
            report.say("  lock side, protocol only         \(us(m.lock - m.engine))   ratio \(ratio(m.lock - m.engine))× floor")
            report.say("  both sides, in memory            \(us(m.total))")
            report.say("")
            report.figure("\(name), crypto floor", floor * 1e6, "µs")
            report.figure("\(name), lock side", m.lock * 1e6, "µs", baseline: "\(name), crypto floor",
                          goal: goal.map { String(format: "ratio ≤ %.2f", $0) }, met: goal.map { m.lock / floor <= $0 })
            report.figure("\(name), both sides in memory", m.total * 1e6, "µs")
        }
        section("standard transaction (SELECT, AUTH0, AUTH1, EXCHANGE; engine decides from its cached document)", "standard",
                floor: standardFloor, floorParts: "keygen + ECDH + X9.63 + HKDF 160 + HKDF 32 + sign + verify + 3 GCM", standard, goal: 1.30)
        section("FAST transaction (SELECT, AUTH0 with cryptogram, EXCHANGE)", "FAST", floor: fastFloor, floorParts: "keygen + HKDF 160 + 3 GCM", fast)
        report.say(String(format: "FAST vs standard (lock side): %.1f× faster (goal ≥ 10); protocol only: %.1f×; crypto floors: %.1f×",
                     standard.lock / fast.lock, (standard.lock - standard.engine) / (fast.lock - fast.engine), standardFloor / fastFloor))
        report.say(String(format: "transactions per second on one core (lock side): standard %.0f, FAST %.0f", 1 / standard.lock, 1 / fast.lock))
        report.say(String(format: "transactions per second on one core (both sides in one process): standard %.0f, FAST %.0f", 1 / standard.total, 1 / fast.total))
        report.figure("standard ÷ FAST, lock side", standard.lock / fast.lock, "times", goal: "≥ 10", met: standard.lock / fast.lock >= 10)
        return report.finish(0)
    }
}
