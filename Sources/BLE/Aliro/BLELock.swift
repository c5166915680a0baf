import ByteCore
import Foundation
import ReaderSeam

/// The reader side of one BLE transaction: a phone on the access-protocol channel, as the lock's
/// reader loop sees a card (`PresentedCard`). Each `transceive` sends `[00][00][len][command]` and
/// waits for `[00][01][len][response]`; the phone's other messages (its initiate, events) are
/// queued for `receiveMessage` (`MessageBearer`, which the access protocol's driver uses).
public final class BLEReaderSession: MessageBearer, PresentedCard {
    public let channel: L2CAPChannel
    public let responseTimeout: TimeInterval
    /// The phone's address.
    public var peer: BLEAddress { channel.peer }
    /// When the lock sent its `[02][03]` ("completed") notification; the phone should disconnect.
    fileprivate var finishedAt: Date?
    /// Command/response pairs exchanged.
    public private(set) var exchanges = 0
    /// Frames received that were not APDU responses (notifications, time sync).
    public private(set) var otherFrames: [AliroFrame] = []
    /// Of those, the ones `receiveMessage` has not handed out yet.
    private var unread: [AliroFrame] = []
    /// The reader sent its closing message itself (`sendMessage`): `finish` sends none.
    public private(set) var notified = false
    /// What this phone wrote to the version characteristic, nil when it wrote nothing.
    public let writtenVersion: [UInt8]?

    init(channel: L2CAPChannel, responseTimeout: TimeInterval, writtenVersion: [UInt8]?) {
        self.channel = channel
        self.responseTimeout = responseTimeout
        self.writtenVersion = writtenVersion
    }

    public var link: APDUTransceiver { self }
    public var identity: String { "\(peer)" }
    public var description: String { "phone \(peer) on PSM 0x\(String(channel.psm, radix: 16))" }

    public func transceive(_ command: [UInt8]) throws -> [UInt8] {
        try channel.send(AliroFrame.command(command).encoded())
        var deadline = Date(timeIntervalSinceNow: responseTimeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw BLEError(.timeout, "BLE: no APDU response within \(responseTimeout) s") }
            let frame = try AliroFrame(parsing: try channel.receive(timeout: remaining))
            if frame.isResponse {
                exchanges += 1
                return frame.payload
            }
            // The phone's Busy event (`02 00`, attribute 00 empty) extends the wait
            // (BLEUWB_RDR_TIMEOUT_EXTENSION).
            if frame == AliroFrame.busy { deadline = Date(timeIntervalSinceNow: responseTimeout) }
            otherFrames.append(frame)
            unread.append(frame)
        }
    }

    // MARK: MessageBearer

    public func receiveMessage(timeout: TimeInterval) throws -> ChannelMessage {
        if !unread.isEmpty { return unread.removeFirst() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw BLEError(.timeout, "BLE: no message from the phone within \(timeout) s") }
            let frame = try AliroFrame(parsing: try channel.receive(timeout: remaining))
            guard !frame.isResponse else { continue }   // an answer to nothing asked
            otherFrames.append(frame)
            return frame
        }
    }

    public func sendMessage(_ message: ChannelMessage) throws {
        try channel.send(message.encoded())
        notified = true
    }

    public var openingTimeout: TimeInterval { responseTimeout }

    /// The lock's list and the version this phone wrote (nil when it wrote none: the keys then
    /// take `0100`, the only version listed).
    public var transportVersions: (supported: [UInt16], selected: UInt16)? {
        writtenVersion.flatMap(AliroBLE.writtenVersion).map { (AliroBLE.supportedVersions, $0) }
    }

    public func isResponseTimeout(_ error: Error) -> Bool { (error as? BLEError)?.code == .timeout && channel.isOpen }
}

/// What happened on the lock, for logs and tests.
public enum BLELockEvent: Sendable {
    case ready(BLEAddress)
    case connected(BLEAddress)
    case transactionFinished(BLEAddress, exchanges: Int)
    case disconnected(BLEAddress, reason: UInt8)
    /// The lock dropped an idle link (no channel within `idleTimeout`, or a channel quiet for
    /// `transactionTimeout`); the reason says which.
    case dropped(BLEAddress, why: String)
    case controllerLost
}

