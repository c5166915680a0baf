import ByteCore
import Codecs
import Dispatch
import Foundation
import OfflineUnlock

/// Everything a lock records about one transaction.
public struct TransactionOutcome: Sendable, Equatable {
    /// A grant, or the refusal with the layer that produced it.
    public var decision: TransactionDecision
    /// The access document id on a grant, else nil.
    public var credentialID: String?
    /// The credential's long-term public key (hex) when the protocol learnt it.
    public var credentialKey: String?
    /// The AUTH0 transaction id.
    public var id: TransactionID
    /// The transaction id as 32 hex digits.
    public var transactionID: String { id.hex }
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
    /// The reader status the closing EXCHANGE told the credential (nil: CONTROL FLOW or none).
    public var readerStatus: UInt16? = nil
    /// What the closing EXCHANGE did with the credential's mailbox (nil: no operation sent).
    public var mailbox: MailboxRecord? = nil
    /// The lock answered `decide`: `decision` is the lock's own (else the protocol or the
    /// transport ended the transaction first, and the lock records it as such).
    public var decided: Bool = false
    /// The link failed after the lock decided and acted: the credential never heard the answer.
    public var linkLostAfterDecision: String? = nil
    /// BLE RKE (`02 06` … `02 04`): the action asked and the status reported, or the refusal.
    public var remote: RemoteActionRecord? = nil
    /// The payloads the lock sealed or opened itself, against their transcript entries.
    public var opened: [OpenedPayload] = []

    public struct Timings: Sendable, Equatable {
        /// Wall time of the whole transaction, seconds.
        public var total: Double
        /// Time spent waiting on the transport, seconds.
        public var transport: Double
        /// Number of command APDUs sent.
        public var commands: Int
    }

    /// Why it was refused, by layer (nil for a grant). Outcomes and logs print `refusal.code`.
    public var refusal: Refusal? { decision.refusal }
    public var reason: Refusal.Reason? { decision.reason }
    public var granted: Bool { decision.isGrant }
}

/// The mailbox part of a closing EXCHANGE, for outcomes and logs: each operation in words, the
/// data each read returned (hex), and the status the credential answered.
public struct MailboxRecord: Sendable, Equatable, Encodable {
    /// `read 0+8`, `write 0: 0102`, `set 4+2=ff`.
    public var operations: [String]
    /// Hex of each read's data, in order.
    public var reads: [String]
    /// The credential's status for the operations (`9000`), nil when its answer did not open.
    public var status: String?

    init?(_ r: TransactionResult) {
        guard !r.mailboxOperations.isEmpty else { return nil }
        operations = r.mailboxOperations.map(MailboxRecord.describe)
        reads = r.mailboxReads.map(Hex.encode)
        status = r.mailboxStatus.map { String(format: "%04X", $0) }
    }

    public static func describe(_ op: MailboxOperation) -> String {
        switch op {
        case .read(let o, let l): return "read \(o)+\(l)"
        case .write(let o, let d): return "write \(o): \(Hex.encode(d))"
        case .set(let o, let l, let v): return "set \(o)+\(l)=\(String(format: "%02x", v))"
        }
    }

    /// `mailbox: read 0+8 → 0102…; write 0: aa; status 9000`
    public var line: String {
        var readIndex = 0
        var parts: [String] = []
        for op in operations {
            if op.hasPrefix("read"), readIndex < reads.count {
                parts.append("\(op) → \(reads[readIndex])")
                readIndex += 1
            } else {
                parts.append(op)
            }
        }
        return "mailbox: " + parts.joined(separator: "; ") + "; status \(status ?? "not heard")"
    }
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
    /// The lock's answer to the session's `decide` (it decides, acts and records); nil: the
    /// decider's decision is sent as is (tests, benchmarks).
    public var resolver: ((Presentation) -> Resolution)?
    /// Bounds on each transaction (`transaction_limit` past them).
    public var limits = TransactionLimits()
    /// The ephemeral key the next session uses (then cleared); nil: the session makes its own.
    public private(set) var preparedEphemeralKey: PreparedEphemeralKey?

