import ByteCore
import Foundation

/// What a reader loop reports, in order, whatever the radio: one vocabulary for NFC, PC/SC, BLE
/// and the socket transport, which the runtime turns into the lock's events.
public enum ReaderEvent<Outcome>: CustomStringConvertible {
    /// The loop started on `reader`; `note` says what it does besides waiting (ECP polling…).
    case started(reader: String, note: String)
    case readerOpened(reader: String, name: String)
    case cardArrived(any PresentedCard)
    /// A card that speaks no APDUs: ignored until it leaves.
    case cardIgnored(any PresentedCard, reason: String)
    case transactionCompleted(any PresentedCard, Outcome, duration: TimeInterval)
    /// The transaction threw (typically the card was pulled mid-transaction).
    case transactionFailed(any PresentedCard, Error, duration: TimeInterval)
    case cardRemoved(any PresentedCard)
    /// The reader failed (unplugged, daemon gone, pty closed) or could not be opened; a reopen
    /// follows after `retryIn`.
    case readerLost(Error, attempt: Int, retryIn: TimeInterval)
    /// Something the radio noticed outside a card's life (`CardReader.onNotice`).
    case notice(String, isProblem: Bool)
    case stopped

    /// True for what a person watching the lock should notice.
    public var isProblem: Bool {
        switch self {
        case .readerLost, .transactionFailed, .cardIgnored: return true
        case .notice(_, let problem): return problem
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .started(let r, let note): return "reader loop on \(r)" + (note.isEmpty ? "" : "; \(note)")
        case .readerOpened(let r, let name): return "reader \(name) opened (\(r))"
        case .cardArrived(let c): return "card arrived: \(c)"
        case .cardIgnored(let c, let why): return "card ignored (\(why)): \(c)"
        case .transactionCompleted(let c, let o, let d): return "transaction with \(c.identity) completed in \(Int(d * 1000)) ms: \(o)"
        case .transactionFailed(let c, let e, let d): return "transaction with \(c.identity) failed after \(Int(d * 1000)) ms: \(e)"
        case .cardRemoved(let c): return "card removed: \(c.identity)"
        case .readerLost(let e, let n, let wait): return "reader lost (\(Self.describe(e))); reopen attempt \(n) in \(String(format: "%.1f", wait)) s"
        case .notice(let text, _): return text
        case .stopped: return "reader loop stopped"
        }
    }

    /// `code: reason` for a radio's coded error (NFCError, PCSCError, BLEError…), its description otherwise.
    static func describe(_ error: Error) -> String {
        if let e = error as? any CodedError { return "\(e.codeName): \(e.reason)" }
        return "\(error)"
    }
}