/// The lock on BLE, as the lock's `CardReader`: advertises `FFF2`, serves GATT, accepts the
/// phones' credit-based channels on its PSM and hands each to the reader loop as a card (several
/// at once: run the loop with `maxConcurrent` > 1). The host reconnects to a controller that goes
/// away by itself; the loop hears of it as a lost reader and `open()` waits for the controller.
///
/// Safe because the host's threads call back into it: its waiting state
/// is read and written with `state` held, the advertisement with `host.cond` held (it is part
/// of the host's monitor), and the hooks (`onEvent`, `onNotice`) are set before `start`.
public final class BLELock: CardReader, @unchecked Sendable {
    public struct Configuration {
        public var transport: TransportSpec
        public var btsnoop: String?
        public var name = "LockBench"
        public var psm = AliroBLE.defaultPSM
        /// A second PSM that echoes SDUs (the benchmark's bare round trip, the link tests); off
        /// (nil) unless asked for: a production lock answers only the access-protocol PSM.
        public var echoPSM: UInt16? = nil
        public var advertisement = AliroAdvertisement()
        /// Advertising interval in 0.625 ms units (Bumble's controller reads it as ms).
        public var advertisingInterval: UInt16 = 0x0020
        public var responseTimeout: TimeInterval = 5
        /// How long `open()` waits for the controller.
        public var openTimeout: TimeInterval = 10
        /// How long a phone may stay connected after the `completed` notification before the lock disconnects it.
        public var disconnectGrace: TimeInterval = 2
        public var addressSeed: UInt64 = 0x4C6F_636B
        public var log: BLELogger = { _ in }
        /// The lock's static random address (the runtime derives one from the reader identity);
        /// nil = the controller's public address, or one from `addressSeed` when it has none.
        public var address: BLEAddress?
        /// A link with no access-protocol channel open for this long is dropped; nil = never.
        public var idleTimeout: TimeInterval? = 5
        /// A channel with no traffic for this long is closed and its link dropped; nil = never.
        public var transactionTimeout: TimeInterval? = 10
        /// AES-128 under the group resolving key (one block): when set, the advertisement's expiry
        /// and rotating tag are filled, and renewed each `tagWindow`; nil = zeros.
        public var tagCipher: (@Sendable ([UInt8]) -> [UInt8])?
        /// How long one rotating tag lives.
        public var tagWindow: TimeInterval = 900
        /// The clock the expiry is counted on (the lock's clock).
        public var now: @Sendable () -> Date = { Date() }

        public init(transport: TransportSpec) { self.transport = transport }
    }

    public typealias Card = BLEReaderSession

    public let configuration: Configuration
    public let host: BLEHost
    private let capture: BTSnoopWriter?
    private let state = NSCondition()
    private var _transactions = 0
    private var pending: [L2CAPChannel] = []
    private var started = false
    private var lost = false
    /// Called for each radio event (on host threads; keep it quick): the controller's and the
    /// connections' comings and goings, which the reader loop does not see.
    public var onEvent: ((BLELockEvent) -> Void)?
    /// Version the phone last wrote to the version characteristic.
    public private(set) var selectedVersion: [UInt8]?
    /// Answers a phone's LE credit-based connection request after it wrote a version the lock
    /// does not list (BLERKE_RDR_NEG_FAILED_L2CAP: refuse or disconnect, never open).
    public static let unsupportedVersionRefusal = SignalingCommand.Result.insufficientAuthorization
    /// Radio notices for the reader loop (`ReaderEvent.notice`): phones connecting, leaving, dropped idle.
    public var onNotice: (@Sendable (String, Bool) -> Void)?
    /// What is advertised now (expiry and tag filled when `tagCipher` is set); guarded by the host.
    private var currentAdvertisement: AliroAdvertisement

