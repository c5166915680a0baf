import AccessProtocol
import ByteCore
import Foundation
import OfflineUnlock

/// What the lock is asked to act on: one input per transaction, through one `apply`.
public enum LockInput: Sendable {
    /// A credential proved its key (and delivered its documents): decide and act.
    case presentation(Presentation)
    /// The protocol or the transport ended the transaction before any decision: record it.
    case refused(Refusal, transaction: TransactionID, interface: RadioInterface)
}

/// The lock's own reasons (its bolt, its storage), beside the engine's, the protocol's and the
/// transport's. `rawValue` is the stable wire code.
public enum LockReason: String, Sendable, CaseIterable, LockRefusalReason {
    /// The bolt is jammed: the lock cannot open, whatever the credential.
    case jammed
    /// The decision could not be recorded durably, so it is not acted on.
    case storageFailure = "storage_failure"

    public var code: String { rawValue }

    /// The EXCHANGE reader status the lock sends for its own refusal, given the bolt's.
    public func readerStatus(bolt: UInt16) -> UInt16 {
        switch self {
        case .jammed: return bolt                      // 0102 jammed
        case .storageFailure: return ReaderStatus.hardware
        }
    }
}

/// The lock's answer to one input: the decision as recorded, the bolt after acting, the reader
/// status the closing EXCHANGE carries, and the audit record (durable before this returns).
public struct LockOutcome: Sendable, Equatable {
    /// A grant, or the refusal with its layer: the engine's reason or the lock's own.
    public var decision: TransactionDecision
    public var bolt: LockStateMachine.State
    public var readerStatus: UInt16
    /// nil only when the record could not be written (then the decision is a storage denial).
    public var audit: AuditEntry?

    /// nil for a grant; the layered reason otherwise.
    public var refusal: Refusal? { decision.refusal }

    /// What the reader session is told (`ReaderSession.decided`).
    public var resolution: Resolution { Resolution(decision: decision, readerStatus: readerStatus) }
}
