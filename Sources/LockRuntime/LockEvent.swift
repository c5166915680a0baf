import AccessProtocol
import ByteCore
import Codecs
import Foundation
import Lock

/// One thing the running lock reports: a line for people, a JSON object for machines.
public struct LockEvent: Encodable, Sendable {
    public enum Kind: String, Encodable, Sendable {
        case started, radio, granted, denied, warning, stopped
    }

    /// What a radio event was, for programs that follow the lock (scenarios wait on these, never
    /// on the wording of `message`).
    public enum RadioEvent: String, Encodable, Sendable {
        case loopStarted = "loop-started", readerOpened = "reader-opened", advertising
        case cardArrived = "card-arrived", cardIgnored = "card-ignored", cardRemoved = "card-removed"
        case transactionFailed = "transaction-failed", readerLost = "reader-lost", notice
    }

    /// Which clock `time` was read on: decisions on the lock's (virtual) clock, everything else
    /// on the wall clock. Each line names its clock, so a lock whose clock is not wall time does
    /// not print two timelines as one.
    public enum Clock: String, Encodable, Sendable { case lock, wall }

    public var time: Date
    public var clock: Clock = .wall
    public var kind: Kind
    /// For `kind == .radio` (and radio warnings): which event.
    public var radioEvent: RadioEvent?
    /// `nfc`, `ble`, `socket`, or nil for the lock as a whole.
    public var radio: String?
    public var message: String
    // Transaction fields (granted / denied).
    public var reason: String?
    public var detail: String?
    public var credential: String?
    public var transaction: String?
    public var fast: Bool?
    public var stepUp: Bool?
    public var milliseconds: Double?
    public var mailbox: MailboxRecord?
    /// The layer that refused: engine, protocol, transport, lock.
    public var layer: String?
    /// The lock decided, but the link dropped before the phone heard the answer.
    public var unheard: String?
    /// BLE RKE after the grant: `unsecure → unsecured`, or `refused: <why>`.
    public var rke: String?
    /// For `kind == .started`: the lock as a viewer shows it (a console's lock panel).
    public var lock: LockSummary?
    /// On `started` and each decision: the audit chain as it stands (the decision's entry included).
    public var audit: AuditChain?
    /// On each decision: the bolt as the decision left it.
    public var bolt: String?

    /// The audit chain's state for a viewer: how many entries, the head MAC's first 8 bytes (the
    /// chain's fingerprint: it changes with every entry), and the damage found on disk at start.
    public struct AuditChain: Encodable, Sendable {
        public var entries: UInt64
        public var head: String
        public var damage: String?
        public init(_ log: AuditLog) {
            let head = log.head
            entries = head.seq
            self.head = String(head.mac.prefix(16))
            damage = log.damage?.description
        }
    }

    /// What a viewer needs to know of the lock it watches, at start.
    public struct LockSummary: Encodable, Sendable {
        public var model: String
        public var firmware: String
        /// The certification verdict, in words (`certified`, `not certified: …`).
        public var certification: String
        public var bolt: String
        /// Whether the lock trusts its clock (after a power loss it does not, until set or a
        /// verified document's signed time restores it).
        public var clockTrusted: Bool
        /// `wall clock`, `wall clock + 3600 s`, or `frozen at 2026-03-02T09:00:00Z`.
        public var clock: String
        public init(model: String, firmware: String, certification: String, bolt: String, clockTrusted: Bool, clock: String) {
            self.model = model; self.firmware = firmware; self.certification = certification
            self.bolt = bolt; self.clockTrusted = clockTrusted; self.clock = clock
        }
    }

    public init(time: Date = Date(), kind: Kind, radio: RadioInterface? = nil, message: String) {
        self.time = time
        self.kind = kind
        self.radio = radio?.rawValue
        self.message = message
    }

    /// The event for a finished transaction.
    public init(outcome: TransactionOutcome) {
        let report = OutcomeReport(outcome, bolt: "")
        self.init(time: outcome.at, kind: outcome.granted ? .granted : .denied, radio: outcome.interface,
                  message: report.eventMessage)
        clock = .lock
        reason = report.reason
        detail = report.detail
        layer = report.layer
        unheard = report.unheard
        credential = outcome.credentialID ?? outcome.credentialKey.map { "key:" + String($0.prefix(16)) }
        transaction = outcome.transactionID
        fast = outcome.fast
        stepUp = outcome.stepUp
        milliseconds = (outcome.timings.total * 10_000).rounded() / 10
        mailbox = outcome.mailbox
        rke = outcome.remote.map { r in
            r.refusal.map { "refused: \($0)" } ?? "\(r.action?.name ?? "?") → \(r.readerStatus?.name ?? "?")"
        }
    }

    /// `2026-03-02T09:00:00Z (lock clock) nfc GRANTED credential=… tx=… fast step-up 12.3 ms`
    public var line: String {
        var parts = [RFC3339.format(time), "(\(clock.rawValue) clock)"]
        if let radio { parts.append(radio) }
        parts.append(message)
        if let credential { parts.append("credential=\(credential)") }
        if let transaction { parts.append("tx=\(transaction.prefix(8))") }
        if fast == true { parts.append("fast") }
        if stepUp == true { parts.append("step-up") }
        if let milliseconds { parts.append("\(milliseconds) ms") }
        if let mailbox { parts.append(mailbox.line) }
        if let rke { parts.append("rke \(rke)") }
        if let unheard { parts.append("(the phone never heard the answer: \(unheard))") }
        if let detail { parts.append("— \(detail)") }
        return parts.joined(separator: " ")
    }

    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, enc in
            var c = enc.singleValueContainer()
            try c.encode(RFC3339.format(date))
        }
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

}
