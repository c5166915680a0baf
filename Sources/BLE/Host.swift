import ByteCore
import Foundation

/// Log sink for the BLE layer: unknown events, failed commands, connections.
public typealias BLELogger = @Sendable (String) -> Void

/// A small LE host over one HCI transport (Bumble `host.py` + `device.py`, Zephyr `hci_core.c`,
/// `conn.c`, `l2cap.c`, `att.c` in miniature): command flow control with timeouts, ACL flow
/// control and fragmentation, L2CAP fixed channels and credit-based channels, an ATT server per
/// connection and an ATT client bearer. It reconnects the transport with backoff when the
/// controller goes away.
///
/// All state is guarded by one condition (`cond`); the reader thread decodes and handles
/// packets under it, callers wait on it. User callbacks run on their own threads.
///
/// Safe because it is a monitor around the HCI transport (a socket or
/// UART descriptor read by a thread of its own): every mutable property, its connections' and
/// their channels' are read and written with `cond` held; the hooks are set before `start`.
public final class BLEHost: @unchecked Sendable {
    public struct Configuration {
        /// Opens the transport (again after a loss).
        public var open: () throws(BLEError) -> HCITransport
        /// Seed for the static random address used when the controller's BD_ADDR is zero.
        public var addressSeed: UInt64
        /// A static random address to use whatever the controller's BD_ADDR (LE_Set_Random_Address,
        /// own address type random); nil = the public address, or the seeded one when it is zero.
        public var staticAddress: BLEAddress?
        /// Peripheral role: a link that has no L2CAP credit-based channel open for this long is
        /// disconnected (a GATT browser or a crashed app would otherwise hold it); nil = never.
        public var linkIdleTimeout: TimeInterval?
        /// Peripheral role: a credit-based channel with nothing sent or received for this long is
        /// closed and its link disconnected; nil = never.
        public var channelIdleTimeout: TimeInterval?
        /// Attribute table served to every connection.
        public var services: [ServiceDefinition]
        public var log: BLELogger
        public var commandTimeout: TimeInterval = 2.0
        /// Reconnect delays: first, then doubling up to max.
        public var reconnectInitialDelay: TimeInterval = 0.1
        public var reconnectMaxDelay: TimeInterval = 2.0

        public init(open: @escaping () throws(BLEError) -> HCITransport, addressSeed: UInt64, services: [ServiceDefinition], log: @escaping BLELogger) {
            self.open = open
            self.addressSeed = addressSeed
            self.services = services
            self.log = log
        }
    }

    public let configuration: Configuration
    public let database: GATTDatabase
    let cond = NSCondition()
    private var log: BLELogger { configuration.log }

    // Session state (reset per transport session).
    private var transport: HCITransport?
    private var generation = 0
    public private(set) var isReady = false
    /// Why the transport last failed to open (nil once a session starts).
    public private(set) var lastOpenError: BLEError?
    private var stopped = false
    /// Own address type for advertising/scanning/connecting: 0 public, 1 random.
    public private(set) var ownAddress = BLEAddress(type: 0, bytes: [UInt8](repeating: 0, count: 6))

    // Commands.
    private struct PendingCommand {
        var command: HCICommand
        var sentAt: Date?
        var completion: ((CommandOutcome) -> Void)?
    }
    enum CommandOutcome { case complete([UInt8]), status(UInt8), timeout, transportLost }
    private var commandCredits = 1
    private var commandQueue: [PendingCommand] = []
    private var commandsInFlight: [PendingCommand] = []

    // ACL.
    private(set) var aclMaxLength = 27
    private var aclCredits = 1
    private var aclQueue: [ACLPacket] = []
    private var aclInFlight: [UInt16: Int] = [:]

    // Connections and channels.
    private(set) var connections: [UInt16: BLEConnection] = [:]
    private var psmServers: [UInt16: PSMServer] = [:]

    /// A PSM the host listens on. `admit` answers each request with nil (accept) or the LE
    /// credit-based connection result that refuses it (Core Vol 3 Part A §4.23).
    struct PSMServer {
        var mtu: UInt16, mps: UInt16, credits: UInt16
        var admit: (BLEConnection) -> UInt16?
        var accept: @Sendable (L2CAPChannel) -> Void
    }
    private(set) var advertisingReports: [AdvertisingReport] = []
    private var lastConnectionComplete: LEConnectionComplete?

