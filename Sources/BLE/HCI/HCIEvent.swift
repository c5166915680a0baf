import ByteCore

/// LE Connection Complete (§7.7.65.1, 0x01), Enhanced (§7.7.65.10, 0x0A) and Enhanced v2
/// (0x29), as one value.
public struct LEConnectionComplete: Equatable, Sendable {
    public var subevent: UInt8
    public var status: UInt8
    public var handle: UInt16
    /// 0 central, 1 peripheral.
    public var role: UInt8
    public var peer: BLEAddress
    public var interval: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16
    public var clockAccuracy: UInt8
    /// Enhanced only: local and peer resolvable private addresses.
    public var localRPA: [UInt8] = [UInt8](repeating: 0, count: 6)
    public var peerRPA: [UInt8] = [UInt8](repeating: 0, count: 6)
    /// Enhanced v2 only.
    public var advertisingHandle: UInt8 = 0xFF
    public var syncHandle: UInt16 = 0xFFFF

    public init(subevent: UInt8 = 0x01, status: UInt8, handle: UInt16, role: UInt8, peer: BLEAddress,
                interval: UInt16, latency: UInt16, supervisionTimeout: UInt16, clockAccuracy: UInt8 = 0) {
        self.subevent = subevent
        self.status = status
        self.handle = handle
        self.role = role
        self.peer = peer
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
        self.clockAccuracy = clockAccuracy
    }
}

/// One LE Advertising Report entry (§7.7.65.2).
public struct AdvertisingReport: Equatable, Sendable {
    public var eventType: UInt8
    public var address: BLEAddress
    public var data: [UInt8]
    public var rssi: Int8

    public init(eventType: UInt8, address: BLEAddress, data: [UInt8], rssi: Int8) {
        self.eventType = eventType
        self.address = address
        self.data = data
        self.rssi = rssi
    }
}

/// One LE Extended Advertising Report entry (§7.7.65.13).
public struct ExtendedAdvertisingReport: Equatable, Sendable {
    public var eventType: UInt16
    public var address: BLEAddress
    public var primaryPHY: UInt8 = 1
    public var secondaryPHY: UInt8 = 0
    public var sid: UInt8 = 0xFF
    public var txPower: Int8 = 127
    public var rssi: Int8
    public var periodicInterval: UInt16 = 0
    public var directAddress = BLEAddress(type: 0, bytes: [UInt8](repeating: 0, count: 6))
    public var data: [UInt8]

    public init(eventType: UInt16, address: BLEAddress, rssi: Int8, data: [UInt8]) {
        self.eventType = eventType
        self.address = address
        self.rssi = rssi
        self.data = data
    }

    /// As a legacy report (what the central role consumes).
    public var legacy: AdvertisingReport {
        AdvertisingReport(eventType: UInt8(truncatingIfNeeded: eventType), address: address, data: data, rssi: rssi)
    }
}

/// LE meta subevent codes (§7.7.65).
public enum LESubevent {
    public static let connectionComplete: UInt8 = 0x01
    public static let advertisingReport: UInt8 = 0x02
    public static let connectionUpdateComplete: UInt8 = 0x03
    public static let ltkRequest: UInt8 = 0x05
    public static let remoteConnParamRequest: UInt8 = 0x06
    public static let enhancedConnectionComplete: UInt8 = 0x0A
    public static let extendedAdvertisingReport: UInt8 = 0x0D
    public static let enhancedConnectionCompleteV2: UInt8 = 0x29
}

/// HCI event codes (§7.7).
public enum HCIEventCode {
    public static let disconnectionComplete: UInt8 = 0x05
    public static let encryptionChange: UInt8 = 0x08
    public static let commandComplete: UInt8 = 0x0E
    public static let commandStatus: UInt8 = 0x0F
    public static let hardwareError: UInt8 = 0x10
    public static let numberOfCompletedPackets: UInt8 = 0x13
    public static let leMeta: UInt8 = 0x3E
}

