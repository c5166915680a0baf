import ByteCore

/// HCI opcodes (OGF << 10 | OCF), Core Vol 4 Part E §7.
public enum HCIOpcode {
    public static let disconnect: UInt16 = 0x0406
    public static let setEventMask: UInt16 = 0x0C01
    public static let reset: UInt16 = 0x0C03
    public static let readBufferSize: UInt16 = 0x1005
    public static let readBDADDR: UInt16 = 0x1009
    public static let leSetEventMask: UInt16 = 0x2001
    public static let leReadBufferSize: UInt16 = 0x2002
    public static let leSetRandomAddress: UInt16 = 0x2005
    public static let leSetAdvertisingParameters: UInt16 = 0x2006
    public static let leSetAdvertisingData: UInt16 = 0x2008
    public static let leSetScanResponseData: UInt16 = 0x2009
    public static let leSetAdvertisingEnable: UInt16 = 0x200A
    public static let leSetScanParameters: UInt16 = 0x200B
    public static let leSetScanEnable: UInt16 = 0x200C
    public static let leCreateConnection: UInt16 = 0x200D
    public static let leCreateConnectionCancel: UInt16 = 0x200E
    public static let leConnectionUpdate: UInt16 = 0x2013
    public static let leLTKRequestNegativeReply: UInt16 = 0x201B
    public static let leRemoteConnParamRequestReply: UInt16 = 0x2020
}

/// The HCI commands this host sends, each declared once with its parameters (Core Vol 4 Part E
/// §7.1–7.8); anything else round-trips as `.unknown`.
public enum HCICommand: Equatable, Sendable {
    /// §7.1.6 Disconnect: Connection_Handle (2), Reason (1).
    case disconnect(handle: UInt16, reason: UInt8)
    /// §7.3.1 Set_Event_Mask: Event_Mask (8).
    case setEventMask(UInt64)
    /// §7.3.2 Reset.
    case reset
    /// §7.4.5 Read_Buffer_Size.
    case readBufferSize
    /// §7.4.6 Read_BD_ADDR.
    case readBDADDR
    /// §7.8.1 LE_Set_Event_Mask: LE_Event_Mask (8).
    case leSetEventMask(UInt64)
    /// §7.8.2 LE_Read_Buffer_Size.
    case leReadBufferSize
    /// §7.8.4 LE_Set_Random_Address: Random_Address (6).
    case leSetRandomAddress([UInt8])
    /// §7.8.5 LE_Set_Advertising_Parameters: Interval_Min (2), Interval_Max (2), Type (1),
    /// Own_Address_Type (1), Peer_Address_Type (1), Peer_Address (6), Channel_Map (1), Filter_Policy (1).
    case leSetAdvertisingParameters(intervalMin: UInt16, intervalMax: UInt16, type: UInt8, ownAddressType: UInt8, channelMap: UInt8)
    /// §7.8.7 LE_Set_Advertising_Data: Length (1), Data (31, zero-padded).
    case leSetAdvertisingData([UInt8])
    /// §7.8.8 LE_Set_Scan_Response_Data: Length (1), Data (31, zero-padded).
    case leSetScanResponseData([UInt8])
    /// §7.8.9 LE_Set_Advertising_Enable: Enable (1).
    case leSetAdvertisingEnable(Bool)
    /// §7.8.10 LE_Set_Scan_Parameters: Type (1), Interval (2), Window (2), Own_Address_Type (1), Filter_Policy (1).
    case leSetScanParameters(active: Bool, interval: UInt16, window: UInt16, ownAddressType: UInt8)
    /// §7.8.11 LE_Set_Scan_Enable: Enable (1), Filter_Duplicates (1).
    case leSetScanEnable(enable: Bool, filterDuplicates: Bool)
    /// §7.8.12 LE_Create_Connection: Scan_Interval (2), Scan_Window (2), Initiator_Filter_Policy (1),
    /// Peer_Address_Type (1), Peer_Address (6), Own_Address_Type (1), Conn_Interval_Min/Max (2+2),
    /// Max_Latency (2), Supervision_Timeout (2), Min/Max_CE_Length (2+2).
    case leCreateConnection(peer: BLEAddress, ownAddressType: UInt8, intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16)
    /// §7.8.13 LE_Create_Connection_Cancel.
    case leCreateConnectionCancel
    /// §7.8.18 LE_Connection_Update: Handle (2), Interval_Min/Max (2+2), Latency (2), Timeout (2), CE min/max (2+2).
    case leConnectionUpdate(handle: UInt16, intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16)
    /// §7.8.26 LE_Long_Term_Key_Request_Negative_Reply: Handle (2).
    case leLTKRequestNegativeReply(handle: UInt16)
    /// §7.8.31 LE_Remote_Connection_Parameter_Request_Reply: Handle (2), Interval_Min/Max, Latency,
    /// Timeout, Min/Max_CE_Length (2 each).
    case leRemoteConnParamRequestReply(handle: UInt16, intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16)
    /// Anything else, well framed.
    case unknown(opcode: UInt16, parameters: [UInt8])

