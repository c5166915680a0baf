import ByteCore
import Foundation

/// One LE connection: L2CAP fixed channels (ATT, LE signaling, SMP refused), its credit-based
/// channels, the ATT server for this peer and the ATT client bearer. Methods called by the
/// host's reader thread run with the host's `cond` held.
///
/// Safe because its mutable state is part of the host's monitor: read and
/// written only with `host.cond` held, like `BLEHost`'s own.
public final class BLEConnection: @unchecked Sendable {
    let host: BLEHost
    public let handle: UInt16
    /// 0 central, 1 peripheral (our role).
    public let role: UInt8
    public let peer: BLEAddress
    public internal(set) var interval: UInt16
    public let connectedAt: Date
    var reassembler = L2CAPReassembler()
    var attServer: ATTServer

    /// What this connection's client last wrote to `handle` (other clients' writes aside).
    public func writtenValue(_ handle: UInt16) -> [UInt8]? {
        host.cond.lock(); defer { host.cond.unlock() }
        return attServer.written[handle]
    }
    public private(set) var isOpen = true
    public private(set) var disconnectReason: UInt8?
    /// The result of the last LE credit-based connection response that refused `openChannel`.
    public private(set) var lastChannelRefusal: UInt16?
    /// Set when the host's idle rules disconnect this link (so it is dropped once).
    var isBeingDropped = false
    /// Since when the link has had no credit-based channel open (nil while one is).
    private var channelFreeSince: Date?

    private var channels: [UInt16: L2CAPChannel] = [:]
    private var nextCID = L2CAPChannelID.firstDynamic
    private var nextSignalingID: UInt8 = 1
    private var signalingReplies: [UInt8: SignalingCommand] = [:]
    /// Credit-based connection requests we sent, by signaling id: the channel is created by the
    /// reader when the response arrives, so K-frames that follow it at once are not lost.
    private var pendingOpens: [UInt8: (cid: UInt16, psm: UInt16, mtu: UInt16, mps: UInt16, credits: UInt16)] = [:]
    private var openedChannels: [UInt8: L2CAPChannel] = [:]
    private var attResponse: [UInt8]?
    private var attRequestOutstanding = false
    /// Notifications and indications received as a client: (handle, value).
    public private(set) var notifications: [(handle: UInt16, value: [UInt8])] = []
    /// SMP PDUs the peer sent (the host refuses pairing).
    private(set) var smpReceived: [[UInt8]] = []
    /// ATT_MTU negotiated by our client.
    public private(set) var clientMTU = 23

    init(host: BLEHost, complete: LEConnectionComplete) {
        self.host = host
        self.handle = complete.handle
        self.role = complete.role
        self.peer = complete.peer
        self.interval = complete.interval
        self.connectedAt = Date()
        self.channelFreeSince = connectedAt
        self.attServer = ATTServer(database: host.database)
    }

    /// Open credit-based channels (cond held).
    var openChannels: [L2CAPChannel] { channels.values.filter(\.isOpen) }

    /// Cond held: since when no credit-based channel has been open, or nil while one is.
    func idleSince(now: Date) -> Date? {
        if openChannels.isEmpty {
            if channelFreeSince == nil { channelFreeSince = now }
        } else {
            channelFreeSince = nil
        }
        return channelFreeSince
    }

    // MARK: inbound (cond held)

    func received(_ frame: L2CAPFrame) {
        switch frame.cid {
        case L2CAPChannelID.att: receivedATT(frame.payload)
        case L2CAPChannelID.leSignaling: receivedSignaling(frame.payload)
        case L2CAPChannelID.smp:
            smpReceived.append(frame.payload)
            if let reply = PairingRefusal.reply(to: frame.payload) {
                host.sendFrame(L2CAPFrame(cid: L2CAPChannelID.smp, payload: reply), handle: handle)
            }
        default:
            if let ch = channels[frame.cid] {
                ch.receivedKFrame(frame.payload)
            } else {
                host.configuration.log("BLE: frame for unknown CID 0x\(String(frame.cid, radix: 16))")
            }
        }
    }

    private func receivedATT(_ pdu: [UInt8]) {
        guard let op = pdu.first else { return }
        switch op {
        case ATTOpcode.handleValueNotification, ATTOpcode.handleValueIndication:
            if pdu.count >= 3 {
                notifications.append((UInt16(pdu[1]) | UInt16(pdu[2]) << 8, Array(pdu[3...])))
            }
            if op == ATTOpcode.handleValueIndication {
                host.sendFrame(L2CAPFrame(cid: L2CAPChannelID.att, payload: [ATTOpcode.handleValueConfirmation]), handle: handle)
            }
        case ATTOpcode.errorResponse, ATTOpcode.exchangeMTUResponse, ATTOpcode.findInformationResponse,
             ATTOpcode.findByTypeValueResponse, ATTOpcode.readByTypeResponse, ATTOpcode.readResponse, ATTOpcode.readBlobResponse,
             ATTOpcode.readByGroupTypeResponse, ATTOpcode.writeResponse, ATTOpcode.prepareWriteResponse, ATTOpcode.executeWriteResponse:
            attResponse = pdu
        default:
            if let reply = attServer.handle(pdu) {
                host.sendFrame(L2CAPFrame(cid: L2CAPChannelID.att, payload: reply), handle: handle)
            }
        }
    }

