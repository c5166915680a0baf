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
    public var bytes: [UInt8] { [type.rawValue] + payload }
}

/// Incremental H4 decoder: feed bytes as they arrive, take out whole packets; `next()` returns
/// nil for "need more bytes" (swift-nio `SingleStepByteToMessageDecoder` shape).
public struct H4Decoder {
    private enum State {
        /// Waiting for the packet-type byte.
        case type
        /// Type known; waiting for the fixed-size header.
        case header(H4PacketType, headerLength: Int)
        /// Header read; waiting for `total` bytes (header + parameters).
        case body(H4PacketType, total: Int)
    }

    private var state = State.type
    private var buffer: [UInt8] = []
    private var start = 0

    public init() {}

    /// Bytes received but not yet part of a returned packet.
    public var pendingByteCount: Int { buffer.count - start }

    public mutating func feed<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        if start > 4096 && start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole packet, nil when more bytes are needed; throws on an unknown type byte
    /// (the stream cannot be resynchronised after that).
    public mutating func next() throws(BLEError) -> H4Packet? {
        while true {
            switch state {
            case .type:
                guard pendingByteCount >= 1 else { return nil }
                let raw = buffer[start]
                guard let type = H4PacketType(rawValue: raw) else {
                    throw BLEError(.malformedPacket, "H4: unknown packet type 0x\([raw].hex)")
                }
                start += 1
                let headerLength: Int
                switch type {
                case .command, .sco: headerLength = 3
                case .acl, .iso: headerLength = 4
                case .event: headerLength = 2
                }
                state = .header(type, headerLength: headerLength)
            case .header(let type, let headerLength):
                guard pendingByteCount >= headerLength else { return nil }
                let h = start
                let parameterLength: Int
                switch type {
                case .command, .sco: parameterLength = Int(buffer[h + 2])
                case .acl: parameterLength = Int(buffer[h + 2]) | Int(buffer[h + 3]) << 8
                case .iso: parameterLength = (Int(buffer[h + 2]) | Int(buffer[h + 3]) << 8) & 0x3FFF
                case .event: parameterLength = Int(buffer[h + 1])
                }
                state = .body(type, total: headerLength + parameterLength)
            case .body(let type, let total):
                guard pendingByteCount >= total else { return nil }
                let packet = H4Packet(type, Array(buffer[start..<start + total]))
                start += total
                state = .type
                if start == buffer.count { buffer.removeAll(keepingCapacity: true); start = 0 }
                return packet
            }
        }
    }
}