    /// Hooks for the role on top (lock or phone); called on the reader or supervisor thread with
    /// `cond` held — they may only submit commands (`submit`) and must not block.
    var onReady: (() -> Void)?
    var onConnected: ((BLEConnection) -> Void)?
    var onDisconnected: ((BLEConnection, UInt8) -> Void)?
    var onTransportLost: (() -> Void)?
    /// A link dropped by the idle rules: (connection, why). Same rules as the hooks above.
    var onIdleDrop: ((BLEConnection, String) -> Void)?
    /// Every timer tick (about 10 per second) while running.
    var onTick: (() -> Void)?

    private var supervisor: Thread?
    private var ticker: Thread?

    public init(configuration: Configuration) {
        self.configuration = configuration
        self.database = GATTDatabase(services: configuration.services)
    }

    // MARK: lifecycle

    /// Starts the supervisor: open, initialise, run; on loss, back off and start again.
    public func start() {
        cond.lock()
        stopped = false
        cond.unlock()
        let s = Thread { [weak self] in self?.supervise() }
        s.name = "ble-host"
        s.start()
        supervisor = s
        let t = Thread { [weak self] in
            while let self, !self.isStopped {
                Thread.sleep(forTimeInterval: 0.1)
                self.tick()
            }
        }
        t.name = "ble-host-timer"
        t.start()
        ticker = t
    }

    var isStopped: Bool { cond.lock(); defer { cond.unlock() }; return stopped }

    /// Stops: closes the transport; the supervisor exits.
    public func stop() {
        cond.lock()
        stopped = true
        let t = transport
        cond.broadcast()
        cond.unlock()
        t?.close()
    }

    /// Waits until the controller is initialised (or `timeout`, or an open failure that retrying
    /// cannot fix: no Bluetooth in the kernel, no permission, no such device).
    @discardableResult
    public func waitUntilReady(timeout: TimeInterval) -> Bool {
        wait(timeout: timeout) { self.isReady || self.lastOpenError.map(BLEHost.isPermanent) == true }
    }

    static func isPermanent(_ e: BLEError) -> Bool {
        [.bluetoothUnsupported, .permissionDenied, .noSuchDevice, .badTransportSpec, .adapterBusy].contains(e.code)
    }

    /// Why the host is not ready: the last open failure, or a generic timeout.
    public func notReadyError(after timeout: TimeInterval) -> BLEError {
        cond.lock()
        defer { cond.unlock() }
        return lastOpenError ?? BLEError(.transportUnavailable, "BLE: the controller did not come up within \(timeout) s")
    }

    /// Waits on `cond` until `predicate` (evaluated with `cond` held) is true.
    func wait(timeout: TimeInterval, _ predicate: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        cond.lock()
        defer { cond.unlock() }
        while !predicate() {
            if stopped { return false }
            if !cond.wait(until: deadline) { return predicate() }
        }
        return true
    }

    private func supervise() {
        var delay = configuration.reconnectInitialDelay
        while !isStopped {
            let t: HCITransport
            do {
                t = try configuration.open()
            } catch {
                cond.lock()
                lastOpenError = error
                cond.broadcast()
                cond.unlock()
                log("BLE: cannot open the transport: \(error.reason); retrying in \(String(format: "%.1f", delay)) s")
                sleepUnlessStopped(delay)
                delay = min(delay * 2, configuration.reconnectMaxDelay)
                continue
            }
            cond.lock()
            let myGeneration = beginSession(on: t)
            cond.unlock()
            let reader = Thread { [weak self] in self?.readLoop(t, generation: myGeneration) }
            reader.name = "ble-reader"
            reader.start()
            do {
                try initialise()
                delay = configuration.reconnectInitialDelay
                cond.lock()
                if generation == myGeneration {
                    isReady = true
                    onReady?()
                    cond.broadcast()
                }
                cond.unlock()
                log("BLE: controller ready (address \(ownAddress), LE ACL \(aclMaxLength) bytes × \(aclCredits))")
            } catch {
                log("BLE: controller initialisation failed: \(error)")
                t.close()
            }
            // Wait for the session to end.
            cond.lock()
            while transport === t && !stopped { cond.wait() }
            cond.unlock()
            t.close()
            if !isStopped {
                log("BLE: controller lost; reconnecting")
                sleepUnlessStopped(delay)
                delay = min(delay * 2, configuration.reconnectMaxDelay)
            }
        }
    }