    public init(configuration: Configuration) throws(BLEError) {
        self.configuration = configuration
        self.currentAdvertisement = configuration.advertisement
        self.capture = try configuration.btsnoop.map { path throws(BLEError) in try BTSnoopWriter(path: path) }
        let spec = configuration.transport
        let capture = self.capture
        var versionSink: (([UInt8]) -> Void)?
        let services = GATTDatabase.standardServices(deviceName: configuration.name)
            + [AliroBLE.service(psm: configuration.psm, onVersionSelected: { versionSink?($0) })]
        var hostConfig = BLEHost.Configuration(open: { () throws(BLEError) in try spec.open(capture: capture) },
                                               addressSeed: configuration.addressSeed, services: services, log: configuration.log)
        hostConfig.reconnectMaxDelay = 1.0
        hostConfig.staticAddress = configuration.address
        hostConfig.linkIdleTimeout = configuration.idleTimeout
        hostConfig.channelIdleTimeout = configuration.transactionTimeout
        self.host = BLEHost(configuration: hostConfig)
        versionSink = { [weak self] v in self?.selectedVersion = v }
        host.onReady = { [weak self] in self?.advertise(); self.map { $0.onEvent?(.ready($0.host.ownAddress)) } }
        host.onConnected = { [weak self] c in
            self?.onEvent?(.connected(c.peer))
            self?.onNotice?("phone connected: \(c.peer)", false)
            // Keep advertising for further phones where the controller allows it.
            self?.host.submit(.leSetAdvertisingEnable(true))
        }
        host.onDisconnected = { [weak self] c, reason in
            self?.onEvent?(.disconnected(c.peer, reason: reason))
            self?.onNotice?("phone disconnected: \(c.peer) (reason 0x\(String(reason, radix: 16)))", false)
            self?.host.submit(.leSetAdvertisingEnable(true))
        }
        host.onTransportLost = { [weak self] in
            guard let self else { return }
            self.state.lock(); self.lost = true; self.state.broadcast(); self.state.unlock()
            self.onEvent?(.controllerLost)
        }
        host.onIdleDrop = { [weak self] c, why in
            self?.onEvent?(.dropped(c.peer, why: why))
            self?.onNotice?("dropped idle link \(c.peer): \(why)", true)
        }
        host.onTick = { [weak self] in self?.renewTagIfExpired() }
        // A phone that wrote a version the lock does not list gets no channel (the written value's
        // first two bytes: 2-byte and 4-byte writes alike); one that wrote none is let in.
        let versionHandle = host.database.valueHandle(of: AliroBLE.versionCharacteristic)
        let log = configuration.log
        host.listen(psm: configuration.psm, admit: { connection in
            guard let handle = versionHandle, let written = connection.attServer.written[handle] else { return nil }
            if let v = AliroBLE.writtenVersion(written), AliroBLE.supportedVersions.contains(v) { return nil }
            log("BLE: refusing the channel of \(connection.peer): it wrote version \(Hex.encode(written)) to BD4B9502, the lock lists \(AliroBLE.supportedVersions.map { String(format: "%04X", $0) }) (result 0x\(String(format: "%04X", Self.unsupportedVersionRefusal)))")
            return Self.unsupportedVersionRefusal
        }) { [weak self] channel in self?.accepted(channel) }
        if let echo = configuration.echoPSM {
            host.listen(psm: echo) { channel in
                while let sdu = try? channel.receive(timeout: 30) {
                    if (try? channel.send(sdu)) == nil { break }
                }
            }
        }
    }

    /// Transactions run to completion since start.
    public var transactionCount: Int { state.withLock { _transactions } }

    /// Starts the host (the reader loop's `open()` does it too).
    public func start() {
        state.lock(); defer { state.unlock() }
        guard !started else { return }
        started = true
        host.start()
    }

    /// Stops the host (call after the reader loop stopped): advertising off and phones
    /// disconnected (best effort, about a second at most), then the transport closed. Not a
    /// controller loss: no `controllerLost` event.
    public func stop() {
        if host.isReady {
            _ = try? host.command(.leSetAdvertisingEnable(false))
            host.disconnectAll(timeout: 1)
        }
        host.stop()
        capture?.flush()
    }

    /// The advertisement as last set on the controller.
    public var advertisement: AliroAdvertisement {
        host.cond.lock(); defer { host.cond.unlock() }
        return currentAdvertisement
    }

    /// Waits until the controller is initialised and advertising was requested.
    @discardableResult
    public func waitUntilAdvertising(timeout: TimeInterval) -> Bool { host.waitUntilReady(timeout: timeout) }

    // MARK: CardReader

    public var spec: String { configuration.transport.description }

    public var startNote: String { "advertising FFF2, access-protocol channel on PSM 0x\(String(configuration.psm, radix: 16))" }

    /// Starts the host once, then waits for the controller (the host reconnects by itself).
    public func open() throws -> String {
        start()
        guard host.waitUntilReady(timeout: configuration.openTimeout), host.isReady else {
            throw host.notReadyError(after: configuration.openTimeout)
        }
        state.withLock { lost = false }
        return "LE controller, advertising as \(host.ownAddress)"
    }

    /// The host keeps its controller; `stop()` ends it.
    public func close() {}

    /// The next phone that opened the access-protocol channel; throws once when the controller went away.
    public func waitForCard(timeout: TimeInterval) throws -> BLEReaderSession? {
        state.lock()
        defer { state.unlock() }
        let deadline = Date().addingTimeInterval(timeout)
        while pending.isEmpty && !lost && state.wait(until: deadline) {}
        if lost {
            lost = false
            pending.removeAll()
            throw BLEError(.transportClosed, "BLE: the controller went away (\(spec)); the host reconnects")
        }
        guard !pending.isEmpty else { return nil }
        let channel = pending.removeFirst()
        let handle = host.database.valueHandle(of: AliroBLE.versionCharacteristic)
        let written = handle.flatMap { h in channel.link.writtenValue(h) }
        return BLEReaderSession(channel: channel, responseTimeout: configuration.responseTimeout, writtenVersion: written)
    }