/// The HCI events this host handles, each declared once (Core Vol 4 Part E §7.7); well-framed
/// events it does not know decode to `.unknown` / `.leUnknown`.
public enum HCIEvent: Equatable, Sendable {
    /// §7.7.5: Status, Handle, Reason.
    case disconnectionComplete(status: UInt8, handle: UInt16, reason: UInt8)
    /// §7.7.14: Num_HCI_Command_Packets, Opcode, Return_Parameters.
    case commandComplete(numPackets: UInt8, opcode: UInt16, returnParameters: [UInt8])
    /// §7.7.15: Status, Num_HCI_Command_Packets, Opcode.
    case commandStatus(status: UInt8, numPackets: UInt8, opcode: UInt16)
    /// §7.7.16: Hardware_Code.
    case hardwareError(UInt8)
    /// §7.7.19: Num_Handles, then Handle (2) and Num_Completed_Packets (2) per handle.
    case numberOfCompletedPackets([Completed])
    /// §7.7.65.1 / .10: (Enhanced) LE Connection Complete.
    case leConnectionComplete(LEConnectionComplete)
    /// §7.7.65.2: LE Advertising Report.
    case leAdvertisingReport([AdvertisingReport])
    /// §7.7.65.13: LE Extended Advertising Report (Bumble's controller sends these).
    case leExtendedAdvertisingReport([ExtendedAdvertisingReport])
    /// §7.7.65.3: Status, Handle, Interval, Latency, Timeout.
    case leConnectionUpdateComplete(status: UInt8, handle: UInt16, interval: UInt16, latency: UInt16, timeout: UInt16)
    /// §7.7.65.5: Handle, Random_Number (8), EDIV (2).
    case leLTKRequest(handle: UInt16, random: UInt64, ediv: UInt16)
    /// §7.7.65.6: Handle, Interval_Min, Interval_Max, Latency, Timeout.
    case leRemoteConnParamRequest(handle: UInt16, intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16)
    case leUnknown(subevent: UInt8, parameters: [UInt8])
    case unknown(code: UInt8, parameters: [UInt8])

    public struct Completed: Equatable, Sendable {
        public var handle: UInt16
        public var count: UInt16
        public init(handle: UInt16, count: UInt16) { self.handle = handle; self.count = count }
    }

    /// Event code (1) ‖ length (1) ‖ parameters: the H4 event packet payload.
    public func encoded() -> [UInt8] {
        var p = [UInt8]()
        let code: UInt8
        switch self {
        case .disconnectionComplete(let s, let h, let r):
            code = HCIEventCode.disconnectionComplete; p.append(s); p.appendUInt16LE(h); p.append(r)
        case .commandComplete(let n, let op, let rp):
            code = HCIEventCode.commandComplete; p.append(n); p.appendUInt16LE(op); p += rp
        case .commandStatus(let s, let n, let op):
            code = HCIEventCode.commandStatus; p += [s, n]; p.appendUInt16LE(op)
        case .hardwareError(let c):
            code = HCIEventCode.hardwareError; p.append(c)
        case .numberOfCompletedPackets(let list):
            code = HCIEventCode.numberOfCompletedPackets; p.append(UInt8(list.count))
            for c in list { p.appendUInt16LE(c.handle); p.appendUInt16LE(c.count) }
        case .leConnectionComplete(let c):
            code = HCIEventCode.leMeta; p += [c.subevent, c.status]; p.appendUInt16LE(c.handle); p += [c.role, c.peer.type]; p += c.peer.bytes
            if c.subevent != LESubevent.connectionComplete { p += c.localRPA; p += c.peerRPA }
            p.appendUInt16LE(c.interval); p.appendUInt16LE(c.latency); p.appendUInt16LE(c.supervisionTimeout); p.append(c.clockAccuracy)
            if c.subevent == LESubevent.enhancedConnectionCompleteV2 { p.append(c.advertisingHandle); p.appendUInt16LE(c.syncHandle) }
        case .leAdvertisingReport(let reports):
            code = HCIEventCode.leMeta; p += [LESubevent.advertisingReport, UInt8(reports.count)]
            for r in reports { p += [r.eventType, r.address.type]; p += r.address.bytes; p.append(UInt8(r.data.count)); p += r.data; p.append(UInt8(bitPattern: r.rssi)) }
        case .leExtendedAdvertisingReport(let reports):
            code = HCIEventCode.leMeta; p += [LESubevent.extendedAdvertisingReport, UInt8(reports.count)]
            for r in reports {
                p.appendUInt16LE(r.eventType); p.append(r.address.type); p += r.address.bytes
                p += [r.primaryPHY, r.secondaryPHY, r.sid, UInt8(bitPattern: r.txPower), UInt8(bitPattern: r.rssi)]
                p.appendUInt16LE(r.periodicInterval); p.append(r.directAddress.type); p += r.directAddress.bytes
                p.append(UInt8(r.data.count)); p += r.data
            }
        case .leConnectionUpdateComplete(let s, let h, let i, let l, let t):
            code = HCIEventCode.leMeta; p += [LESubevent.connectionUpdateComplete, s]; p.appendUInt16LE(h); p.appendUInt16LE(i); p.appendUInt16LE(l); p.appendUInt16LE(t)
        case .leLTKRequest(let h, let rand, let ediv):
            code = HCIEventCode.leMeta; p.append(LESubevent.ltkRequest); p.appendUInt16LE(h); p.appendUInt64LE(rand); p.appendUInt16LE(ediv)
        case .leRemoteConnParamRequest(let h, let mn, let mx, let l, let t):
            code = HCIEventCode.leMeta; p.append(LESubevent.remoteConnParamRequest); p.appendUInt16LE(h); p.appendUInt16LE(mn); p.appendUInt16LE(mx); p.appendUInt16LE(l); p.appendUInt16LE(t)
        case .leUnknown(let s, let params):
            code = HCIEventCode.leMeta; p.append(s); p += params
        case .unknown(let c, let params):
            code = c; p = params
        }
        return [code, UInt8(p.count)] + p
    }