    private func sleepUnlessStopped(_ seconds: TimeInterval) {
        _ = wait(timeout: seconds) { self.stopped }
    }

    /// With `cond` held: makes `t` the session's transport with fresh session state; returns the
    /// session's generation. The supervisor then starts the reader thread and the init sequence;
    /// the `hci` fuzz target instead feeds packets to `handle(_:)` itself, in-process.
    func beginSession(on t: HCITransport) -> Int {
        generation += 1
        lastOpenError = nil
        transport = t
        resetSessionState()
        return generation
    }

    private func resetSessionState() {
        isReady = false
        commandCredits = 1
        commandQueue = []
        commandsInFlight = []
        aclMaxLength = 27
        aclCredits = 1
        aclQueue = []
        aclInFlight = [:]
        advertisingReports = []
        lastConnectionComplete = nil
    }

    private func readLoop(_ t: HCITransport, generation g: Int) {
        while true {
            let packet: H4Packet
            do {
                packet = try t.receive()
            } catch {
                if !isStopped { log("BLE: transport: \(error.reason)") }
                break
            }
            cond.lock()
            if generation == g { handle(packet) }
            cond.broadcast()
            cond.unlock()
        }
        cond.lock()
        if generation == g && transport === t { sessionLost() }
        cond.broadcast()
        cond.unlock()
    }

    /// With `cond` held: the transport is gone; fail everything that waits on it.
    private func sessionLost() {
        transport = nil
        isReady = false
        let pending = commandsInFlight + commandQueue
        commandsInFlight = []
        commandQueue = []
        for p in pending { p.completion?(.transportLost) }
        for c in connections.values { c.closed(reason: 0x08) }
        connections = [:]
        // A stop closes the transport too; only an unexpected end is a loss.
        if !stopped { onTransportLost?() }
    }

    // MARK: initialisation

    /// The init sequence (BLE-FACTS): reset, event masks, buffer sizes, address.
    private func initialise() throws(BLEError) {
        try command(.reset)
        _ = try? command(.setEventMask(0x2000_8000_0200_8090))
        _ = try? command(.leSetEventMask(0xA7F))
        var length = 0, count = 0
        if let rp = try? command(.leReadBufferSize), rp.count >= 4 {
            length = Int(rp[1]) | Int(rp[2]) << 8
            count = Int(rp[3])
        }
        if length == 0 || count == 0, let rp = try? command(.readBufferSize), rp.count >= 8 {
            length = Int(rp[1]) | Int(rp[2]) << 8
            count = Int(rp[4]) | Int(rp[5]) << 8
        }
        var address = BLEAddress(type: 0, bytes: [UInt8](repeating: 0, count: 6))
        if let rp = try? command(.readBDADDR), rp.count >= 7 { address.bytes = Array(rp[1..<7]) }
        if let fixed = configuration.staticAddress {
            address = fixed
            try command(.leSetRandomAddress(address.bytes))
        } else if address.bytes.allSatisfy({ $0 == 0 }) {
            address = BLEAddress.staticRandom(seed: configuration.addressSeed)
            try command(.leSetRandomAddress(address.bytes))
        }
        cond.lock()
        aclMaxLength = max(length, 27)
        aclCredits = max(count, 1)
        ownAddress = address
        cond.unlock()
    }

    // MARK: commands

    /// Sends a command and waits for its Command Complete (returns its return parameters) or
    /// Command Status. Throws `.commandFailed` on a non-zero status and `.commandTimeout` after
    /// the timeout. Must not be called from the reader thread.
    @discardableResult
    public func command(_ c: HCICommand) throws(BLEError) -> [UInt8] {
        var outcome: CommandOutcome?
        cond.lock()
        guard transport != nil else {
            cond.unlock()
            throw BLEError(.transportClosed, "HCI \(name(c)): no controller")
        }
        enqueue(c) { outcome = $0 }
        while outcome == nil { cond.wait() }
        cond.unlock()
        switch outcome! {
        case .complete(let rp):
            if let s = rp.first, s != 0 { throw BLEError(.commandFailed, "HCI \(name(c)) failed: status 0x\(Hex.encode([s]))") }
            return rp
        case .status(let s):
            if s != 0 { throw BLEError(.commandFailed, "HCI \(name(c)) failed: status 0x\(Hex.encode([s]))") }
            return [s]
        case .timeout:
            throw BLEError(.commandTimeout, "HCI \(name(c)): no response within \(configuration.commandTimeout) s")
        case .transportLost:
            throw BLEError(.transportClosed, "HCI \(name(c)): the controller went away")
        }
    }