    private func signal(_ command: SignalingCommand) {
        host.sendFrame(L2CAPFrame(cid: L2CAPChannelID.leSignaling, payload: command.encoded()), handle: handle)
    }

    private func receivedSignaling(_ payload: [UInt8]) {
        let commands: [SignalingCommand]
        do {
            commands = try SignalingCommand.decodeAll(payload)
        } catch {
            signal(.commandReject(id: payload.count > 1 ? payload[1] : 0, reason: 0x0000, data: []))
            return
        }
        for c in commands { receivedSignaling(c) }
    }

    private func receivedSignaling(_ command: SignalingCommand) {
        switch command {
        case .connectionParameterUpdateRequest(let id, let mn, let mx, let lat, let to):
            if role == 0 {
                signal(.connectionParameterUpdateResponse(id: id, result: 0))
                host.submit(.leConnectionUpdate(handle: handle, intervalMin: mn, intervalMax: mx, latency: lat, timeout: to))
            } else {
                // Only a central takes this request (§4.20); a peripheral rejects it.
                signal(.commandReject(id: id, reason: 0x0000, data: []))
            }
        case .leCreditConnectionRequest(let id, let psm, let scid, let mtu, let mps, let credits):
            acceptChannel(id: id, psm: psm, remoteCID: scid, mtu: mtu, mps: mps, credits: credits)
        case .flowControlCredit(_, let cid, let credits):
            if let ch = channels.values.first(where: { $0.state.remoteCID == cid }) { ch.addCredits(Int(credits)) }
        case .disconnectionRequest(let id, let dcid, let scid):
            if let ch = channels.removeValue(forKey: dcid) { ch.closedByPeer() }
            signal(.disconnectionResponse(id: id, destinationCID: dcid, sourceCID: scid))
        case .leCreditConnectionResponse(let id, let dcid, let rmtu, let rmps, let rcredits, let result):
            if result == 0, let p = pendingOpens[id] {
                let state = CreditChannelState(localCID: p.cid, remoteCID: dcid, localMTU: p.mtu, localMPS: p.mps, initialReceiveCredits: Int(p.credits),
                                               remoteMTU: rmtu, remoteMPS: rmps, initialSendCredits: Int(rcredits))
                let ch = L2CAPChannel(connection: self, psm: p.psm, state: state)
                channels[p.cid] = ch
                openedChannels[id] = ch
            }
            signalingReplies[id] = command
        case .disconnectionResponse(let id, _, _), .connectionParameterUpdateResponse(let id, _), .commandReject(let id, _, _):
            signalingReplies[id] = command
        case .unknown(let code, let id, _):
            host.configuration.log("BLE: rejecting unknown L2CAP signaling code 0x\(Hex.encode([code]))")
            signal(.commandReject(id: id, reason: 0x0000, data: []))
        }
    }

    private func allocateCID() -> UInt16? {
        for _ in 0..<0x40 {
            let cid = nextCID
            nextCID = nextCID >= 0x007F ? L2CAPChannelID.firstDynamic : nextCID + 1
            if channels[cid] == nil && !pendingOpens.values.contains(where: { $0.cid == cid }) { return cid }
        }
        return nil
    }

