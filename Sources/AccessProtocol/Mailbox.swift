import Codecs
import Synchronization

/// The credential's mailbox: a small byte array the reader reads and writes inside EXCHANGE
/// (`BA { 8C atomic, 87 read, 8A write, 95 set }`, ALIRO-FACTS "EXCHANGE"). Offsets are 2 bytes, so
/// a mailbox holds at most 65 536 bytes.
///
/// Atomic sessions, as the official case NFC_UD_EXCHANGE_WRITE_REQUEST decides them: reads always
/// see the committed content; writes and sets go to a pending copy. An EXCHANGE with `8C 01 01`
/// keeps its changes pending (the session stays open); one with `8C 01 00` or no `8C` commits
/// everything pending, its own changes last, after its reads. A transaction that ends with a
/// session open (link lost, no closing EXCHANGE) drops the pending changes. One operation outside
/// the mailbox refuses the whole command (`6A80`, LockBench's choice) and drops the session.
/// A class, so the phone's owner sees what the lock wrote; its content is in a `Mutex`.
public final class Mailbox: Sendable {
    public static let maxSize = 0x1_0000

    fileprivate struct Content {
        /// The committed content.
        var bytes: [UInt8]
        /// Changes of an open atomic session, not yet visible to reads; nil when none is open.
        var pending: [UInt8]?
        var onChange: (@Sendable ([UInt8]) -> Void)?
    }
    private let content: Mutex<Content>

    public init(_ bytes: [UInt8]) throws(ProtocolError) {
        guard bytes.count <= Mailbox.maxSize else {
            throw ProtocolError(.malformed, "a mailbox holds at most \(Mailbox.maxSize) bytes (2-byte offsets); this one has \(bytes.count)")
        }
        content = Mutex(Content(bytes: bytes))
    }

    /// The committed content.
    public var bytes: [UInt8] { content.withLock { $0.bytes } }

    /// Called after a command changed the content (the CLI writes it back to `--mailbox FILE`).
    public var onChange: (@Sendable ([UInt8]) -> Void)? {
        get { content.withLock { $0.onChange } }
        set { content.withLock { $0.onChange = newValue } }
    }

    /// Any byte set: signaling bit 3 "mailbox has data".
    public var hasData: Bool { bytes.contains { $0 != 0 } }

    /// An atomic session is open (changes staged, not committed).
    public var sessionOpen: Bool { content.withLock { $0.pending != nil } }

    /// Drops the changes of an open atomic session (the transaction ended without committing).
    public func endTransaction() { content.withLock { $0.pending = nil } }

    /// Runs one EXCHANGE's operations in the order received and answers them. `atomic` is the
    /// `8C` value (nil: absent, which commits like `00`).
    public func apply(_ operations: [MailboxOperation], atomic: Bool? = nil) -> ExchangeResponsePlaintext {
        let (response, changed, onChange) = content.withLock { c in
            let (response, changed) = c.apply(operations, atomic: atomic)
            return (response, changed, c.onChange)
        }
        if let changed { onChange?(changed) }
        return response
    }
}

extension Mailbox.Content {
    /// The answer, and the new committed content when it changed.
    fileprivate mutating func apply(_ operations: [MailboxOperation], atomic: Bool?) -> (ExchangeResponsePlaintext, [UInt8]?) {
        var next = pending ?? bytes
        var reads: [[UInt8]] = []
        for op in operations {
            switch op {
            case .read(let o, let l):
                guard let r = range(o, Int(l), in: bytes) else { return (refuse(), nil) }
                reads.append(Array(bytes[r]))
            case .write(let o, let d):
                guard let r = range(o, d.count, in: next) else { return (refuse(), nil) }
                next.replaceSubrange(r, with: d)
            case .set(let o, let l, let v):
                guard let r = range(o, Int(l), in: next) else { return (refuse(), nil) }
                next.replaceSubrange(r, with: [UInt8](repeating: v, count: r.count))
            }
        }
        var changed: [UInt8]?
        if atomic == true {
            pending = next
        } else {
            pending = nil
            if next != bytes {
                bytes = next
                changed = next
            }
        }
        return (ExchangeResponsePlaintext(reads: reads, status: .success), changed)
    }

    private mutating func refuse() -> ExchangeResponsePlaintext {
        pending = nil
        return ExchangeResponsePlaintext(status: .incorrectData)
    }

    private func range(_ offset: UInt16, _ length: Int, in b: [UInt8]) -> Range<Int>? {
        let start = Int(offset)
        guard start <= b.count, length <= b.count - start else { return nil }
        return start..<(start + length)
    }
}
