import Codecs

/// The credential's mailbox: a small byte array the reader reads and writes inside EXCHANGE
/// (`BA { 87 read, 8A write, 95 set }`, ALIRO-FACTS "EXCHANGE"). Offsets are 2 bytes, so a
/// mailbox holds at most 65 536 bytes.
///
/// A command's operations apply all or nothing (LockBench chooses this whether or not the reader
/// sets `8C 01 atomic`): one operation outside the mailbox refuses the whole command with
/// `6A80` and changes nothing. A class, so the phone's owner sees what the lock wrote.
public final class Mailbox: @unchecked Sendable {
    public static let maxSize = 0x1_0000

    public private(set) var bytes: [UInt8]
    /// Called after a command changed the content (the CLI writes it back to `--mailbox FILE`).
    public var onChange: (([UInt8]) -> Void)?

    public init(_ bytes: [UInt8]) throws(ProtocolError) {
        guard bytes.count <= Mailbox.maxSize else {
            throw ProtocolError(.malformed, "a mailbox holds at most \(Mailbox.maxSize) bytes (2-byte offsets); this one has \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// Any byte set: signaling bit 3 "mailbox has data".
    public var hasData: Bool { bytes.contains { $0 != 0 } }

    /// Runs one EXCHANGE's operations in the order received and answers them.
    public func apply(_ operations: [MailboxOperation]) -> ExchangeResponsePlaintext {
        var next = bytes
        var reads: [[UInt8]] = []
        for op in operations {
            switch op {
            case .read(let o, let l):
                guard let r = range(o, Int(l), in: next) else { return ExchangeResponsePlaintext(status: .incorrectData) }
                reads.append(Array(next[r]))
            case .write(let o, let d):
                guard let r = range(o, d.count, in: next) else { return ExchangeResponsePlaintext(status: .incorrectData) }
                next.replaceSubrange(r, with: d)
            case .set(let o, let l, let v):
                guard let r = range(o, Int(l), in: next) else { return ExchangeResponsePlaintext(status: .incorrectData) }
                next.replaceSubrange(r, with: [UInt8](repeating: v, count: r.count))
            }
        }
        if next != bytes {
            bytes = next
            onChange?(next)
        }
        return ExchangeResponsePlaintext(reads: reads, status: .success)
    }

    private func range(_ offset: UInt16, _ length: Int, in b: [UInt8]) -> Range<Int>? {
        let start = Int(offset)
        guard start <= b.count, length <= b.count - start else { return nil }
        return start..<(start + length)
    }
}