    /// Makes the next session's ephemeral key now, off the path of the transaction that will use
    /// it (the lock calls this when idle, i.e. after each transaction).
    public func prepareEphemeralKey() {
        if preparedEphemeralKey == nil { preparedEphemeralKey = PreparedEphemeralKey(random: random) }
    }

    public init(configuration: ReaderConfiguration, decider: AccessDecider, fastCache: FastCache = FastCache(),
                replayGuard: ReplayGuard = ReplayGuard(), random: RandomSource = SystemRandom(), signer: MessageSigner? = nil) {
        self.configuration = configuration
        self.decider = decider
        self.fastCache = fastCache
        self.replayGuard = replayGuard
        self.random = random
        self.signer = signer
    }

    /// A session from this reader's configuration and memory, for `interface` when given.
    public func makeSession(interface: RadioInterface? = nil) -> ReaderSession {
        let decider = self.decider
        var c = configuration
        if let interface { c.interface = interface }
        defer { preparedEphemeralKey = nil }
        return ReaderSession(configuration: c, wantsStepUp: { decider.wantsStepUp(credentialPublicKey: $0, timestamps: $1) },
                             fastCache: fastCache, replayGuard: replayGuard, random: random, signer: signer,
                             ephemeralKey: preparedEphemeralKey)
    }

