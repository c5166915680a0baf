import ByteCore
import Foundation

/// The reader side of one BLE transaction: an `APDUTransceiver` over the access-protocol
/// channel. Each `transceive` sends `[00][00][len][command]` and waits for `[00][01][len][response]`.
public final class BLEReaderSession: APDUTransceiver {
    public let channel: L2CAPChannel
    public let responseTimeout: TimeInterval
    /// The phone's address.
    public var peer: BLEAddress { channel.peer }
    /// Sent in the closing `[02][03]` ("completed") notification after the transaction.
    public var completionPayload: [UInt8] = []
    /// Command/response pairs exchanged.
    public private(set) var exchanges = 0
    /// Frames received that were not APDU responses (notifications, time sync).
    public private(set) var otherFrames: [AliroFrame] = []

    init(channel: L2CAPChannel, responseTimeout: TimeInterval) {
        self.channel = channel
        self.responseTimeout = responseTimeout
    }

    public func transceive(_ command: [UInt8]) throws -> [UInt8] {
        try channel.send(AliroFrame.command(command).encoded)
        let deadline = Date(timeIntervalSinceNow: responseTimeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw BLEError(.timeout, "BLE: no APDU response within \(responseTimeout) s") }
            let frame = try AliroFrame(decoding: try channel.receive(timeout: remaining))
            if frame.type == AliroFrame.Kind.apdu && frame.id == AliroFrame.ID.response {
                exchanges += 1
                return frame.payload
            }
            otherFrames.append(frame)
        }
    }
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

/// The lock on BLE: advertises `FFF2`, serves GATT, accepts the phone's credit-based channel on
/// its PSM, and runs the reader transaction closure (the engine's reader session, wired by the
/// runtime) once per channel, on its own thread. Survives the controller going away.
public final class BLELock {
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
        public var addressSeed: UInt64 = 0x4C6F_636B
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
        public var log: BLELogger = { _ in }

        public init(transport: TransportSpec) { self.transport = transport }
    }

    /// Runs one reader transaction over the session; called once per accepted channel.
    public typealias Transaction = (BLEReaderSession) -> Void

    public let configuration: Configuration
    public let host: BLEHost
    private let transaction: Transaction
    private let capture: BTSnoopWriter?
    private let counters = NSLock()
    private var _transactions = 0
    /// Called for each lock event (on host threads; keep it quick).
    public var onEvent: ((BLELockEvent) -> Void)?
    /// Version the phone last wrote to the version characteristic.
    public private(set) var selectedVersion: [UInt8]?
    /// What is advertised now (expiry and tag filled when `tagCipher` is set); guarded by the host.
    private var currentAdvertisement: AliroAdvertisement

    public init(configuration: Configuration, transaction: @escaping Transaction) throws(BLEError) {
        self.configuration = configuration
        self.transaction = transaction
        self.capture = try configuration.btsnoop.map { path throws(BLEError) in try BTSnoopWriter(path: path) }
        self.currentAdvertisement = configuration.advertisement
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
            // Keep advertising for further phones where the controller allows it.
            self?.host.submit(.leSetAdvertisingEnable(true))
        }
        host.onDisconnected = { [weak self] c, reason in
            self?.onEvent?(.disconnected(c.peer, reason: reason))
            self?.host.submit(.leSetAdvertisingEnable(true))
        }
        host.onTransportLost = { [weak self] in self?.onEvent?(.controllerLost) }
        host.onIdleDrop = { [weak self] c, why in self?.onEvent?(.dropped(c.peer, why: why)) }
        host.onTick = { [weak self] in self?.renewTagIfExpired() }
        host.listen(psm: configuration.psm) { [weak self] channel in self?.serve(channel) }
        if let echo = configuration.echoPSM {
            host.listen(psm: echo) { channel in
                while let sdu = try? channel.receive(timeout: 30) {
                    if (try? channel.send(sdu)) == nil { break }
                }
            }
        }
    }

    /// Transactions run to completion since start.
    public var transactionCount: Int { counters.withLock { _transactions } }

    public func start() { host.start() }

    /// Stops: advertising off and phones disconnected (best effort, about a second at most),
    /// then the transport closed. Not a controller loss: no `controllerLost` event.
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

    /// With the host's lock held (timer): a new tag once the advertised one expired.
    private func renewTagIfExpired() {
        guard configuration.tagCipher != nil, host.isReady, configuration.now() >= currentAdvertisement.expiryDate else { return }
        fillTag()
        host.submit(.leSetAdvertisingData(currentAdvertisement.advertisingData))
    }

    private func serve(_ channel: L2CAPChannel) {
        let session = BLEReaderSession(channel: channel, responseTimeout: configuration.responseTimeout)
        transaction(session)
        try? channel.send(AliroFrame.completed(session.completionPayload).encoded)
        counters.withLock { _transactions += 1 }
        onEvent?(.transactionFinished(channel.peer, exchanges: session.exchanges))
        // The phone disconnects on "completed"; if it does not, the lock does.
        if !channel.link.waitUntilDisconnected(timeout: 2) {
            channel.close()
            channel.link.disconnect()
        }
    }
}
