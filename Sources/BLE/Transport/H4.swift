import ByteCore

/// H4 (UART transport layer, Core Vol 4 Part A): one packet-type byte, then the HCI packet.
public enum H4PacketType: UInt8, Sendable {
    case command = 0x01
    case acl = 0x02
    case sco = 0x03
    case event = 0x04
    case iso = 0x05
}

/// One whole HCI packet as carried by H4: its type and the bytes after the type byte.
public struct H4Packet: Equatable, Sendable {
    public var type: H4PacketType
    public var payload: [UInt8]

    public init(_ type: H4PacketType, _ payload: [UInt8]) {
        self.type = type
        self.payload = payload
    }

    /// Type byte ‖ payload, as on the wire.
    public func encoded() -> [UInt8] { [type.rawValue] + payload }
}

/// Incremental H4 decoder (a `FrameDecoder`): feed bytes as they arrive, take out whole packets;
/// `next()` returns nil for "need more bytes" (swift-nio `SingleStepByteToMessageDecoder` shape).
public struct H4Decoder: FrameDecoder {
    private enum State {
        /// Waiting for the packet-type byte.
        case type
        /// Type known; waiting for the fixed-size header.
        case header(H4PacketType, headerLength: Int)
        /// Header read; waiting for `total` bytes (header + parameters).
        case body(H4PacketType, total: Int)
    }

    private var state = State.type
    private var buffer = FrameBuffer()

    public init() {}

    /// Bytes received but not yet part of a returned packet.
    public var pendingByteCount: Int { buffer.count }

    public mutating func feed<S: Sequence>(_ bytes: S) where S.Element == UInt8 { buffer.append(bytes) }

    /// The next whole packet, nil when more bytes are needed; throws on an unknown type byte
    /// (the stream cannot be resynchronised after that).
    public mutating func next() throws(BLEError) -> H4Packet? {
        while true {
            switch state {
            case .type:
                guard buffer.count >= 1 else { return nil }
                let raw = buffer[0]
                guard let type = H4PacketType(rawValue: raw) else {
                    throw BLEError(.malformedPacket, "H4: unknown packet type 0x\([raw].hex)")
                }
                buffer.consume(1)
                let headerLength: Int
                switch type {
                case .command, .sco: headerLength = 3
                case .acl, .iso: headerLength = 4
                case .event: headerLength = 2
                }
                state = .header(type, headerLength: headerLength)
            case .header(let type, let headerLength):
                guard buffer.count >= headerLength else { return nil }
                let parameterLength: Int
                switch type {
                case .command, .sco: parameterLength = Int(buffer[2])
                case .acl: parameterLength = Int(buffer[2]) | Int(buffer[3]) << 8
                case .iso: parameterLength = (Int(buffer[2]) | Int(buffer[3]) << 8) & 0x3FFF
                case .event: parameterLength = Int(buffer[1])
                }
                state = .body(type, total: headerLength + parameterLength)
            case .body(let type, let total):
                guard buffer.count >= total else { return nil }
                state = .type
                return H4Packet(type, buffer.take(total))
            }
        }
    }
}