    private func acceptChannel(id: UInt8, psm: UInt16, remoteCID: UInt16, mtu: UInt16, mps: UInt16, credits: UInt16) {
        guard let server = host.server(for: psm) else {
            signal(.leCreditConnectionResponse(id: id, destinationCID: 0, mtu: 0, mps: 0, credits: 0, result: SignalingCommand.Result.psmNotSupported))
            return
        }
        guard remoteCID >= L2CAPChannelID.firstDynamic, remoteCID <= 0x007F else {
            signal(.leCreditConnectionResponse(id: id, destinationCID: 0, mtu: 0, mps: 0, credits: 0, result: SignalingCommand.Result.invalidSourceCID))
            return
        }
        guard !channels.values.contains(where: { $0.state.remoteCID == remoteCID }) else {
            signal(.leCreditConnectionResponse(id: id, destinationCID: 0, mtu: 0, mps: 0, credits: 0, result: SignalingCommand.Result.sourceCIDInUse))
            return
        }
        if let refusal = server.admit(self) {
            signal(.leCreditConnectionResponse(id: id, destinationCID: 0, mtu: 0, mps: 0, credits: 0, result: refusal))
            return
        }
        guard mtu >= 23, mps >= 23, let cid = allocateCID() else {
            signal(.leCreditConnectionResponse(id: id, destinationCID: 0, mtu: 0, mps: 0, credits: 0,
                                               result: mtu < 23 || mps < 23 ? SignalingCommand.Result.unacceptableParameters : SignalingCommand.Result.noResources))
            return
        }
        let state = CreditChannelState(localCID: cid, remoteCID: remoteCID, localMTU: server.mtu, localMPS: server.mps,
                                       initialReceiveCredits: Int(server.credits), remoteMTU: mtu, remoteMPS: mps, initialSendCredits: Int(credits))
        let channel = L2CAPChannel(connection: self, psm: psm, state: state)
        channels[cid] = channel
        signal(.leCreditConnectionResponse(id: id, destinationCID: cid, mtu: server.mtu, mps: server.mps, credits: server.credits,
                                           result: SignalingCommand.Result.success))
        let accept = server.accept
        let t = Thread { accept(channel) }
        t.name = "ble-channel-\(psm)"
        t.start()
    }

    func closed(reason: UInt8) {
        isOpen = false
        disconnectReason = reason
        for ch in channels.values { ch.closedByPeer() }
        channels = [:]
        attResponse = nil
    }

    // MARK: sending from channels (cond held)

    func send(_ frames: [L2CAPFrame]) {
        guard isOpen else { return }
        for f in frames { host.sendFrame(f, handle: handle) }
    }

    func grantCredits(_ n: Int, to channel: L2CAPChannel) {
        guard n > 0 else { return }
        signal(.flowControlCredit(id: takeSignalingID(), cid: channel.state.localCID, credits: UInt16(n)))
    }

    func closeChannel(_ channel: L2CAPChannel) {
        guard channels.removeValue(forKey: channel.state.localCID) != nil, isOpen else { return }
        signal(.disconnectionRequest(id: takeSignalingID(), destinationCID: channel.state.remoteCID, sourceCID: channel.state.localCID))
    }

    private func takeSignalingID() -> UInt8 {
        let id = nextSignalingID
        nextSignalingID = nextSignalingID == 0xFF ? 1 : nextSignalingID + 1
        return id
    }

    // MARK: public API (callers' threads)

    /// Disconnects (reason 0x13, remote user terminated).
    public func disconnect(reason: UInt8 = 0x13) {
        host.submitCommand(.disconnect(handle: handle, reason: reason))
    }

    /// Waits until the link is gone.
    @discardableResult
    public func waitUntilDisconnected(timeout: TimeInterval) -> Bool {
        host.wait(timeout: timeout) { !self.isOpen }
    }

    /// Opens an LE credit-based channel to the peer's `psm` (as the phone does).
    public func openChannel(psm: UInt16, mtu: UInt16 = 1024, mps: UInt16 = 247, credits: UInt16 = 8, timeout: TimeInterval = 5) throws(BLEError) -> L2CAPChannel {
        host.cond.lock()
        guard isOpen, let cid = allocateCID() else {
            host.cond.unlock()
            throw BLEError(.channelClosed, "L2CAP: the link is down")
        }
        let id = takeSignalingID()
        signalingReplies[id] = nil
        pendingOpens[id] = (cid, psm, mtu, mps, credits)
        signal(.leCreditConnectionRequest(id: id, spsm: psm, sourceCID: cid, mtu: mtu, mps: mps, credits: credits))
        host.cond.unlock()
        var reply: SignalingCommand?
        _ = host.wait(timeout: timeout) {
            reply = self.signalingReplies.removeValue(forKey: id)
            return reply != nil || !self.isOpen
        }
        host.cond.lock()
        defer { host.cond.unlock() }
        pendingOpens[id] = nil
        let opened = openedChannels.removeValue(forKey: id)
        switch reply {
        case .leCreditConnectionResponse(_, _, _, _, _, let result)?:
            guard result == 0, let opened else {
                lastChannelRefusal = result
                throw BLEError(.channelRefused, "L2CAP: the peer refused PSM 0x\(String(psm, radix: 16)) (result 0x\(String(result, radix: 16)))")
            }
            return opened
        case .commandReject?:
            throw BLEError(.channelRefused, "L2CAP: the peer rejected the credit-based connection request")
        default:
            throw BLEError(isOpen ? .timeout : .channelClosed, "L2CAP: no answer to the credit-based connection request")
        }
    }

    /// Sends a signaling request and waits for the reply with its identifier (tests and tools).
    func signalingRequest(_ make: (UInt8) -> SignalingCommand, timeout: TimeInterval = 5) -> SignalingCommand? {
        host.cond.lock()
        let id = takeSignalingID()
        signalingReplies[id] = nil
        signal(make(id))
        host.cond.unlock()
        var reply: SignalingCommand?
        _ = host.wait(timeout: timeout) {
            reply = self.signalingReplies.removeValue(forKey: id)
            return reply != nil || !self.isOpen
        }
        return reply
    }

