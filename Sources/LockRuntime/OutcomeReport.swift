import AccessProtocol
import ByteCore
import Codecs
import Foundation
import Lock
import OfflineUnlock

/// One rendering of a transaction's outcome, shared by `lock transact` (JSON and its line),
/// `lock run` (events), `decide` and the audit log's fields: the decision, the reason with the
/// layer that produced it, what the phone heard, and the lock after acting. Times are RFC 3339.
public struct OutcomeReport: Encodable, Sendable {
    public var decision: String
    public var reason: String?
    public var detail: String?
    /// engine, protocol, transport or lock.
    public var layer: String?
    public var credential: String?
    public var credentialKey: String?
    public var transactionID: String
    public var version: String?
    public var fast: Bool
    public var stepUp: Bool
    public var acknowledged: Bool
    /// The lock decided, but the link dropped before the phone heard the answer.
    public var unheard: String?
    /// The reader status the closing EXCHANGE carried, 4 hex digits.
    public var readerStatus: String?
    public var mailbox: MailboxRecord?
    /// The bolt after acting.
    public var lock: String
    public var time: String
    public var totalMs: Double?
    public var transportMs: Double?
    public var commands: Int?
    public var apdus: [String]?
    /// `decide`: the audit entry's sequence number, and whether the engine wanted documents.
    public var auditSeq: UInt64?
    public var stepUpWanted: Bool?

    /// A transaction on a radio.
    public init(_ outcome: TransactionOutcome, bolt: String, transcript: Bool = false) {
        decision = outcome.granted ? "grant" : "deny"
        reason = outcome.refusal?.code
        detail = outcome.refusal?.detail
        layer = outcome.refusal?.layer.rawValue
        credential = outcome.credentialID
        credentialKey = outcome.credentialKey
        transactionID = outcome.transactionID
        version = outcome.version.map(ProtocolVersionText.format)
        fast = outcome.fast
        stepUp = outcome.stepUp
        acknowledged = outcome.acknowledged
        unheard = outcome.linkLostAfterDecision
        readerStatus = outcome.readerStatus.map { String(format: "%04X", $0) }
        mailbox = outcome.mailbox
        lock = bolt
        time = RFC3339.format(outcome.at)
        totalMs = (outcome.timings.total * 1e5).rounded() / 100
        transportMs = (outcome.timings.transport * 1e5).rounded() / 100
        commands = outcome.timings.commands
        apdus = transcript ? outcome.transcript.map { "\($0.direction.rawValue) \($0.label): \(Hex.encode($0.bytes))" } : nil
    }

    /// A presentation the lock decided with no radio (`decide`).
    public init(_ outcome: LockOutcome, presentation: Presentation, bolt: String, at time: Date) {
        decision = outcome.decision.isGrant ? "grant" : "deny"
        reason = outcome.refusal?.code
        detail = outcome.refusal?.detail
        layer = outcome.refusal?.layer.rawValue
        if case .grant(let id) = outcome.decision { credential = id }
        credentialKey = presentation.credentialPublicKey.hex
        transactionID = TransactionID(presentation.transactionID).hex
        version = ProtocolVersionText.format(presentation.protocolVersion)
        fast = presentation.fast
        stepUp = !presentation.accessDocuments.isEmpty || !presentation.revocationDocuments.isEmpty
        acknowledged = false
        readerStatus = String(format: "%04X", outcome.readerStatus)
        lock = bolt
        self.time = RFC3339.format(time)
        auditSeq = outcome.audit?.seq
    }

    public var granted: Bool { decision == "grant" }

    /// `grant 616c… (step-up, 1.0) — lock unsecured, transaction dd05…` or `deny expired: …`.
    public var line: String {
        var text: String
        if granted {
            let mode = fast ? "FAST" : stepUp ? "step-up" : "standard"
            text = "grant \(credential ?? "") (\(mode), \(version ?? "?")) — lock \(lock), transaction \(transactionID)"
        } else {
            text = "deny \(reason ?? "?"): \(detail ?? "")"
        }
        if let unheard { text += " (the phone never heard the answer: \(unheard))" }
        return text
    }

    /// What `lock transact` and `decide` print: pretty JSON, or the line with the mailbox's
    /// answer and the APDUs (when recorded) below it.
    public func rendered(json: Bool) -> String {
        if json { return KeyFiles.json(self) }
        return ([line] + (mailbox.map { ["  \($0.line)"] } ?? []) + (apdus ?? []).map { "  " + $0 }).joined(separator: "\n")
    }

    /// The word of a `lock run` event: `GRANTED` or `DENIED (reason)`.
    public var eventMessage: String { granted ? "GRANTED" : "DENIED (\(reason ?? "?"))" }
}