    public init(parsing bytes: [UInt8]) throws(BLEError) {
        var r = ByteReader(bytes)
        guard let code = r.readUInt8(), let len = r.readUInt8(), let params = r.readArray(Int(len)), r.isAtEnd else {
            throw BLEError(.malformedPacket, "HCI event: bad framing (\(bytes.count) bytes)")
        }
        if code == HCIEventCode.leMeta {
            guard let sub = params.first else { throw BLEError(.malformedPacket, "HCI LE meta event without a subevent") }
            self = HCIEvent.decodeLE(sub, Array(params.dropFirst())) ?? .leUnknown(subevent: sub, parameters: Array(params.dropFirst()))
        } else {
            self = HCIEvent.decode(code, params) ?? .unknown(code: code, parameters: params)
        }
    }

    private static func decode(_ code: UInt8, _ params: [UInt8]) -> HCIEvent? {
        var r = ByteReader(params)
        switch code {
        case HCIEventCode.disconnectionComplete:
            guard let s = r.readUInt8(), let h = r.readUInt16LE(), let reason = r.readUInt8(), r.isAtEnd else { return nil }
            return .disconnectionComplete(status: s, handle: h & 0x0FFF, reason: reason)
        case HCIEventCode.commandComplete:
            guard let n = r.readUInt8(), let op = r.readUInt16LE() else { return nil }
            return .commandComplete(numPackets: n, opcode: op, returnParameters: Array(r.readRest()))
        case HCIEventCode.commandStatus:
            guard let s = r.readUInt8(), let n = r.readUInt8(), let op = r.readUInt16LE(), r.isAtEnd else { return nil }
            return .commandStatus(status: s, numPackets: n, opcode: op)
        case HCIEventCode.hardwareError:
            guard let c = r.readUInt8(), r.isAtEnd else { return nil }
            return .hardwareError(c)
        case HCIEventCode.numberOfCompletedPackets:
            guard let n = r.readUInt8() else { return nil }
            var list = [Completed]()
            for _ in 0..<n {
                guard let h = r.readUInt16LE(), let c = r.readUInt16LE() else { return nil }
                list.append(Completed(handle: h & 0x0FFF, count: c))
            }
            return r.isAtEnd ? .numberOfCompletedPackets(list) : nil
        default: return nil
        }
    }