    /// Sends a raw L2CAP frame on a fixed channel (tests and tools).
    func sendFixed(cid: UInt16, _ payload: [UInt8]) {
        host.cond.lock()
        host.sendFrame(L2CAPFrame(cid: cid, payload: payload), handle: handle)
        host.cond.unlock()
    }

    /// Sends one ATT request and waits for its response (or an error response).
    func attRequest(_ pdu: [UInt8], timeout: TimeInterval = 5) throws(BLEError) -> [UInt8] {
        host.cond.lock()
        guard isOpen else { host.cond.unlock(); throw BLEError(.channelClosed, "ATT: the link is down") }
        attResponse = nil
        host.sendFrame(L2CAPFrame(cid: L2CAPChannelID.att, payload: pdu), handle: handle)
        host.cond.unlock()
        var response: [UInt8]?
        _ = host.wait(timeout: timeout) {
            response = self.attResponse
            return response != nil || !self.isOpen
        }
        host.cond.lock()
        attResponse = nil
        host.cond.unlock()
        guard let response else { throw BLEError(isOpen ? .timeout : .channelClosed, "ATT: no response to opcode 0x\(Hex.encode([pdu[0]]))") }
        return response
    }

    func setClientMTU(_ mtu: Int) { clientMTU = mtu }

    /// Sends an ATT PDU without waiting (commands, notifications).
    public func sendATT(_ pdu: [UInt8]) {
        host.cond.lock()
        host.sendFrame(L2CAPFrame(cid: L2CAPChannelID.att, payload: pdu), handle: handle)
        host.cond.unlock()
    }
}

/// An LE credit-based connection-oriented channel (Core Vol 3 Part A §10.2): whole SDUs in and
/// out; segmentation, reassembly and credits are handled underneath.
///
/// Safe because its mutable state is part of the host's monitor: read and
/// written only with `connection.host.cond` held.
public final class L2CAPChannel: @unchecked Sendable {
    let connection: BLEConnection
    public let psm: UInt16
    var state: CreditChannelState
    private var inbox: [[UInt8]] = []
    public private(set) var isOpen = true
    /// When an SDU segment last went either way (cond held): the host's channel idle rule.
    var lastTraffic = Date()

    init(connection: BLEConnection, psm: UInt16, state: CreditChannelState) {
        self.connection = connection
        self.psm = psm
        self.state = state
    }

    private var cond: NSCondition { connection.host.cond }

    /// Largest SDU the peer accepts.
    public var peerMTU: Int { Int(state.remoteMTU) }
    public var peer: BLEAddress { connection.peer }
    public var connectionHandle: UInt16 { connection.handle }

    // cond held:
    func receivedKFrame(_ payload: [UInt8]) {
        lastTraffic = Date()
        do {
            let (sdu, grant) = try state.receive(payload)
            if let sdu { inbox.append(sdu) }
            connection.grantCredits(grant, to: self)
        } catch {
            connection.host.configuration.log("BLE: \(error.reason); closing the channel")
            connection.closeChannel(self)
            isOpen = false
        }
    }

    func addCredits(_ n: Int) { connection.send(state.addSendCredits(n)) }

    func closedByPeer() { isOpen = false }

    /// Queues one SDU (sent as credits allow).
    public func send(_ sdu: [UInt8]) throws(BLEError) {
        cond.lock()
        defer { cond.unlock() }
        guard isOpen, connection.isOpen else { throw BLEError(.channelClosed, "L2CAP channel 0x\(String(state.localCID, radix: 16)) is closed") }
        lastTraffic = Date()
        connection.send(try state.send(sdu))
    }

    /// Waits for the next SDU.
    public func receive(timeout: TimeInterval) throws(BLEError) -> [UInt8] {
        var sdu: [UInt8]?
        _ = connection.host.wait(timeout: timeout) {
            if !self.inbox.isEmpty { sdu = self.inbox.removeFirst() }
            return sdu != nil || !self.isOpen || !self.connection.isOpen
        }
        if let sdu { return sdu }
        cond.lock()
        let open = isOpen && connection.isOpen
        cond.unlock()
        throw open ? BLEError(.timeout, "L2CAP channel: nothing received within \(timeout) s")
                   : BLEError(.channelClosed, "L2CAP channel closed")
    }

    /// Closes the channel (L2CAP Disconnection Request).
    public func close() {
        cond.lock()
        defer { cond.unlock() }
        guard isOpen else { return }
        isOpen = false
        connection.closeChannel(self)
        cond.broadcast()
    }

    /// The link under this channel.
    public var link: BLEConnection { connection }
}
