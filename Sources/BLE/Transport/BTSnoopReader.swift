import ByteCore

/// Reads a btsnoop capture (format 1, datalink 1002 = H4; what `--btsnoop` writes and Android's
/// HCI snoop log produces) and pulls the access-protocol APDUs out of its LE credit-based L2CAP
/// channels: ACL fragments reassembled per connection and direction, K-frames reassembled into
/// SDUs (Core Vol 3 Part A §3.4.3), SDUs decoded as `[type][id][len2][payload]` frames.
public struct BTSnoopCapture {
    /// One HCI packet as captured.
    public struct Record: Sendable {
        public var h4: [UInt8]
        /// Controller → host.
        public var received: Bool
        public var microsecondsSinceEpoch0: UInt64
    }

    /// An APDU found on an access channel, in capture order.
    public struct APDU: Equatable, Sendable {
        public var isCommand: Bool
        public var bytes: [UInt8]
        /// ACL connection handle, and the dynamic CID the frame travelled on.
        public var handle: UInt16
        public var cid: UInt16
    }

    public var records: [Record] = []

    /// Bounds a hostile file cannot pass.
    public static let maxRecords = 4_000_000
    public static let maxRecordLength = 65_535 + 4

    public init(parsing bytes: [UInt8]) throws(BLEError) {
        guard bytes.count >= 16, Array(bytes[0..<8]) == Array("btsnoop\0".utf8) else {
            throw BLEError(.malformedPacket, "btsnoop: the file does not start with \"btsnoop\\0\"")
        }
        var r = ByteReader(bytes)
        _ = r.readArray(8)
        guard let version = r.readUInt32BE(), version == 1, let link = r.readUInt32BE() else {
            throw BLEError(.malformedPacket, "btsnoop: version is not 1")
        }
        guard link == 1002 else { throw BLEError(.malformedPacket, "btsnoop: datalink \(link); only 1002 (HCI UART/H4) is read") }
        while !r.isAtEnd {
            guard records.count < Self.maxRecords else { throw BLEError(.malformedPacket, "btsnoop: more than \(Self.maxRecords) records") }
            guard let _ = r.readUInt32BE(), let included = r.readUInt32BE(), let flags = r.readUInt32BE(), let _ = r.readUInt32BE(),
                  let hi = r.readUInt32BE(), let lo = r.readUInt32BE() else {
                throw BLEError(.malformedPacket, "btsnoop: truncated record header after \(records.count) records")
            }
            guard included <= Self.maxRecordLength, let data = r.readArray(Int(included)) else {
                throw BLEError(.malformedPacket, "btsnoop: record \(records.count + 1) claims \(included) bytes")
            }
            records.append(Record(h4: data, received: flags & 1 != 0, microsecondsSinceEpoch0: UInt64(hi) << 32 | UInt64(lo)))
        }
    }

    /// The APDUs on every LE credit-based channel whose SDUs are access-protocol frames.
    public func accessAPDUs() -> [APDU] {
        struct Key: Hashable { var handle: UInt16; var received: Bool }
        struct ChannelKey: Hashable { var handle: UInt16; var cid: UInt16 }
        var acl: [Key: L2CAPReassembler] = [:]
        var creditCIDs = Set<ChannelKey>()
        var sdu: [ChannelKey: (expected: Int, data: [UInt8])] = [:]
        var out: [APDU] = []
        for record in records where record.h4.first == 0x02 {
            guard let packet = try? ACLPacket(parsing: Array(record.h4.dropFirst())) else { continue }
            let key = Key(handle: packet.handle, received: record.received)
            var reassembler = acl[key] ?? L2CAPReassembler()
            let frames = (try? reassembler.feed(packet)) ?? []
            acl[key] = reassembler
            for frame in frames {
                if frame.cid == L2CAPChannelID.leSignaling {
                    // LE Credit Based Connection Request (14) / Response (15): learn the channel's CIDs.
                    let p = frame.payload
                    guard p.count >= 4 else { continue }
                    if p[0] == 0x14, p.count >= 8 { creditCIDs.insert(ChannelKey(handle: packet.handle, cid: UInt16(p[6]) | UInt16(p[7]) << 8)) }
                    if p[0] == 0x15, p.count >= 6 { creditCIDs.insert(ChannelKey(handle: packet.handle, cid: UInt16(p[4]) | UInt16(p[5]) << 8)) }
                    continue
                }
                let ck = ChannelKey(handle: packet.handle, cid: frame.cid)
                guard creditCIDs.contains(ck) else { continue }
                var pending = sdu[ck]
                if pending == nil {
                    guard frame.payload.count >= 2 else { continue }
                    let length = Int(frame.payload[0]) | Int(frame.payload[1]) << 8
                    pending = (length, Array(frame.payload.dropFirst(2)))
                } else {
                    pending!.data += frame.payload
                }
                if pending!.data.count >= pending!.expected {
                    sdu[ck] = nil
                    if let f = try? AliroFrame(parsing: Array(pending!.data.prefix(pending!.expected))), f.type == AliroFrame.Kind.apdu {
                        out.append(APDU(isCommand: f.id == AliroFrame.ID.command, bytes: f.payload, handle: packet.handle, cid: frame.cid))
                    }
                } else {
                    sdu[ck] = pending
                }
            }
        }
        return out
    }
}

extension ByteReader {
    mutating func readUInt32BE() -> UInt32? {
        guard let hi = readUInt16BE(), let lo = readUInt16BE() else { return nil }
        return UInt32(hi) << 16 | UInt32(lo)
    }
}