    /// With `cond` held: queues a command without waiting; failures are logged, never fatal.
    func submit(_ c: HCICommand) {
        enqueue(c) { [log] outcome in
            switch outcome {
            case .complete(let rp) where (rp.first ?? 0) != 0:
                log("BLE: HCI \(BLEHost.nameOf(c)) failed: status 0x\(Hex.encode([rp[0]]))")
            case .status(let s) where s != 0:
                log("BLE: HCI \(BLEHost.nameOf(c)) failed: status 0x\(Hex.encode([s]))")
            case .timeout:
                log("BLE: HCI \(BLEHost.nameOf(c)): no response (timed out)")
            default: break
            }
        }
    }

    /// Like `submit` but without holding `cond`.
    public func submitCommand(_ c: HCICommand) {
        cond.lock()
        submit(c)
        cond.unlock()
    }

    private func name(_ c: HCICommand) -> String { BLEHost.nameOf(c) }
    static func nameOf(_ c: HCICommand) -> String {
        let s = "\(c)"
        return String(s.prefix(while: { $0 != "(" })) + " (0x" + String(c.opcode, radix: 16) + ")"
    }

    private func enqueue(_ c: HCICommand, completion: @escaping (CommandOutcome) -> Void) {
        commandQueue.append(PendingCommand(command: c, sentAt: nil, completion: completion))
        pumpCommands()
    }

    private func pumpCommands() {
        while commandCredits > 0, !commandQueue.isEmpty, let t = transport {
            var p = commandQueue.removeFirst()
            p.sentAt = Date()
            commandCredits -= 1
            commandsInFlight.append(p)
            do {
                try t.send(H4Packet(.command, p.command.encoded()))
            } catch {
                log("BLE: send failed: \(error.reason)")
            }
        }
    }

    private func completeCommand(opcode: UInt16, credits: UInt8, outcome: CommandOutcome) {
        commandCredits = Int(credits)
        if let i = commandsInFlight.firstIndex(where: { $0.command.opcode == opcode }) {
            let p = commandsInFlight.remove(at: i)
            p.completion?(outcome)
        } else if opcode != 0 {
            log("BLE: unexpected completion for opcode 0x\(String(opcode, radix: 16))")
        }
        pumpCommands()
    }

    /// Timer: expires commands without an answer (restoring the credit, as Bumble's controller
    /// never answers some commands).
    private func tick() {
        cond.lock()
        defer { cond.unlock() }
        let now = Date()
        dropIdleLinks(now: now)
        onTick?()
        let expired = commandsInFlight.filter { ($0.sentAt.map { now.timeIntervalSince($0) } ?? 0) > configuration.commandTimeout }
        guard !expired.isEmpty else { return }
        commandsInFlight.removeAll { p in expired.contains { $0.sentAt == p.sentAt && $0.command == p.command } }
        commandCredits = max(commandCredits, 1)
        for p in expired { p.completion?(.timeout) }
        pumpCommands()
        cond.broadcast()
    }

    /// With `cond` held: the idle rules of the peripheral role (`linkIdleTimeout`,
    /// `channelIdleTimeout`); each link is dropped once (`Disconnect`, reason 0x13).
    private func dropIdleLinks(now: Date) {
        guard configuration.linkIdleTimeout != nil || configuration.channelIdleTimeout != nil else { return }
        for c in connections.values where c.role == 1 && c.isOpen && !c.isBeingDropped {
            var why: String?
            if let limit = configuration.channelIdleTimeout,
               let quiet = c.openChannels.first(where: { now.timeIntervalSince($0.lastTraffic) > limit }) {
                why = "nothing on L2CAP channel 0x\(String(quiet.state.localCID, radix: 16)) (PSM 0x\(String(quiet.psm, radix: 16))) for \(Self.seconds(limit))"
                for ch in c.openChannels { ch.closedByPeer() }
            } else if let limit = configuration.linkIdleTimeout, let since = c.idleSince(now: now), now.timeIntervalSince(since) > limit {
                why = "no L2CAP channel opened within \(Self.seconds(limit))"
            }
            guard let why else { continue }
            c.isBeingDropped = true
            log("BLE: dropping \(c.peer): \(why)")
            submit(.disconnect(handle: c.handle, reason: 0x13))
            onIdleDrop?(c, why)
            cond.broadcast()
        }
    }