    /// Runs one transaction to completion. `resolve` (else `resolver`) answers the session's
    /// `decide` (the lock decides and acts); without either the decider's decision is sent as is.
    /// Transport errors before the decision end it as the transport's refusal (`link_lost`);
    /// after it, the decision stands and `linkLostAfterDecision` says so.
    /// Going past `limits` before the decision ends it as the transport's `transaction_limit`.
    public func runTransaction(over link: APDUTransceiver, at time: Date,
                               resolve: ((Presentation) -> Resolution)? = nil) -> TransactionOutcome {
        let started = DispatchTime.now().uptimeNanoseconds
        let decider = self.decider, grantStatus = configuration.grantStatus
        let answer = resolve ?? resolver ?? { Resolution(engine: decider.decide($0), grantStatus: grantStatus) }
        // The session lives only inside `drive`, so applying its result below mutates this
        // reader's caches in place instead of copying them (they are shared copy-on-write).
        let run = Self.drive(makeSession(), over: link, at: time, limits: limits, resolve: answer)
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
                                  credentialKey: result.credentialPublicKey?.hex, id: TransactionID(result.transactionID),
                                  version: result.version, fast: result.fast, stepUp: result.stepUp,
                                  acknowledged: result.acknowledged, interface: interface, at: time,
                                  timings: .init(total: total, transport: Double(transportNanos) / 1e9, commands: commands),
                                  transcript: result.transcript, readerStatus: result.readerStatus, mailbox: MailboxRecord(result),
                                  decided: result.decided, linkLostAfterDecision: result.linkLostAfterDecision, remote: result.remote,
                                  opened: result.opened)
    }

    /// Drives `initial` over `link` until it completes, the transport fails, or the transaction
    /// goes past `limits` (the session knows nothing of them). Touches nothing shared: several
    /// radios may drive sessions at once; `resolve` is where the lock decides.
    public static func drive(_ initial: ReaderSession, over link: APDUTransceiver, at time: Date,
                             limits: TransactionLimits = TransactionLimits(),
                             remote: (RemoteAction, Presentation) -> AccessProtocolCompleted.ReaderStatusInformation = LockReader.unattachedBolt,
                             resolve: (Presentation) -> Resolution) -> Run {
        var session = initial
        var transportNanos: UInt64 = 0
        var usage = TransactionLimits.Usage(started: DispatchTime.now().uptimeNanoseconds)
        let bearer = link as? MessageBearer
        var action: ReaderAction
        if let bearer {
            // BLE: the phone speaks first with "initiate access protocol"; AUTH0 answers it.
            let t0 = DispatchTime.now().uptimeNanoseconds
            do {
                let (initiate, rke) = try awaitInitiate(on: bearer)
                action = session.start(at: time, initiated: BLEOpening(initiate: initiate, transportVersions: bearer.transportVersions, remoteAction: rke))
            } catch {
                transportNanos += DispatchTime.now().uptimeNanoseconds - t0
                return Run(result: session.abort("\(error)"), transportNanos: transportNanos, commands: usage.commands)
            }
            transportNanos += DispatchTime.now().uptimeNanoseconds - t0
        } else {
            action = session.start(at: time)
        }
        while true {
            switch action {
            case .complete(let r):
                return Run(result: r, transportNanos: transportNanos, commands: usage.commands)
            case .decide(let presentation):
                action = session.decided(resolve(presentation))
            case .notify(let message):
                // Only a `MessageBearer` link starts a session that notifies.
                var delivered = false
                if let bearer { delivered = (try? bearer.sendMessage(message)) != nil }
                action = session.notified(delivered: delivered)
            case .receive:
                // RKE: the phone's request after the completed notification, bounded like its opening.
                guard let bearer else { action = session.messageMissed("not a message-bearing link"); continue }
                do { action = session.receivedMessage(try bearer.receiveMessage(timeout: bearer.openingTimeout)) } catch {
                    action = session.messageMissed("\(error)")
                }
            case .act(let request, let presentation):
                action = session.acted(remote(request, presentation))
            case .transmit(let command):
                if let exceeded = limits.exceeded(by: usage, now: DispatchTime.now().uptimeNanoseconds) {
                    var r = session.abort("transaction limit: \(exceeded)")
                    if !r.decided { r.decision = .deny(Refusal(.transport(.transactionLimit), detail: "transaction cut off: \(exceeded)")) }
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
                    if let bearer, bearer.isResponseTimeout(error) {
                        action = session.timedOut("\(error)")
                        continue
                    }
                    return Run(result: session.abort("\(error)"), transportNanos: transportNanos, commands: usage.commands)
                }
            }
        }
    }

    /// The phone's first message, which must be "initiate access protocol" (`02 05`) or its RKE
    /// variant (`02 06`, true); anything else is refused naming its bytes (the reference reader:
    /// "Received unexpected ble message while waiting for initiate_access_protocol message").
    static func awaitInitiate(on bearer: MessageBearer) throws -> (InitiateAccessProtocol, Bool) {
        let message = try bearer.receiveMessage(timeout: bearer.openingTimeout)
        let ids = [ChannelMessage.Notification.initiateAccessProtocol, ChannelMessage.Notification.initiateAccessProtocolRKE]
        guard message.type == ChannelMessage.Kind.notification, ids.contains(message.id) else {
            throw ProtocolError(.unexpected, "the phone's first message is \(message), not initiate access protocol (02 05) or its RKE variant (02 06)")
        }
        return (try InitiateAccessProtocol(parsing: message.payload), message.id == ChannelMessage.Notification.initiateAccessProtocolRKE)
    }

    /// The status a reader with no bolt behind it reports for an RKE action (tests, benchmarks):
    /// what the official cases accept — UNSECURED after unsecure (BLERKE_RDR_UNSECURE), STARTED_SECURE
    /// after secure (BLERKE_RDR_SECURE refuses plain SECURED).
    public static func unattachedBolt(_ action: RemoteAction, _ presentation: Presentation) -> AccessProtocolCompleted.ReaderStatusInformation {
        AccessProtocolCompleted.ReaderStatusInformation(after: action, bolt: action == .secure ? ReaderStatus.secured : ReaderStatus.unsecured)
    }

    /// Applies what a finished session learnt: the FAST key of a granted credential, the device
    /// ephemeral key against replays, and the cache's recency.
    public func apply(_ result: TransactionResult) {
        ReaderLearning(result).apply(to: &fastCache, &replayGuard)
    }
}
