import Foundation
import Synchronization

/// btsnoop capture (format version 1, datalink 1002 = H4), written at the transport seam as a
/// wrapping transport (Bumble's snooper, swift-nio-extras `WritePCAPHandler`). tshark opens it
/// as "Symbian OS btsnoop / H4".
public final class BTSnoopTransport: HCITransport {
    private let inner: HCITransport
    private let writer: BTSnoopWriter

    /// Microseconds from the btsnoop epoch ("year 0 AD", as Symbian counts it: 719 540 days
    /// before 1970-01-01) to 1970-01-01 — the value Wireshark's btsnoop reader subtracts
    /// (the test reads `frame.time_epoch` back with tshark). 0x00E03AB44A676000, used before,
    /// is 30 years more and dated captures 2056.
    static let epochOffset: UInt64 = 0x00DC_DDB3_0F2F_8000

    public init(wrapping inner: HCITransport, path: String) throws(BLEError) {
        self.inner = inner
        self.writer = try BTSnoopWriter(path: path)
    }

    /// Wraps a transport into an open capture (one file across controller reconnects).
    public init(wrapping inner: HCITransport, writer: BTSnoopWriter) {
        self.inner = inner
        self.writer = writer
    }

    static let fileHeader: [UInt8] = Array("btsnoop\0".utf8) + [0, 0, 0, 1] + [0, 0, 0x03, 0xEA]

    /// One record: original length, included length, flags, drops, timestamp (all big-endian).
    static func record(_ packet: H4Packet, received: Bool, microsecondsSince1970: UInt64) -> [UInt8] {
        let bytes = packet.encoded()
        var flags: UInt32 = received ? 1 : 0
        if packet.type == .command || packet.type == .event { flags |= 2 }
        var out = [UInt8]()
        out.reserveCapacity(24 + bytes.count)
        func be32(_ v: UInt32) { for s in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: v >> UInt32(s))) } }
        be32(UInt32(bytes.count))
        be32(UInt32(bytes.count))
        be32(flags)
        be32(0)
        let ts = microsecondsSince1970 &+ epochOffset
        for s in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: ts >> UInt64(s))) }
        out += bytes
        return out
    }

    private func log(_ packet: H4Packet, received: Bool) { writer.write(packet, received: received) }

    public func send(_ packet: H4Packet) throws(BLEError) {
        log(packet, received: false)
        try inner.send(packet)
    }

    public func receive() throws(BLEError) -> H4Packet {
        let packet = try inner.receive()
        log(packet, received: true)
        return packet
    }

    public func close() {
        inner.close()
        writer.flush()
    }
}

/// An open btsnoop file; records are appended as packets cross the seam.
public final class BTSnoopWriter: Sendable {
    /// Writers on several threads (both directions of a link): one record at a time.
    private let file: Mutex<FileHandle>
    public let path: String

    public init(path: String) throws(BLEError) {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forWritingAtPath: path) else {
            throw BLEError(.transportUnavailable, "--btsnoop \(path): cannot create the file")
        }
        self.path = path
        handle.write(Data(BTSnoopTransport.fileHeader))
        self.file = Mutex(handle)
    }

    public func write(_ packet: H4Packet, received: Bool) {
        let now = UInt64(Date().timeIntervalSince1970 * 1_000_000)
        let rec = BTSnoopTransport.record(packet, received: received, microsecondsSince1970: now)
        file.withLock { $0.write(Data(rec)) }
    }

    public func flush() { file.withLock { try? $0.synchronize() } }

    deinit { file.withLock { try? $0.close() } }
}
