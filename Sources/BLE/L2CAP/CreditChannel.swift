import ByteCore

/// The pure state of one LE credit-based connection-oriented channel (Core Vol 3 Part A §3.4,
/// §10.2): SDU segmentation into K-frames within the peer's MPS and credits, and reassembly of
/// incoming K-frames into SDUs with credits returned. No I/O: callers send the frames it returns.
public struct CreditChannelState {
    public let localCID: UInt16
    public let remoteCID: UInt16
    /// What we receive: our MTU (largest SDU) and MPS (largest K-frame payload).
    public let localMTU: UInt16
    public let localMPS: UInt16
    /// What we send: the peer's MTU and MPS.
    public let remoteMTU: UInt16
    public let remoteMPS: UInt16
    /// K-frames we may still send.
    public private(set) var sendCredits: Int
    /// K-frames the peer may still send us.
    public private(set) var receiveCredits: Int
    /// Credits we hand out at a time.
    public let creditBatch: Int

    private var pending: [[UInt8]] = []
    private var incoming: [UInt8] = []
    private var incomingExpected: Int? = nil

    public init(localCID: UInt16, remoteCID: UInt16, localMTU: UInt16, localMPS: UInt16, initialReceiveCredits: Int,
                remoteMTU: UInt16, remoteMPS: UInt16, initialSendCredits: Int) {
        self.localCID = localCID
        self.remoteCID = remoteCID
        self.localMTU = localMTU
        self.localMPS = localMPS
        self.remoteMTU = remoteMTU
        self.remoteMPS = remoteMPS
        self.sendCredits = initialSendCredits
        self.receiveCredits = initialReceiveCredits
        self.creditBatch = initialReceiveCredits
    }

    /// Segments one SDU and returns the K-frames (as L2CAP frames on the peer's CID) that may be
    /// sent now; the rest wait for credits.
    public mutating func send(_ sdu: [UInt8]) throws(BLEError) -> [L2CAPFrame] {
        guard sdu.count <= Int(remoteMTU) else {
            throw BLEError(.malformedPacket, "L2CAP CoC: SDU of \(sdu.count) bytes exceeds the peer's MTU \(remoteMTU)")
        }
        let mps = max(3, Int(remoteMPS))
        var first: [UInt8] = []
        first.appendUInt16LE(UInt16(sdu.count))
        var i = min(sdu.count, mps - 2)
        pending.append(first + sdu[0..<i])
        while i < sdu.count {
            let end = min(sdu.count, i + mps)
            pending.append(Array(sdu[i..<end]))
            i = end
        }
        return drain()
    }

    /// Frames released by credits just granted by the peer.
    public mutating func addSendCredits(_ n: Int) -> [L2CAPFrame] {
        sendCredits = min(sendCredits + n, 65535)
        return drain()
    }

    public var hasPendingFrames: Bool { !pending.isEmpty }

    private mutating func drain() -> [L2CAPFrame] {
        var out = [L2CAPFrame]()
        while sendCredits > 0, !pending.isEmpty {
            out.append(L2CAPFrame(cid: remoteCID, payload: pending.removeFirst()))
            sendCredits -= 1
        }
        return out
    }

    /// Feeds one received K-frame payload; returns a completed SDU (if any) and the credits to
    /// give back to the peer (0 = none now).
    public mutating func receive(_ kframe: [UInt8]) throws(BLEError) -> (sdu: [UInt8]?, creditsToGrant: Int) {
        guard receiveCredits > 0 else {
            throw BLEError(.malformedPacket, "L2CAP CoC 0x\(String(localCID, radix: 16)): K-frame received without credits")
        }
        guard kframe.count <= Int(localMPS) + (incomingExpected == nil ? 0 : 0) || kframe.count <= Int(localMPS) else {
            throw BLEError(.malformedPacket, "L2CAP CoC: K-frame of \(kframe.count) bytes exceeds our MPS \(localMPS)")
        }
        receiveCredits -= 1
        var sdu: [UInt8]? = nil
        if let expected = incomingExpected {
            incoming += kframe
            if incoming.count >= expected {
                sdu = Array(incoming.prefix(expected))
                incoming = []
                incomingExpected = nil
            }
        } else {
            guard kframe.count >= 2 else { throw BLEError(.malformedPacket, "L2CAP CoC: first K-frame without SDU length") }
            let length = Int(kframe[0]) | Int(kframe[1]) << 8
            guard length <= Int(localMTU) else {
                throw BLEError(.malformedPacket, "L2CAP CoC: SDU length \(length) exceeds our MTU \(localMTU)")
            }
            incoming = Array(kframe.dropFirst(2))
            if incoming.count >= length {
                sdu = Array(incoming.prefix(length))
                incoming = []
            } else {
                incomingExpected = length
            }
        }
        // Top the peer back up once half of the batch is used.
        var grant = 0
        if receiveCredits <= creditBatch / 2 {
            grant = creditBatch - receiveCredits
            receiveCredits = creditBatch
        }
        return (sdu, grant)
    }
}
