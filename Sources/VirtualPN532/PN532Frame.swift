import ByteCore

/// The PN532 serial frame layer (PN532 User Manual §6.2.1), host ↔ chip. Bytes only: no
/// command semantics (those are in `PN532Chip`).
///
///     normal:    00 00 FF LEN LCS TFI PD0 … PDn DCS 00        LEN + LCS ≡ 0, TFI + ΣPD + DCS ≡ 0 (mod 256)
///     extended:  00 00 FF FF FF LENm LENl LCS TFI PD0 … DCS 00  LENm + LENl + LCS ≡ 0
///     ACK:       00 00 FF 00 FF 00          NACK: 00 00 FF FF 00 00
///     error:     00 00 FF 01 FF 7F 81 00    (application-level error, chip → host)
///
/// TFI is D4 host → chip and D5 chip → host; LEN counts TFI and the PD bytes.
public enum PN532Wire {
    public static let hostToChip: UInt8 = 0xD4
    public static let chipToHost: UInt8 = 0xD5
    public static let ack: [UInt8] = [0x00, 0x00, 0xFF, 0x00, 0xFF, 0x00]
    public static let nack: [UInt8] = [0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00]
    public static let errorFrame: [UInt8] = [0x00, 0x00, 0xFF, 0x01, 0xFF, 0x7F, 0x81, 0x00]
    /// The HSU wake-up libnfc sends before the first frame of a session and after PowerDown.
    public static let wakeUpPreamble: [UInt8] = [0x55, 0x55] + [UInt8](repeating: 0, count: 14)
    /// Largest TFI + PD count of one frame (the PN532's 265-byte frame buffer).
    public static let maxBodyLength = 265

    /// Frames `tfi ‖ body` (body = command code and data), choosing the extended form past 255 bytes.
    public static func frame(tfi: UInt8, body: [UInt8]) -> [UInt8] {
        let payload = [tfi] + body
        let dcs = UInt8(truncatingIfNeeded: 0 &- payload.reduce(0 as UInt8, &+))
        var out: [UInt8] = [0x00, 0x00, 0xFF]
        if payload.count > 255 {
            let length = UInt16(payload.count).bigEndianBytes
            let lcs: UInt8 = 0 &- (length[0] &+ length[1])
            out += [0xFF, 0xFF]
            out += length
            out.append(lcs)
        } else {
            out += [UInt8(payload.count), 0 &- UInt8(payload.count)]
        }
        return out + payload + [dcs, 0x00]
    }

    /// A chip reply: `D5 (code+1) data`.
    public static func reply(to code: UInt8, _ data: [UInt8]) -> [UInt8] {
        frame(tfi: chipToHost, body: [code &+ 1] + data)
    }

    /// A host command: `D4 code data` (what libnfc sends; used by tests and tools).
    public static func command(_ code: UInt8, _ data: [UInt8] = [], forceExtended: Bool = false) -> [UInt8] {
        let payload = [hostToChip, code] + data
        guard forceExtended, payload.count <= 255 else { return frame(tfi: hostToChip, body: [code] + data) }
        let dcs = UInt8(truncatingIfNeeded: 0 &- payload.reduce(0 as UInt8, &+))
        let length = UInt16(payload.count).bigEndianBytes
        let lcs: UInt8 = 0 &- (length[0] &+ length[1])
        var out: [UInt8] = [0x00, 0x00, 0xFF, 0xFF, 0xFF]
        out += length
        out.append(lcs)
        return out + payload + [dcs, 0x00]
    }
}

/// One thing the host said, as decoded from the byte stream.
public enum PN532HostFrame: Equatable, Sendable {
    /// `D4 code data…` — a command for the chip.
    case command(code: UInt8, data: [UInt8])
    /// ACK from the host: abort the command in progress.
    case ack
    /// NACK from the host: send the last reply again.
    case nack
    /// An error frame (`7F`), which a host should never send; decoded so it is not misread.
    case errorFrame
    /// A frame that could not be accepted; the decoder resynchronises on the next start code.
    case malformed(Malformation)

    public enum Malformation: String, Equatable, Sendable {
        case lengthChecksum, dataChecksum, unexpectedTFI, empty, tooLong
    }
}

/// Incremental decoder for host → chip frames (a `FrameDecoder`): feed bytes as they arrive (one
/// at a time, in batches, split anywhere), take frames out with `next()`, which returns nil for
/// "need more bytes". Anything before a `00 FF` start code (the `55 55 00…` wake-up preamble,
/// postambles, line noise) is skipped; a bad frame is a `.malformed` frame, never an error.
public struct PN532FrameDecoder: FrameDecoder {
    public typealias Failure = Never

    private enum State: Equatable {
        /// Looking for `00 FF`.
        case hunting
        /// After the start code, waiting for the 2 bytes that tell ACK/NACK/normal/extended apart.
        case header
        /// Extended frame: waiting for LENm LENl LCS.
        case extendedLength
        /// Waiting for `length` bytes of TFI+data plus DCS.
        case body(length: Int)
    }

    private var buffer = FrameBuffer()
    private var state: State = .hunting

    public init() {}

    /// Bytes buffered but not yet decoded into a frame.
    public var bufferedByteCount: Int { buffer.count }

    public mutating func feed<S: Sequence>(_ bytes: S) where S.Element == UInt8 { buffer.append(bytes) }

    /// The next complete frame, or nil when more bytes are needed.
    public mutating func next() -> PN532HostFrame? {
        while true {
            let available = buffer.count
            switch state {
            case .hunting:
                guard available >= 2 else { return nil }
                if buffer[0] == 0x00 && buffer[1] == 0xFF {
                    buffer.consume(2)
                    state = .header
                } else {
                    buffer.consume(1)
                }
            case .header:
                guard available >= 2 else { return nil }
                let a = buffer[0], b = buffer[1]
                switch (a, b) {
                case (0x00, 0xFF):
                    buffer.consume(2); state = .hunting; return .ack
                case (0xFF, 0x00):
                    buffer.consume(2); state = .hunting; return .nack
                case (0xFF, 0xFF):
                    buffer.consume(2); state = .extendedLength
                case (0x01, 0xFF):
                    guard available >= 4 else { return nil }
                    buffer.consume(4); state = .hunting; return .errorFrame
                default:
                    buffer.consume(2)
                    guard a &+ b == 0 else { state = .hunting; return .malformed(.lengthChecksum) }
                    guard a > 0 else { state = .hunting; return .malformed(.empty) }
                    state = .body(length: Int(a))
                }
            case .extendedLength:
                guard available >= 3 else { return nil }
                let m = buffer[0], l = buffer[1], lcs = buffer[2]
                buffer.consume(3)
                guard m &+ l &+ lcs == 0 else { state = .hunting; return .malformed(.lengthChecksum) }
                let length = Int(m) << 8 | Int(l)
                guard length > 0 else { state = .hunting; return .malformed(.empty) }
                guard length <= PN532Wire.maxBodyLength else { state = .hunting; return .malformed(.tooLong) }
                state = .body(length: length)
            case .body(let length):
                guard available >= length + 1 else { return nil }
                let payload = buffer.take(length)
                let dcs = buffer[0]
                buffer.consume(1)
                state = .hunting
                guard payload.reduce(dcs, &+) == 0 else { return .malformed(.dataChecksum) }
                guard payload[0] == PN532Wire.hostToChip else { return .malformed(.unexpectedTFI) }
                guard payload.count >= 2 else { return .malformed(.empty) }
                return .command(code: payload[1], data: Array(payload[2...]))
            }
        }
    }
}
