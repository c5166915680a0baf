import ByteCore
import Codecs
import Dispatch
import Foundation
import OfflineUnlock

/// Everything a lock records about one transaction.
public struct TransactionOutcome: Sendable, Equatable {
    public var decision: Decision
    /// The access document id on a grant, else nil.
    public var credentialID: String?
    /// The credential's long-term public key (hex) when the protocol learnt it.
    public var credentialKey: String?
    /// 16-byte transaction id (hex).
    public var transactionID: String
    public var version: UInt16?
    public var fast: Bool
    public var stepUp: Bool
    public var acknowledged: Bool
    public var interface: RadioInterface
    /// The time the transaction was run at (the caller's clock).
    public var at: Date
    public var timings: Timings
    /// Every APDU exchanged, in order.
    public var transcript: [TranscriptEntry]

    public struct Timings: Sendable, Equatable {
        /// Wall time of the whole transaction, seconds.
        public var total: Double
        /// Time spent waiting on the transport, seconds.
        public var transport: Double
        /// Number of command APDUs sent.
        public var commands: Int
    }

    public var reason: DenyReason? { decision.denyReason }
    public var granted: Bool { decision.isGrant }
}

/// The lock's reader: identity, engine, FAST cache and replay memory across transactions.
/// `runTransaction(over:at:)` drives one `ReaderSession` over any radio's `APDUTransceiver`.
public final class LockReader {
    public var configuration: ReaderConfiguration
    public let decider: AccessDecider
    /// Kpersistent per credential key; Codable for the lock's persisted state.
    public var fastCache: FastCache
    public var replayGuard: ReplayGuard
    public var random: RandomSource
    public var signer: MessageSigner?
    /// Bounds on each transaction (`transaction_limit` past them).
    public var limits = TransactionLimits()

    public init(configuration: ReaderConfiguration, decider: AccessDecider, fastCache: FastCache = FastCache(),
                replayGuard: ReplayGuard = ReplayGuard(), random: RandomSource = SystemRandom(), signer: MessageSigner? = nil) {
        self.configuration = configuration
        self.decider = decider
        self.fastCache = fastCache
        self.replayGuard = replayGuard
        self.random = random
        self.signer = signer
    }

    public func makeSession(interface: RadioInterface? = nil, decider: AccessDecider? = nil) -> ReaderSession {
        var c = configuration
        if let interface { c.interface = interface }
        return ReaderSession(configuration: c, decider: decider ?? self.decider, fastCache: fastCache, replayGuard: replayGuard,
                             random: random, signer: signer)
    }

    /// Runs one transaction to completion. Transport errors end it as a deny (malformed input,
    /// detail "transport: …") unless a grant was already decided; going past `limits` ends it as
    /// a deny `transaction_limit` (unless a grant was already decided).
    public func runTransaction(over link: APDUTransceiver, at time: Date) -> TransactionOutcome {
        let started = DispatchTime.now().uptimeNanoseconds
        // The session lives only inside `drive`, so applying its result below mutates this
        // reader's caches in place instead of copying them (they are shared copy-on-write).
        let run = Self.drive(makeSession(), over: link, at: time, limits: limits)
        apply(run.result)
        return Self.outcome(run, interface: configuration.interface, at: time, started: started)
    }

    /// What `drive` returns: the session's result, time spent in the transport, commands sent.
    public struct Run: Sendable {
        public var result: TransactionResult
        public var transportNanos: UInt64
        public var commands: Int
    }

    /// The outcome of a finished run that started at `started` (uptime nanoseconds).
    public static func outcome(_ run: Run, interface: RadioInterface, at time: Date, started: UInt64) -> TransactionOutcome {
        let (result, transportNanos, commands) = (run.result, run.transportNanos, run.commands)
        let total = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        var credentialID: String? = nil
        if case .grant(let id) = result.decision { credentialID = id }
        return TransactionOutcome(decision: result.decision, credentialID: credentialID,
                                  credentialKey: result.credentialPublicKey?.hex, transactionID: result.transactionID.hex,
                                  version: result.version, fast: result.fast, stepUp: result.stepUp,
                                  acknowledged: result.acknowledged, interface: interface, at: time,
                                  timings: .init(total: total, transport: Double(transportNanos) / 1e9, commands: commands),
                                  transcript: result.transcript)
    }

    /// Drives `initial` over `link` until it completes, the transport fails, or the transaction
    /// goes past `limits`. Touches nothing shared: several radios may drive sessions at once.
    public static func drive(_ initial: ReaderSession, over link: APDUTransceiver, at time: Date,
                             limits: TransactionLimits = TransactionLimits()) -> Run {
        var session = initial
        var transportNanos: UInt64 = 0
        var usage = TransactionLimits.Usage(started: DispatchTime.now().uptimeNanoseconds)
        var action = session.start(at: time)
        while true {
            switch action {
            case .complete(let r):
                return Run(result: r, transportNanos: transportNanos, commands: usage.commands)
            case .transmit(let command):
                if let exceeded = limits.exceeded(by: usage, now: DispatchTime.now().uptimeNanoseconds) {
                    var r = session.abort("transaction limit: \(exceeded)")
                    if !r.decision.isGrant { r.decision = .deny(.transactionLimit, detail: "transaction cut off: \(exceeded)") }
                    return Run(result: r, transportNanos: transportNanos, commands: usage.commands)
                }
                usage.commands += 1
                let t0 = DispatchTime.now().uptimeNanoseconds
                do {
                    let response = try link.transceive(command)
                    transportNanos += DispatchTime.now().uptimeNanoseconds - t0
                    usage.received(response)
                    action = session.received(response, at: time)
                } catch {
                    transportNanos += DispatchTime.now().uptimeNanoseconds - t0
                    return Run(result: session.abort("\(error)"), transportNanos: transportNanos, commands: usage.commands)
                }
            }
        }
    }

    /// Applies what a finished session learnt: the FAST key of a granted credential, the device
    /// ephemeral key against replays, and the cache's recency.
    public func apply(_ result: TransactionResult) {
        if let eph = result.deviceEphemeralKey { replayGuard.insert(eph) }
        if let key = result.credentialPublicKey {
            if let p = result.learnedPersistentKey, result.decision.isGrant {
                fastCache.store(p, for: key)
            } else if result.fast {
                fastCache.touch(key)
            }
        }
    }
}

/// An in-memory APDU link: the reader's transceiver hands each command straight to a responder.
/// For tests and the benchmark; radios provide their own transceivers.
public final class InMemoryLink: APDUTransceiver {
    public let responder: APDUResponder
    /// Optional tap: sees every command and may rewrite the response (a man in the middle).
    public var tap: ((_ command: [UInt8], _ response: [UInt8]) -> [UInt8])?

    public init(_ responder: APDUResponder) { self.responder = responder }

    public func transceive(_ command: [UInt8]) throws -> [UInt8] {
        let response = responder.respond(to: command)
        return tap?(command, response) ?? response
    }
}
