import ByteCore

/// LE signaling channel commands (Core Vol 3 Part A §4), each declared once:
/// Code (1) ‖ Identifier (1) ‖ Length (2) ‖ data.
public enum SignalingCommand: Equatable, Sendable {
    /// §4.1 Command Reject 0x01: Reason (2) ‖ data.
    case commandReject(id: UInt8, reason: UInt16, data: [UInt8])
    /// §4.6 Disconnection Request 0x06: Destination CID (2), Source CID (2).
    case disconnectionRequest(id: UInt8, destinationCID: UInt16, sourceCID: UInt16)
    /// §4.7 Disconnection Response 0x07.
    case disconnectionResponse(id: UInt8, destinationCID: UInt16, sourceCID: UInt16)
    /// §4.20 Connection Parameter Update Request 0x12: Interval Min, Max, Latency, Timeout (2 each).
    case connectionParameterUpdateRequest(id: UInt8, intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16)
    /// §4.21 Connection Parameter Update Response 0x13: Result (2): 0 accepted, 1 rejected.
    case connectionParameterUpdateResponse(id: UInt8, result: UInt16)
    /// §4.22 LE Credit Based Connection Request 0x14: SPSM, Source CID, MTU, MPS, Initial Credits (2 each).
    case leCreditConnectionRequest(id: UInt8, spsm: UInt16, sourceCID: UInt16, mtu: UInt16, mps: UInt16, credits: UInt16)
    /// §4.23 LE Credit Based Connection Response 0x15: Destination CID, MTU, MPS, Initial Credits, Result.
    case leCreditConnectionResponse(id: UInt8, destinationCID: UInt16, mtu: UInt16, mps: UInt16, credits: UInt16, result: UInt16)
    /// §4.24 Flag Control Credit Indication 0x16: CID (2), Credits (2).
    case flowControlCredit(id: UInt8, cid: UInt16, credits: UInt16)
    /// Any other code, well framed.
    case unknown(code: UInt8, id: UInt8, data: [UInt8])

    public enum Code {
        public static let commandReject: UInt8 = 0x01
        public static let disconnectionRequest: UInt8 = 0x06
        public static let disconnectionResponse: UInt8 = 0x07
        public static let connectionParameterUpdateRequest: UInt8 = 0x12
        public static let connectionParameterUpdateResponse: UInt8 = 0x13
        public static let leCreditConnectionRequest: UInt8 = 0x14
        public static let leCreditConnectionResponse: UInt8 = 0x15
        public static let flowControlCredit: UInt8 = 0x16
    }

    /// LE credit-based connection results (§4.23).
    public enum Result {
        public static let success: UInt16 = 0x0000
        public static let psmNotSupported: UInt16 = 0x0002
        public static let noResources: UInt16 = 0x0004
        public static let insufficientAuthorization: UInt16 = 0x0006
        public static let invalidSourceCID: UInt16 = 0x0009
        public static let sourceCIDInUse: UInt16 = 0x000A
        public static let unacceptableParameters: UInt16 = 0x000B
    }

    public var identifier: UInt8 {
        switch self {
        case .commandReject(let id, _, _), .disconnectionRequest(let id, _, _), .disconnectionResponse(let id, _, _),
             .connectionParameterUpdateRequest(let id, _, _, _, _), .connectionParameterUpdateResponse(let id, _),
             .leCreditConnectionRequest(let id, _, _, _, _, _), .leCreditConnectionResponse(let id, _, _, _, _, _),
             .flowControlCredit(let id, _, _), .unknown(_, let id, _):
            return id
        }
    }