    public var opcode: UInt16 {
        switch self {
        case .disconnect: return HCIOpcode.disconnect
        case .setEventMask: return HCIOpcode.setEventMask
        case .reset: return HCIOpcode.reset
        case .readBufferSize: return HCIOpcode.readBufferSize
        case .readBDADDR: return HCIOpcode.readBDADDR
        case .leSetEventMask: return HCIOpcode.leSetEventMask
        case .leReadBufferSize: return HCIOpcode.leReadBufferSize
        case .leSetRandomAddress: return HCIOpcode.leSetRandomAddress
        case .leSetAdvertisingParameters: return HCIOpcode.leSetAdvertisingParameters
        case .leSetAdvertisingData: return HCIOpcode.leSetAdvertisingData
        case .leSetScanResponseData: return HCIOpcode.leSetScanResponseData
        case .leSetAdvertisingEnable: return HCIOpcode.leSetAdvertisingEnable
        case .leSetScanParameters: return HCIOpcode.leSetScanParameters
        case .leSetScanEnable: return HCIOpcode.leSetScanEnable
        case .leCreateConnection: return HCIOpcode.leCreateConnection
        case .leCreateConnectionCancel: return HCIOpcode.leCreateConnectionCancel
        case .leConnectionUpdate: return HCIOpcode.leConnectionUpdate
        case .leLTKRequestNegativeReply: return HCIOpcode.leLTKRequestNegativeReply
        case .leRemoteConnParamRequestReply: return HCIOpcode.leRemoteConnParamRequestReply
        case .unknown(let op, _): return op
        }
    }

    public var parameters: [UInt8] {
        var p = [UInt8]()
        switch self {
        case .disconnect(let h, let r): p.appendUInt16LE(h); p.append(r)
        case .setEventMask(let m), .leSetEventMask(let m): p.appendUInt64LE(m)
        case .reset, .readBufferSize, .readBDADDR, .leReadBufferSize, .leCreateConnectionCancel: break
        case .leSetRandomAddress(let a): p += a
        case .leSetAdvertisingParameters(let mn, let mx, let t, let own, let map):
            p.appendUInt16LE(mn); p.appendUInt16LE(mx); p += [t, own, 0]; p += [UInt8](repeating: 0, count: 6); p += [map, 0]
        case .leSetAdvertisingData(let d), .leSetScanResponseData(let d):
            p.append(UInt8(d.count)); p += d; p += [UInt8](repeating: 0, count: max(0, 31 - d.count))
        case .leSetAdvertisingEnable(let e): p.append(e ? 1 : 0)
        case .leSetScanParameters(let active, let interval, let window, let own):
            p.append(active ? 1 : 0); p.appendUInt16LE(interval); p.appendUInt16LE(window); p += [own, 0]
        case .leSetScanEnable(let e, let f): p += [e ? 1 : 0, f ? 1 : 0]
        case .leCreateConnection(let peer, let own, let mn, let mx, let lat, let to):
            p.appendUInt16LE(0x0010); p.appendUInt16LE(0x0010); p.append(0); p.append(peer.type); p += peer.bytes; p.append(own)
            p.appendUInt16LE(mn); p.appendUInt16LE(mx); p.appendUInt16LE(lat); p.appendUInt16LE(to); p.appendUInt16LE(0); p.appendUInt16LE(0)
        case .leConnectionUpdate(let h, let mn, let mx, let lat, let to),
             .leRemoteConnParamRequestReply(let h, let mn, let mx, let lat, let to):
            p.appendUInt16LE(h); p.appendUInt16LE(mn); p.appendUInt16LE(mx); p.appendUInt16LE(lat); p.appendUInt16LE(to); p.appendUInt16LE(0); p.appendUInt16LE(0)
        case .leLTKRequestNegativeReply(let h): p.appendUInt16LE(h)
        case .unknown(_, let params): p = params
        }
        return p
    }

    /// Opcode (2, LE) ‖ length (1) ‖ parameters: the H4 command packet payload.
    public func encoded() -> [UInt8] {
        let params = parameters
        var out = [UInt8]()
        out.appendUInt16LE(opcode)
        out.append(UInt8(params.count))
        return out + params
    }

