import ByteCore


/// How APDUs are cut out of a TCP byte stream.
///
/// - `raw` (the default, as public Aliro test tools do): no framing. One write carries one whole
///   APDU; the receiver takes what one `recv` returns as one APDU. Short reads are repaired where
///   the bytes say so: a command shorter than its header + Lc, or a response shorter than SW1 SW2,
///   waits for more bytes. Optionally, `quietMilliseconds` > 0 also waits that long for further
///   bytes of the same APDU before handing it on.
/// - `length`: every APDU is preceded by its length as 2 bytes big-endian. Unambiguous on any
///   network; both ends must agree (`--framing length`).
public enum SocketFraming: String, Sendable, CaseIterable {
    case raw
    case length
}

/// Incremental decoder for APDUs arriving on a stream (a `FrameDecoder`): feed bytes as they
/// come, take frames out. Returns nil for "need more bytes" (STYLE §2); tested byte by byte and
/// in batches.
public struct APDUStreamDecoder: FrameDecoder, Sendable {
    public enum Kind: Sendable { case command, response }

    public let framing: SocketFraming
    public let kind: Kind
    private var buffer = FrameBuffer()
    /// The largest frame accepted (a short APDU is at most 261 / 258 bytes).
    public static let maxFrame = 4096

    public init(framing: SocketFraming, kind: Kind) {
        self.framing = framing
        self.kind = kind
    }

    public var buffered: Int { buffer.count }

    public mutating func feed<S: Sequence>(_ bytes: S) where S.Element == UInt8 { buffer.append(bytes) }

    /// The next complete frame, nil when more bytes are needed.
    ///
    /// In raw mode a frame is "everything buffered", once it is long enough to be a whole APDU;
    /// call it after each `recv`.
    public mutating func next() throws(SocketError) -> [UInt8]? {
        switch framing {
        case .length:
            guard buffer.count >= 2 else { return nil }
            let n = Int(buffer[0]) << 8 | Int(buffer[1])
            guard n <= APDUStreamDecoder.maxFrame else { throw SocketError(.malformed, "frame length \(n) exceeds \(APDUStreamDecoder.maxFrame)") }
            guard buffer.count >= 2 + n else { return nil }
            buffer.consume(2)
            return buffer.take(n)
        case .raw:
            guard buffer.count <= APDUStreamDecoder.maxFrame else { throw SocketError(.malformed, "more than \(APDUStreamDecoder.maxFrame) bytes without a frame boundary") }
            let bytes = buffer.all
            guard APDUStreamDecoder.couldBeComplete(bytes, kind) else { return nil }
            buffer.consume(bytes.count)
            return bytes
        }
    }

    /// True when `bytes` is long enough to be one whole APDU of `kind`.
    public static func couldBeComplete(_ bytes: [UInt8], _ kind: Kind) -> Bool {
        switch kind {
        case .response:
            return bytes.count >= 2
        case .command:
            guard bytes.count >= 4 else { return false }
            guard bytes.count >= 6 else { return true }  // case 1 or 2 (or Lc with nothing yet: wait below)
            let lc = Int(bytes[4])
            if lc == 0 { return true }  // extended form: let the parser refuse it
            return bytes.count >= 5 + lc
        }
    }

    /// Encodes one APDU for the wire.
    public static func frame(_ apdu: [UInt8], _ framing: SocketFraming) -> [UInt8] {
        switch framing {
        case .raw: return apdu
        case .length: return UInt16(apdu.count).bigEndianBytes + apdu
        }
    }
}