    public func encoded() -> [UInt8] {
        var d = [UInt8]()
        let code: UInt8
        switch self {
        case .commandReject(_, let reason, let data): code = Code.commandReject; d.appendUInt16LE(reason); d += data
        case .disconnectionRequest(_, let dc, let sc): code = Code.disconnectionRequest; d.appendUInt16LE(dc); d.appendUInt16LE(sc)
        case .disconnectionResponse(_, let dc, let sc): code = Code.disconnectionResponse; d.appendUInt16LE(dc); d.appendUInt16LE(sc)
        case .connectionParameterUpdateRequest(_, let mn, let mx, let l, let t):
            code = Code.connectionParameterUpdateRequest; d.appendUInt16LE(mn); d.appendUInt16LE(mx); d.appendUInt16LE(l); d.appendUInt16LE(t)
        case .connectionParameterUpdateResponse(_, let r): code = Code.connectionParameterUpdateResponse; d.appendUInt16LE(r)
        case .leCreditConnectionRequest(_, let psm, let sc, let mtu, let mps, let cr):
            code = Code.leCreditConnectionRequest; d.appendUInt16LE(psm); d.appendUInt16LE(sc); d.appendUInt16LE(mtu); d.appendUInt16LE(mps); d.appendUInt16LE(cr)
        case .leCreditConnectionResponse(_, let dc, let mtu, let mps, let cr, let r):
            code = Code.leCreditConnectionResponse; d.appendUInt16LE(dc); d.appendUInt16LE(mtu); d.appendUInt16LE(mps); d.appendUInt16LE(cr); d.appendUInt16LE(r)
        case .flowControlCredit(_, let cid, let cr): code = Code.flowControlCredit; d.appendUInt16LE(cid); d.appendUInt16LE(cr)
        case .unknown(let c, _, let data): code = c; d = data
        }
        var out: [UInt8] = [code, identifier]
        out.appendUInt16LE(UInt16(d.count))
        return out + d
    }

    /// Decodes one command from the front of `reader` (a signaling frame may carry several).
    static func decode(_ r: inout ByteReader) throws(BLEError) -> SignalingCommand {
        guard let code = r.readUInt8(), let id = r.readUInt8(), let len = r.readUInt16LE(), let data = r.readArray(Int(len)) else {
            throw BLEError(.malformedPacket, "L2CAP signaling: truncated command")
        }
        var d = ByteReader(data)
        func u16() -> UInt16? { d.readUInt16LE() }
        let known: SignalingCommand?
        switch code {
        case Code.commandReject:
            known = u16().map { .commandReject(id: id, reason: $0, data: Array(d.readRest())) }
        case Code.disconnectionRequest:
            if let a = u16(), let b = u16(), d.isAtEnd { known = .disconnectionRequest(id: id, destinationCID: a, sourceCID: b) } else { known = nil }
        case Code.disconnectionResponse:
            if let a = u16(), let b = u16(), d.isAtEnd { known = .disconnectionResponse(id: id, destinationCID: a, sourceCID: b) } else { known = nil }
        case Code.connectionParameterUpdateRequest:
            if let a = u16(), let b = u16(), let c = u16(), let e = u16(), d.isAtEnd {
                known = .connectionParameterUpdateRequest(id: id, intervalMin: a, intervalMax: b, latency: c, timeout: e)
            } else { known = nil }
        case Code.connectionParameterUpdateResponse:
            if let a = u16(), d.isAtEnd { known = .connectionParameterUpdateResponse(id: id, result: a) } else { known = nil }
        case Code.leCreditConnectionRequest:
            if let a = u16(), let b = u16(), let c = u16(), let e = u16(), let f = u16(), d.isAtEnd {
                known = .leCreditConnectionRequest(id: id, spsm: a, sourceCID: b, mtu: c, mps: e, credits: f)
            } else { known = nil }
        case Code.leCreditConnectionResponse:
            if let a = u16(), let b = u16(), let c = u16(), let e = u16(), let f = u16(), d.isAtEnd {
                known = .leCreditConnectionResponse(id: id, destinationCID: a, mtu: b, mps: c, credits: e, result: f)
            } else { known = nil }
        case Code.flowControlCredit:
            if let a = u16(), let b = u16(), d.isAtEnd { known = .flowControlCredit(id: id, cid: a, credits: b) } else { known = nil }
        default:
            known = nil
        }
        return known ?? .unknown(code: code, id: id, data: data)
    }

    /// All commands in one signaling frame.
    public static func decodeAll(_ payload: [UInt8]) throws(BLEError) -> [SignalingCommand] {
        var r = ByteReader(payload)
        var out = [SignalingCommand]()
        while !r.isAtEnd { out.append(try decode(&r)) }
        return out
    }
}

/// SMP (Core Vol 3 Part H): the lock does not pair — its security is in the access protocol —
/// so every pairing request is refused with Pairing Failed (0x05), reason 0x05 "Pairing Not
/// Supported" (Zephyr's `smp_null.c`).
public enum PairingRefusal {
    public static let pairingFailed: UInt8 = 0x05
    public static let pairingNotSupported: UInt8 = 0x05

    /// The reply to an SMP PDU, or nil when it needs none (a Pairing Failed from the peer).
    public static func reply(to pdu: [UInt8]) -> [UInt8]? {
        guard let code = pdu.first, code != pairingFailed else { return nil }
        return [pairingFailed, pairingNotSupported]
    }
}