    /// Parses a command packet (used by tests and by captures); malformed known commands decode
    /// to `.unknown` rather than failing.
    public init(parsing bytes: [UInt8]) throws(BLEError) {
        var r = ByteReader(bytes)
        guard let opcode = r.readUInt16LE(), let len = r.readUInt8(), let params = r.readArray(Int(len)), r.isAtEnd else {
            throw BLEError(.malformedPacket, "HCI command: bad framing (\(bytes.count) bytes)")
        }
        self = HCICommand.decode(opcode: opcode, params) ?? .unknown(opcode: opcode, parameters: params)
    }

    private static func decode(opcode: UInt16, _ params: [UInt8]) -> HCICommand? {
        var r = ByteReader(params)
        func done(_ c: HCICommand) -> HCICommand? { r.isAtEnd ? c : nil }
        switch opcode {
        case HCIOpcode.disconnect:
            guard let h = r.readUInt16LE(), let reason = r.readUInt8() else { return nil }
            return done(.disconnect(handle: h, reason: reason))
        case HCIOpcode.setEventMask: return r.readUInt64LE().flatMap { done(.setEventMask($0)) }
        case HCIOpcode.leSetEventMask: return r.readUInt64LE().flatMap { done(.leSetEventMask($0)) }
        case HCIOpcode.reset: return done(.reset)
        case HCIOpcode.readBufferSize: return done(.readBufferSize)
        case HCIOpcode.readBDADDR: return done(.readBDADDR)
        case HCIOpcode.leReadBufferSize: return done(.leReadBufferSize)
        case HCIOpcode.leCreateConnectionCancel: return done(.leCreateConnectionCancel)
        case HCIOpcode.leSetRandomAddress: return r.readArray(6).flatMap { done(.leSetRandomAddress($0)) }
        case HCIOpcode.leSetAdvertisingParameters:
            guard let mn = r.readUInt16LE(), let mx = r.readUInt16LE(), let t = r.readUInt8(), let own = r.readUInt8(),
                  r.readBytes(7) != nil, let map = r.readUInt8(), r.readUInt8() != nil else { return nil }
            return done(.leSetAdvertisingParameters(intervalMin: mn, intervalMax: mx, type: t, ownAddressType: own, channelMap: map))
        case HCIOpcode.leSetAdvertisingData, HCIOpcode.leSetScanResponseData:
            guard let n = r.readUInt8(), n <= 31, let d = r.readArray(Int(n)), r.readBytes(31 - Int(n)) != nil else { return nil }
            return done(opcode == HCIOpcode.leSetAdvertisingData ? .leSetAdvertisingData(d) : .leSetScanResponseData(d))
        case HCIOpcode.leSetAdvertisingEnable:
            return r.readUInt8().flatMap { done(.leSetAdvertisingEnable($0 != 0)) }
        case HCIOpcode.leSetScanParameters:
            guard let a = r.readUInt8(), let i = r.readUInt16LE(), let w = r.readUInt16LE(), let own = r.readUInt8(), r.readUInt8() != nil else { return nil }
            return done(.leSetScanParameters(active: a != 0, interval: i, window: w, ownAddressType: own))
        case HCIOpcode.leSetScanEnable:
            guard let e = r.readUInt8(), let f = r.readUInt8() else { return nil }
            return done(.leSetScanEnable(enable: e != 0, filterDuplicates: f != 0))
        case HCIOpcode.leCreateConnection:
            guard r.readBytes(5) != nil, let pt = r.readUInt8(), let pa = r.readArray(6), let own = r.readUInt8(),
                  let mn = r.readUInt16LE(), let mx = r.readUInt16LE(), let lat = r.readUInt16LE(), let to = r.readUInt16LE(),
                  r.readBytes(4) != nil else { return nil }
            return done(.leCreateConnection(peer: BLEAddress(type: pt, bytes: pa), ownAddressType: own, intervalMin: mn, intervalMax: mx, latency: lat, timeout: to))
        case HCIOpcode.leConnectionUpdate, HCIOpcode.leRemoteConnParamRequestReply:
            guard let h = r.readUInt16LE(), let mn = r.readUInt16LE(), let mx = r.readUInt16LE(), let lat = r.readUInt16LE(),
                  let to = r.readUInt16LE(), r.readBytes(4) != nil else { return nil }
            return done(opcode == HCIOpcode.leConnectionUpdate
                        ? .leConnectionUpdate(handle: h, intervalMin: mn, intervalMax: mx, latency: lat, timeout: to)
                        : .leRemoteConnParamRequestReply(handle: h, intervalMin: mn, intervalMax: mx, latency: lat, timeout: to))
        case HCIOpcode.leLTKRequestNegativeReply:
            return r.readUInt16LE().flatMap { done(.leLTKRequestNegativeReply(handle: $0)) }
        default: return nil
        }
    }
}