    /// Unless the transaction sent its own closing message (the access protocol's completed
    /// notification, sealed under BleSK), sends the plain `[02][03]` completed notification of
    /// the echo flow: reader status unsecured when granted, secured otherwise.
    public func finish(_ session: BLEReaderSession, granted: Bool?) {
        if !session.notified { try? session.channel.send(AliroFrame.completed(EchoFlow.completion(granted: granted == true)).encoded()) }
        session.finishedAt = Date()
        state.withLock { _transactions += 1 }
        onEvent?(.transactionFinished(session.peer, exchanges: session.exchanges))
    }

    /// The phone disconnects on `completed`; one that does not is disconnected after `disconnectGrace`.
    public func waitForRemoval(_ session: BLEReaderSession, timeout: TimeInterval) throws -> Bool {
        let link = session.channel.link
        let graceLeft = (session.finishedAt ?? Date()).addingTimeInterval(configuration.disconnectGrace).timeIntervalSinceNow
        if link.waitUntilDisconnected(timeout: max(0, min(timeout, graceLeft))) { return true }
        guard graceLeft <= timeout else { return false }
        session.channel.close()
        link.disconnect()
        return true
    }

    // MARK: The certification tool's reader (conformance credential --ble)

    /// Advertises `version` in bits 0–2 of the first service-data byte from now on
    /// (BLERKE_UD_NEG_FAILED_L2CAP advertises `01`).
    public func setAdvertisementVersion(_ version: UInt8) {
        host.cond.lock(); defer { host.cond.unlock() }
        currentAdvertisement.advertisingVersion = version & 0x07
        if host.isReady { host.submit(.leSetAdvertisingData(currentAdvertisement.advertisingData)) }
    }

    /// Lists `versions` in the SPSM characteristic from now on (the tool's
    /// `reader_supported_ble_uwb_versions`; BLEUWB_UD_NEG_FAILED_L2CAP lists only `01FF`). The
    /// channel admission still follows `AliroBLE.supportedVersions`.
    public func listVersions(_ versions: [UInt16]) {
        guard let handle = host.database.valueHandle(of: AliroBLE.spsmCharacteristic) else { return }
        host.cond.lock(); defer { host.cond.unlock() }
        host.database.setValue(handle, SPSMCharacteristic(psm: configuration.psm, versions: versions).encoded())
    }

    /// The links open now (phones connected).
    public var links: [BLEConnection] {
        host.cond.lock(); defer { host.cond.unlock() }
        return Array(host.connections.values)
    }

    /// What `link` wrote to the version characteristic, nil when nothing yet.
    public func writtenVersion(of link: BLEConnection) -> [UInt8]? {
        host.database.valueHandle(of: AliroBLE.versionCharacteristic).flatMap { link.writtenValue($0) }
    }

    /// Whether `link` opened an access-protocol channel that `waitForCard` has not handed out.
    public func hasPendingChannel(from link: BLEConnection) -> Bool {
        state.withLock { pending.contains { $0.link === link } }
    }

    /// Closes the channels no one took yet and disconnects every phone (up to `timeout`).
    public func dropPhones(timeout: TimeInterval = 2) {
        let stale = state.withLock { () -> [L2CAPChannel] in defer { pending.removeAll() }; return pending }
        for c in stale { c.close() }
        host.disconnectAll(timeout: timeout)
    }

    private func accepted(_ channel: L2CAPChannel) {
        state.lock()
        pending.append(channel)
        state.broadcast()
        state.unlock()
    }

    /// With the host's lock held: (re)configure and enable advertising.
    private func advertise() {
        let own = host.ownAddress.type
        host.submit(.leSetAdvertisingEnable(false))
        host.submit(.leSetAdvertisingParameters(intervalMin: configuration.advertisingInterval, intervalMax: configuration.advertisingInterval,
                                                type: 0x00, ownAddressType: own, channelMap: 0x07))
        fillTag()
        host.submit(.leSetAdvertisingData(currentAdvertisement.advertisingData))
        host.submit(.leSetScanResponseData(AliroAdvertisement.scanResponse(name: configuration.name)))
        host.submit(.leSetAdvertisingEnable(true))
    }

    /// With the host's lock held: expiry and tag for the current window and address.
    private func fillTag() {
        guard let cipher = configuration.tagCipher else { return }
        currentAdvertisement.rotate(address: host.ownAddress, now: configuration.now(), window: configuration.tagWindow, cipher: cipher)
    }

    /// With the host's lock held (timer): a new tag once the advertised one expired, or when the
    /// lock's clock was set back before its window.
    private func renewTagIfExpired() {
        guard configuration.tagCipher != nil, host.isReady else { return }
        let now = configuration.now(), expiry = currentAdvertisement.expiryDate
        guard now >= expiry || now < expiry.addingTimeInterval(-configuration.tagWindow) else { return }
        fillTag()
        host.submit(.leSetAdvertisingData(currentAdvertisement.advertisingData))
    }
}
