import ByteCore

/// HCI ACL data packet (Core Vol 4 Part E §5.4.2): Handle (12 bits) ‖ PB flag (2) ‖ BC flag (2),
/// Data_Total_Length (2), data.
public struct ACLPacket: Equatable, Sendable {
    /// PB: 0b00 first non-flushable (host → controller start), 0b01 continuing, 0b10 first flushable.
    public enum Boundary: UInt8, Sendable { case firstNonFlushable = 0, continuing = 1, firstFlushable = 2, complete = 3 }

    public var handle: UInt16
    public var boundary: Boundary
    public var data: [UInt8]

    public init(handle: UInt16, boundary: Boundary, data: [UInt8]) {
        self.handle = handle
        self.boundary = boundary
        self.data = data
    }

    public func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.appendUInt16LE(handle & 0x0FFF | UInt16(boundary.rawValue) << 12)
        out.appendUInt16LE(UInt16(data.count))
        return out + data
    }

    public init(parsing bytes: [UInt8]) throws(BLEError) {
        var r = ByteReader(bytes)
        guard let hf = r.readUInt16LE(), let len = r.readUInt16LE(), let data = r.readArray(Int(len)), r.isAtEnd else {
            throw BLEError(.malformedPacket, "ACL: bad framing (\(bytes.count) bytes)")
        }
        self.handle = hf & 0x0FFF
        self.boundary = Boundary(rawValue: UInt8((hf >> 12) & 0x3))!
        self.data = data
    }

    /// Splits one L2CAP frame into ACL packets of at most `maxLength` data bytes: the first with
    /// PB=00, the rest PB=01.
    public static func fragments(of frame: [UInt8], handle: UInt16, maxLength: Int) -> [ACLPacket] {
        let size = max(1, maxLength)
        var out = [ACLPacket]()
        var i = 0
        repeat {
            let end = min(frame.count, i + size)
            out.append(ACLPacket(handle: handle, boundary: i == 0 ? .firstNonFlushable : .continuing, data: Array(frame[i..<end])))
            i = end
        } while i < frame.count
        return out
    }
}

/// A basic L2CAP frame (Core Vol 3 Part A §3.1): Length (2) ‖ Channel ID (2) ‖ payload.
public struct L2CAPFrame: Equatable, Sendable {
    public var cid: UInt16
    public var payload: [UInt8]

    public init(cid: UInt16, payload: [UInt8]) {
        self.cid = cid
        self.payload = payload
    }

    public func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.appendUInt16LE(UInt16(payload.count))
        out.appendUInt16LE(cid)
        return out + payload
    }
}

/// Fixed LE channel identifiers (Core Vol 3 Part A §2.1).
public enum L2CAPChannelID {
    public static let att: UInt16 = 0x0004
    public static let leSignaling: UInt16 = 0x0005
    public static let smp: UInt16 = 0x0006
    /// First dynamically allocated LE CID.
    public static let firstDynamic: UInt16 = 0x0040
}

/// Incremental L2CAP reassembly over ACL fragments of one connection (STYLE 2): start
/// fragments (PB 00/10) begin a frame, continuations (PB 01) append, a frame is complete at
/// its L2CAP length + 4. An ACL packet larger than the controller's buffer is accepted
/// (Bumble's controller sends whole frames).
public struct L2CAPReassembler {
    private enum State {
        case idle
        case collecting([UInt8])
    }

    private var state = State.idle

    public init() {}

    /// Feeds one ACL packet's data; returns the frames it completes (zero or more).
    public mutating func feed(_ packet: ACLPacket) throws(BLEError) -> [L2CAPFrame] {
        var buffer: [UInt8]
        switch (packet.boundary, state) {
        case (.continuing, .idle):
            throw BLEError(.malformedPacket, "L2CAP: continuation fragment without a start (handle 0x\(String(packet.handle, radix: 16)))")
        case (.continuing, .collecting(let sofar)):
            buffer = sofar + packet.data
        case (_, .collecting):
            // A new start while collecting: the previous frame is lost; start over.
            buffer = packet.data
        case (_, .idle):
            buffer = packet.data
        }
        var frames = [L2CAPFrame]()
        while buffer.count >= 4 {
            let length = Int(buffer[0]) | Int(buffer[1]) << 8
            guard buffer.count >= length + 4 else { break }
            let cid = UInt16(buffer[2]) | UInt16(buffer[3]) << 8
            frames.append(L2CAPFrame(cid: cid, payload: Array(buffer[4..<(4 + length)])))
            buffer.removeFirst(length + 4)
        }
        state = buffer.isEmpty ? .idle : .collecting(buffer)
        return frames
    }
}