    static func seconds(_ t: TimeInterval) -> String {
        t == t.rounded() ? "\(Int(t)) s" : String(format: "%.1f s", t)
    }

    // MARK: ACL

    /// With `cond` held: sends one L2CAP frame on a connection, fragmented to the LE buffer size
    /// and paced by ACL credits.
    func sendFrame(_ frame: L2CAPFrame, handle: UInt16) {
        aclQueue += ACLPacket.fragments(of: frame.encoded(), handle: handle, maxLength: aclMaxLength)
        pumpACL()
    }

    private func pumpACL() {
        while aclCredits > 0, !aclQueue.isEmpty, let t = transport {
            let p = aclQueue.removeFirst()
            guard connections[p.handle] != nil else { continue }
            aclCredits -= 1
            aclInFlight[p.handle, default: 0] += 1
            do {
                try t.send(H4Packet(.acl, p.encoded()))
            } catch {
                log("BLE: send failed: \(error.reason)")
            }
        }
    }

    // MARK: packets

    /// With `cond` held: one packet from the controller.
    func handle(_ packet: H4Packet) {
        switch packet.type {
        case .event:
            do {
                handle(try HCIEvent(parsing: packet.payload))
            } catch {
                log("BLE: \(error.reason)")
            }
        case .acl:
            do {
                let acl = try ACLPacket(parsing: packet.payload)
                guard let c = connections[acl.handle] else {
                    log("BLE: ACL for unknown handle 0x\(String(acl.handle, radix: 16))")
                    return
                }
                for frame in try c.reassembler.feed(acl) { c.received(frame) }
            } catch {
                log("BLE: \(error.reason)")
            }
        default:
            log("BLE: ignoring H4 packet type \(packet.type)")
        }
    }

    private func handle(_ event: HCIEvent) {
        switch event {
        case .commandComplete(let n, let op, let rp):
            completeCommand(opcode: op, credits: n, outcome: .complete(rp))
        case .commandStatus(let s, let n, let op):
            completeCommand(opcode: op, credits: n, outcome: .status(s))
        case .numberOfCompletedPackets(let list):
            for c in list {
                let n = Int(c.count)
                let inFlight = aclInFlight[c.handle] ?? 0
                aclInFlight[c.handle] = max(0, inFlight - n)
                aclCredits += min(n, inFlight)
            }
            pumpACL()
        case .disconnectionComplete(let status, let h, let reason):
            guard status == 0 else {
                log("BLE: disconnect of 0x\(String(h, radix: 16)) failed: 0x\(Hex.encode([status]))")
                return
            }
            aclCredits += aclInFlight.removeValue(forKey: h) ?? 0
            aclQueue.removeAll { $0.handle == h }
            if let c = connections.removeValue(forKey: h) {
                log("BLE: disconnected \(c.peer) (reason 0x\(Hex.encode([reason])))")
                c.closed(reason: reason)
                onDisconnected?(c, reason)
            }
        case .leConnectionComplete(let cc):
            lastConnectionComplete = cc
            guard cc.status == 0 else {
                log("BLE: connection failed: status 0x\(Hex.encode([cc.status]))")
                return
            }
            let c = BLEConnection(host: self, complete: cc)
            connections[cc.handle] = c
            log("BLE: connected \(cc.peer) as \(cc.role == 0 ? "central" : "peripheral"), handle 0x\(String(cc.handle, radix: 16)), interval \(cc.interval)")
            onConnected?(c)
        case .leConnectionUpdateComplete(let s, let h, let i, _, _):
            if s == 0, let c = connections[h] { c.interval = i }
        case .leLTKRequest(let h, _, _):
            // No pairing, so no keys: refuse encryption.
            submit(.leLTKRequestNegativeReply(handle: h))
        case .leRemoteConnParamRequest(let h, let mn, let mx, let l, let t):
            submit(.leRemoteConnParamRequestReply(handle: h, intervalMin: mn, intervalMax: mx, latency: l, timeout: t))
        case .leAdvertisingReport(let reports):
            addReports(reports)
        case .leExtendedAdvertisingReport(let reports):
            addReports(reports.map(\.legacy))
        case .hardwareError(let code):
            log("BLE: controller hardware error 0x\(Hex.encode([code])); resetting the session")
            transport?.close()
        case .leUnknown(let sub, _):
            log("BLE: ignoring LE event 0x\(Hex.encode([sub]))")
        case .unknown(let code, _):
            log("BLE: ignoring HCI event 0x\(Hex.encode([code]))")
        }
    }

