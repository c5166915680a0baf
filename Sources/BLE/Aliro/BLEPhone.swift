import ByteCore
import Foundation

/// How one virtual-phone transaction went.
public struct BLEPhoneOutcome: Sendable {
    public var lock: BLEAddress
    /// Command APDUs the credential answered.
    public var commandsAnswered: Int
    /// Payload of the lock's `[02][03]` completed notification; nil if the channel closed first.
    public var completion: [UInt8]?
    /// Seconds from connection complete to channel open, and to transaction completed.
    public var connectToChannel: TimeInterval
    public var connectToCompleted: TimeInterval
}

/// One connection from the phone to a lock.
public final class BLEPhoneSession {
    public let connection: BLEConnection
    public private(set) var psm: UInt16 = AliroBLE.defaultPSM
    public private(set) var services: [DiscoveredService] = []
    let responseTimeout: TimeInterval

    init(connection: BLEConnection, responseTimeout: TimeInterval) {
        self.connection = connection
        self.responseTimeout = responseTimeout
    }

    /// MTU exchange, discovery of the `FFF2` service, read the SPSM, write the selected version.
    public func discover() throws(BLEError) {
        let gatt = GATTClient(connection: connection)
        try gatt.exchangeMTU(247)
        services = try gatt.findPrimaryServices(BLEUUID(AliroBLE.serviceUUID))
        guard let service = services.first else {
            throw BLEError(.notFound, "GATT: the lock serves no FFF2 service")
        }
        let chars = try gatt.discoverCharacteristics(in: service)
        guard let spsm = chars.first(where: { $0.uuid == AliroBLE.spsmCharacteristic }) else {
            throw BLEError(.notFound, "GATT: FFF2 has no SPSM characteristic")
        }
        guard let p = AliroBLE.psm(fromCharacteristic: try gatt.read(spsm.valueHandle)) else {
            throw BLEError(.malformedPacket, "GATT: SPSM characteristic too short")
        }
        psm = p
        if let version = chars.first(where: { $0.uuid == AliroBLE.versionCharacteristic }) {
            try gatt.write(version.valueHandle, AliroBLE.protocolVersion)
        }
    }

    public func openChannel(psm: UInt16? = nil) throws(BLEError) -> L2CAPChannel {
        try connection.openChannel(psm: psm ?? self.psm)
    }

    /// Answers framed command APDUs with `responder` until the lock's completed notification or
    /// the channel closes. Returns (commands answered, completion payload).
    public func serve(_ responder: APDUResponder, on channel: L2CAPChannel) throws(BLEError) -> (Int, [UInt8]?) {
        var answered = 0
        while true {
            let sdu: [UInt8]
            do {
                sdu = try channel.receive(timeout: responseTimeout)
            } catch where error.code == .channelClosed {
                return (answered, nil)
            }
            let frame = try AliroFrame(decoding: sdu)
            switch (frame.type, frame.id) {
            case (AliroFrame.Kind.apdu, AliroFrame.ID.command):
                try channel.send(AliroFrame.response(responder.respond(to: frame.payload)).encoded)
                answered += 1
            case (AliroFrame.Kind.notification, AliroFrame.ID.completed):
                return (answered, frame.payload)
            default:
                continue
            }
        }
    }

    public func disconnect() {
        connection.disconnect()
        connection.waitUntilDisconnected(timeout: 2)
    }
}

/// The virtual phone (central): scans for a lock advertising `FFF2`, connects, discovers, reads
/// the SPSM, opens the credit-based channel and runs the credential side (an `APDUResponder`).
public final class BLEPhone {
    public struct Configuration {
        public var transport: TransportSpec
        public var btsnoop: String?
        public var name = "LockBench Phone"
        public var scanTimeout: TimeInterval = 5
        public var connectTimeout: TimeInterval = 5
        public var responseTimeout: TimeInterval = 5
        public var addressSeed: UInt64 = 0x5068_6F6E_65
        public var log: BLELogger = { _ in }

        public init(transport: TransportSpec) { self.transport = transport }
    }

    public let configuration: Configuration
    public let host: BLEHost
    private let capture: BTSnoopWriter?

    public init(configuration: Configuration) throws(BLEError) {
        self.configuration = configuration
        self.capture = try configuration.btsnoop.map { path throws(BLEError) in try BTSnoopWriter(path: path) }
        let spec = configuration.transport
        let capture = self.capture
        let config = BLEHost.Configuration(open: { () throws(BLEError) in try spec.open(capture: capture) },
                                           addressSeed: configuration.addressSeed,
                                           services: GATTDatabase.standardServices(deviceName: configuration.name), log: configuration.log)
        self.host = BLEHost(configuration: config)
    }

    /// Starts the host and waits for the controller.
    public func start(timeout: TimeInterval = 10) throws(BLEError) {
        host.start()
        guard host.waitUntilReady(timeout: timeout), host.isReady else {
            let error = host.notReadyError(after: timeout)
            host.stop()
            throw error
        }
    }

    public func stop() {
        host.stop()
        capture?.flush()
    }

    /// Scans for a lock (service data or service list with `FFF2`) and connects.
    public func connectToLock() throws(BLEError) -> BLEPhoneSession {
        let report = try host.scan(timeout: configuration.scanTimeout) { r in
            if AdvertisingData.serviceData(AliroBLE.serviceUUID, in: r.data) != nil { return true }
            return AdvertisingData.parse(r.data).contains { $0.type == AdvertisingData.completeList16 && $0.data.count >= 2
                && UInt16($0.data[0]) | UInt16($0.data[1]) << 8 == AliroBLE.serviceUUID }
        }
        let connection = try host.connect(to: report.address, timeout: configuration.connectTimeout)
        return BLEPhoneSession(connection: connection, responseTimeout: configuration.responseTimeout)
    }

    /// One whole transaction: connect, discover, open the channel, answer, disconnect.
    public func unlock(with responder: APDUResponder) throws(BLEError) -> BLEPhoneOutcome {
        let session = try connectToLock()
        defer { session.disconnect() }
        responder.reset()
        try session.discover()
        let channel = try session.openChannel()
        let opened = Date()
        let (answered, completion) = try session.serve(responder, on: channel)
        let done = Date()
        channel.close()
        return BLEPhoneOutcome(lock: session.connection.peer, commandsAnswered: answered, completion: completion,
                               connectToChannel: opened.timeIntervalSince(session.connection.connectedAt),
                               connectToCompleted: done.timeIntervalSince(session.connection.connectedAt))
    }
}