    private static func decodeLE(_ sub: UInt8, _ params: [UInt8]) -> HCIEvent? {
        var r = ByteReader(params)
        switch sub {
        case LESubevent.connectionComplete, LESubevent.enhancedConnectionComplete, LESubevent.enhancedConnectionCompleteV2:
            guard let s = r.readUInt8(), let h = r.readUInt16LE(), let role = r.readUInt8(), let pt = r.readUInt8(), let pa = r.readArray(6) else { return nil }
            var local = [UInt8](repeating: 0, count: 6), peerRPA = local
            if sub != LESubevent.connectionComplete {
                guard let l = r.readArray(6), let p = r.readArray(6) else { return nil }
                local = l; peerRPA = p
            }
            guard let i = r.readUInt16LE(), let lat = r.readUInt16LE(), let to = r.readUInt16LE(), let ca = r.readUInt8() else { return nil }
            var c = LEConnectionComplete(subevent: sub, status: s, handle: h & 0x0FFF, role: role, peer: BLEAddress(type: pt, bytes: pa),
                                         interval: i, latency: lat, supervisionTimeout: to, clockAccuracy: ca)
            c.localRPA = local
            c.peerRPA = peerRPA
            if sub == LESubevent.enhancedConnectionCompleteV2 {
                guard let ah = r.readUInt8(), let sh = r.readUInt16LE() else { return nil }
                c.advertisingHandle = ah
                c.syncHandle = sh
            }
            return r.isAtEnd ? .leConnectionComplete(c) : nil
        case LESubevent.advertisingReport:
            guard let n = r.readUInt8() else { return nil }
            var reports = [AdvertisingReport]()
            for _ in 0..<n {
                guard let et = r.readUInt8(), let at = r.readUInt8(), let a = r.readArray(6), let dl = r.readUInt8(),
                      let d = r.readArray(Int(dl)), let rssi = r.readUInt8() else { return nil }
                reports.append(AdvertisingReport(eventType: et, address: BLEAddress(type: at, bytes: a), data: d, rssi: Int8(bitPattern: rssi)))
            }
            return r.isAtEnd ? .leAdvertisingReport(reports) : nil
        case LESubevent.extendedAdvertisingReport:
            guard let n = r.readUInt8() else { return nil }
            var reports = [ExtendedAdvertisingReport]()
            for _ in 0..<n {
                guard let et = r.readUInt16LE(), let at = r.readUInt8(), let a = r.readArray(6), let p1 = r.readUInt8(), let p2 = r.readUInt8(),
                      let sid = r.readUInt8(), let tx = r.readUInt8(), let rssi = r.readUInt8(), let pi = r.readUInt16LE(),
                      let dt = r.readUInt8(), let da = r.readArray(6), let dl = r.readUInt8(), let d = r.readArray(Int(dl)) else { return nil }
                var rep = ExtendedAdvertisingReport(eventType: et, address: BLEAddress(type: at, bytes: a), rssi: Int8(bitPattern: rssi), data: d)
                rep.primaryPHY = p1; rep.secondaryPHY = p2; rep.sid = sid; rep.txPower = Int8(bitPattern: tx); rep.periodicInterval = pi
                rep.directAddress = BLEAddress(type: dt, bytes: da)
                reports.append(rep)
            }
            return r.isAtEnd ? .leExtendedAdvertisingReport(reports) : nil
        case LESubevent.connectionUpdateComplete:
            guard let s = r.readUInt8(), let h = r.readUInt16LE(), let i = r.readUInt16LE(), let l = r.readUInt16LE(), let t = r.readUInt16LE(), r.isAtEnd else { return nil }
            return .leConnectionUpdateComplete(status: s, handle: h & 0x0FFF, interval: i, latency: l, timeout: t)
        case LESubevent.ltkRequest:
            guard let h = r.readUInt16LE(), let rand = r.readUInt64LE(), let ediv = r.readUInt16LE(), r.isAtEnd else { return nil }
            return .leLTKRequest(handle: h & 0x0FFF, random: rand, ediv: ediv)
        case LESubevent.remoteConnParamRequest:
            guard let h = r.readUInt16LE(), let mn = r.readUInt16LE(), let mx = r.readUInt16LE(), let l = r.readUInt16LE(), let t = r.readUInt16LE(), r.isAtEnd else { return nil }
            return .leRemoteConnParamRequest(handle: h & 0x0FFF, intervalMin: mn, intervalMax: mx, latency: l, timeout: t)
        default: return nil
        }
    }
}

/// Advertising data (Core Supplement Part A §1): length ‖ AD type ‖ data structures.
public enum AdvertisingData {
    public static let flags: UInt8 = 0x01
    public static let completeList16: UInt8 = 0x03
    public static let shortName: UInt8 = 0x08
    public static let completeName: UInt8 = 0x09
    public static let serviceData16: UInt8 = 0x16

    public static func structure(_ type: UInt8, _ data: [UInt8]) -> [UInt8] { [UInt8(data.count + 1), type] + data }

    /// Splits AD structures; stops at a zero length or a truncated one.
    public static func parse(_ bytes: [UInt8]) -> [(type: UInt8, data: [UInt8])] {
        var out = [(type: UInt8, data: [UInt8])]()
        var i = 0
        while i < bytes.count {
            let len = Int(bytes[i])
            guard len > 0, i + 1 + len <= bytes.count else { break }
            out.append((bytes[i + 1], Array(bytes[(i + 2)..<(i + 1 + len)])))
            i += 1 + len
        }
        return out
    }

    /// Service data for a 16-bit UUID in `bytes`, if present.
    public static func serviceData(_ uuid: UInt16, in bytes: [UInt8]) -> [UInt8]? {
        for s in parse(bytes) where s.type == serviceData16 && s.data.count >= 2 {
            if UInt16(s.data[0]) | UInt16(s.data[1]) << 8 == uuid { return Array(s.data.dropFirst(2)) }
        }
        return nil
    }
}