    // MARK: central role

    private func addReports(_ reports: [AdvertisingReport]) {
        advertisingReports += reports
        if advertisingReports.count > 256 { advertisingReports.removeFirst(advertisingReports.count - 256) }
    }

    /// Scans until an advertiser's data satisfies `match`, then stops scanning.
    public func scan(timeout: TimeInterval, match: @escaping (AdvertisingReport) -> Bool) throws(BLEError) -> AdvertisingReport {
        cond.lock()
        advertisingReports = []
        let own = ownAddress.type
        cond.unlock()
        _ = try? command(.leSetScanEnable(enable: false, filterDuplicates: false))
        try command(.leSetScanParameters(active: false, interval: 0x0010, window: 0x0010, ownAddressType: own))
        try command(.leSetScanEnable(enable: true, filterDuplicates: false))
        var found: AdvertisingReport?
        _ = wait(timeout: timeout) {
            found = self.advertisingReports.first(where: match)
            return found != nil || !self.isReady
        }
        _ = try? command(.leSetScanEnable(enable: false, filterDuplicates: false))
        guard let found else { throw BLEError(.notFound, "BLE scan: no matching advertiser within \(timeout) s") }
        return found
    }

    /// Creates a connection as central; waits for LE Connection Complete.
    public func connect(to peer: BLEAddress, timeout: TimeInterval, interval: UInt16 = 0x0018) throws(BLEError) -> BLEConnection {
        cond.lock()
        lastConnectionComplete = nil
        let own = ownAddress.type
        cond.unlock()
        try command(.leCreateConnection(peer: peer, ownAddressType: own, intervalMin: interval, intervalMax: interval, latency: 0, timeout: 200))
        var result: LEConnectionComplete?
        _ = wait(timeout: timeout) {
            result = self.lastConnectionComplete
            return result != nil || !self.isReady
        }
        guard let cc = result else {
            _ = try? command(.leCreateConnectionCancel)
            throw BLEError(.connectionFailed, "BLE: no connection to \(peer) within \(timeout) s")
        }
        guard cc.status == 0 else { throw BLEError(.connectionFailed, "BLE: connection to \(peer) failed: status 0x\(Hex.encode([cc.status]))") }
        cond.lock()
        defer { cond.unlock() }
        guard let c = connections[cc.handle] else { throw BLEError(.connectionFailed, "BLE: connection to \(peer) dropped at once") }
        return c
    }

    // MARK: L2CAP servers

    /// Accepts LE credit-based channels on `psm`; `accept` runs on its own thread per channel.
    public func listen(psm: UInt16, mtu: UInt16 = 1024, mps: UInt16 = 247, credits: UInt16 = 8,
                       admit: @escaping (BLEConnection) -> UInt16? = { _ in nil }, accept: @escaping @Sendable (L2CAPChannel) -> Void) {
        cond.lock()
        psmServers[psm] = PSMServer(mtu: mtu, mps: mps, credits: credits, admit: admit, accept: accept)
        cond.unlock()
    }

    func server(for psm: UInt16) -> PSMServer? { psmServers[psm] }

    /// Disconnects every link (reason 0x13) and waits up to `timeout` for them to go.
    public func disconnectAll(timeout: TimeInterval) {
        cond.lock()
        for c in connections.values where c.isOpen { submit(.disconnect(handle: c.handle, reason: 0x13)) }
        cond.unlock()
        _ = wait(timeout: timeout) { self.connections.isEmpty }
    }

    /// Number of live connections.
    public var connectionCount: Int { cond.lock(); defer { cond.unlock() }; return connections.count }
}
