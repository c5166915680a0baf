import ByteCore
import Foundation

/// How one virtual-phone transaction went.
public struct BLEPhoneOutcome: Sendable {
    public var lock: BLEAddress
    /// Command APDUs the credential answered.
    public var commandsAnswered: Int
    /// Payload of the lock's `[02][03]` completed notification as received (sealed under BleSK
    /// by the access protocol); nil if the channel closed first.
    public var completion: [UInt8]?
    /// The lock reported its bolt unsecured: the credential's reading of the completed
    /// notification (`MessageResponder.readerReportedUnsecured`), else the echo flow's `granted`.
    public var granted: Bool
    /// Seconds from connection complete to channel open, and to transaction completed.
    public var connectToChannel: TimeInterval
    public var connectToCompleted: TimeInterval
}

/// A phone that misbehaves on the radio on purpose, for testing `conformance credential --ble`
/// itself (each breaks one official ble_user_device case, docs/conformance-ble.md).
public struct BLEPhoneFaults: OptionSet, Sendable, Hashable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Go on with a lock advertising another version (BLERKE_UD_NEG_FAILED_L2CAP).
    public static let ignoreAdvertisementVersion = BLEPhoneFaults(rawValue: 1 << 0)
    /// Open the channel although the lock lists no version this phone speaks (BLEUWB_UD_NEG_FAILED_L2CAP).
    public static let ignoreLockVersions = BLEPhoneFaults(rawValue: 1 << 1)
    /// On giving up waiting for the lock, send the GENERAL_ERROR event first, as the reference
    /// phone's `handle_timeout` does (BLEUWB_UD_NEG_TIMEOUT_BEFORE_AUTH0 wants silence).
    public static let errorEventOnTimeout = BLEPhoneFaults(rawValue: 1 << 2)
    /// Wait 1.5 s from the initiate for the lock's first command, a Busy event notwithstanding
    /// (BLEUWB_UD_TIMEOUT_EXTENSION sends AUTH0 2 s after the initiate, with a Busy event between).
    public static let impatient = BLEPhoneFaults(rawValue: 1 << 3)
    /// Write version `01FF` to BD4B9502 (UD-BLE-STDTXN-1.0 expects `0100`; the lock then refuses the channel).
    public static let writeInvalidVersion = BLEPhoneFaults(rawValue: 1 << 4)

    public static let names: [(String, BLEPhoneFaults)] = [
        ("ignore-advertisement-version", .ignoreAdvertisementVersion), ("ignore-lock-versions", .ignoreLockVersions),
        ("error-event-on-timeout", .errorEventOnTimeout), ("impatient", .impatient), ("write-invalid-version", .writeInvalidVersion),
    ]

    /// The GENERAL_ERROR event, reason unknown (`02 00 00 03 01 01 00`), before any key exists.
    static let generalError = AliroFrame(type: AliroFrame.Kind.notification, id: AliroFrame.ID.event, payload: [0x01, 0x01, 0x00])
}

/// One connection from the phone to a lock.
public final class BLEPhoneSession {
    public let connection: BLEConnection
    public private(set) var psm: UInt16 = AliroBLE.defaultPSM
    /// The advertising data the phone connected on.
    public internal(set) var advertisingData: [UInt8] = []
    /// The versions the lock lists in its SPSM characteristic (empty: it lists none).
    public private(set) var lockVersions: [UInt16] = []
    public private(set) var services: [DiscoveredService] = []
    let responseTimeout: TimeInterval
    let faults: BLEPhoneFaults

    init(connection: BLEConnection, responseTimeout: TimeInterval, faults: BLEPhoneFaults = []) {
        self.connection = connection
        self.faults = faults
        self.responseTimeout = responseTimeout
    }

    /// MTU exchange, discovery of the `FFF2` service, read the SPSM and the lock's versions, write
    /// the selected version `0100` — or, when the lock lists versions without `0100`, stop: the
    /// reference phone disconnects with "Invalid Aliro BLE UWB Protocol Version" and never opens
    /// the channel (BLEUWB_UD_NEG_FAILED_L2CAP).
    public func discover(versionWrite: [UInt8] = AliroBLE.protocolVersion) throws(BLEError) {
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
        let value = try SPSMCharacteristic(parsing: try gatt.read(spsm.valueHandle))
        psm = value.psm
        lockVersions = value.versions
        guard faults.contains(.ignoreLockVersions) || value.versions.isEmpty || value.versions.contains(where: AliroBLE.supportedVersions.contains) else {
            throw BLEError(.connectionFailed, "GATT: the lock lists BLE versions \(value.versions.map { String(format: "%04X", $0) }) in D3B5A130; this phone speaks \(AliroBLE.supportedVersions.map { String(format: "%04X", $0) })")
        }
        if let version = chars.first(where: { $0.uuid == AliroBLE.versionCharacteristic }) {
            try gatt.write(version.valueHandle, versionWrite)
        }
    }

    public func openChannel(psm: UInt16? = nil) throws(BLEError) -> L2CAPChannel {
        try connection.openChannel(psm: psm ?? self.psm)
    }

    /// The transport versions for the BLE keys: the lock's list and the version written.
    public var transportVersions: (supported: [UInt16], selected: UInt16) {
        (lockVersions.isEmpty ? AliroBLE.supportedVersions : lockVersions, 0x0100)
    }

    /// How long the lock must stay quiet after its completed notification before a phone in its
    /// RKE flow sends the request: a lock may still step up (BLERKE_UD_STEPUP_PHASE sends ENVELOPE
    /// and EXCHANGE, then a second completed notification, then waits for the request).
    public static let remoteRequestQuiet: TimeInterval = 0.3

    /// Answers framed command APDUs with `responder` until the lock's completed notification, a
    /// message the responder says ends the transaction, or the channel closes. A responder that
    /// speaks first (`MessageResponder`: the credential's "initiate access protocol") does so as
    /// soon as the channel is open; one with a follow-up (the RKE request) sends it once the lock
    /// is quiet after its completed notification and then waits for the lock's answer ("reader
    /// status changed"). Returns (commands answered, completion payload).
    public func serve(_ responder: APDUResponder, on channel: L2CAPChannel) throws(BLEError) -> (Int, [UInt8]?) {
        var answered = 0
        let firstCommandBy = faults.contains(.impatient) ? Date(timeIntervalSinceNow: 1.5) : nil
        let speaker = responder as? MessageResponder
        if let opening = speaker?.openingMessage(transportVersions: transportVersions) {
            try channel.send(opening.encoded())
        }
        var completion: [UInt8]?
        var followUpAt: Date?
        var followedUp = false
        while true {
            let sdu: [UInt8]
            do {
                var wait = answered == 0 ? firstCommandBy.map { max(0.001, $0.timeIntervalSinceNow) } ?? responseTimeout : responseTimeout
                if let at = followUpAt { wait = max(0.001, at.timeIntervalSinceNow) }
                sdu = try channel.receive(timeout: wait)
            } catch where error.code == .channelClosed {
                return (answered, completion)
            } catch where error.code == .timeout && followUpAt != nil {
                followUpAt = nil
                guard let request = speaker?.followUp() else { return (answered, completion) }
                try channel.send(request.encoded())
                followedUp = true
                continue
            } catch where error.code == .timeout && followedUp {
                return (answered, completion)     // the lock did not answer the request: the credential says so
            } catch where error.code == .timeout && faults.contains(.errorEventOnTimeout) {
                try? channel.send(BLEPhoneFaults.generalError.encoded())
                throw error
            }
            let frame = try AliroFrame(parsing: sdu)
            switch (frame.type, frame.id) {
            case (AliroFrame.Kind.apdu, AliroFrame.ID.command):
                followUpAt = nil
                try channel.send(AliroFrame.response(responder.respond(to: frame.payload)).encoded())
                answered += 1
            case (AliroFrame.Kind.notification, AliroFrame.ID.completed):
                completion = frame.payload
                if speaker?.received(frame) == false, speaker?.hasFollowUp == true {
                    followUpAt = Date(timeIntervalSinceNow: Self.remoteRequestQuiet)
                    continue
                }
                return (answered, completion)
            default:
                if speaker?.received(frame) == true { return (answered, completion) }
            }
        }
    }

    public func disconnect() {
        connection.disconnect()
        connection.waitUntilDisconnected(timeout: 2)
    }
}

/// Which advertising lock a phone connects to.
public enum LockTarget: Equatable, Sendable, CustomStringConvertible {
    /// A reader the phone knows: its group id, and its sub id to pick one reader of the group.
    public struct Reader: Equatable, Sendable {
        public var groupID: [UInt8]
        public var subID: [UInt8]?
        public init(groupID: [UInt8], subID: [UInt8]? = nil) {
            self.groupID = groupID
            self.subID = subID
        }
    }
    /// The first lock advertising `FFF2`.
    case any
    /// The lock with this device address (the type is not compared: the bytes identify it).
    case address(BLEAddress)
    /// A lock whose advertisement carries one of these readers' group id [0:8] (and sub id [0:2]
    /// when given) — the prefixes ALIRO-FACTS puts in the service data.
    case readers([Reader])

    /// Whether an advertising report is this target.
    public func matches(_ report: AdvertisingReport) -> Bool {
        switch self {
        case .any:
            if AdvertisingData.serviceData(AliroBLE.serviceUUID, in: report.data) != nil { return true }
            return AdvertisingData.parse(report.data).contains { $0.type == AdvertisingData.completeList16 && $0.data.count >= 2
                && UInt16($0.data[0]) | UInt16($0.data[1]) << 8 == AliroBLE.serviceUUID }
        case .address(let a):
            return report.address.bytes == a.bytes && LockTarget.any.matches(report)
        case .readers(let readers):
            guard let ad = AliroAdvertisement(advertisingData: report.data) else { return false }
            return readers.contains { r in
                ad.groupID == Array(r.groupID.prefix(8)) && (r.subID.map { ad.subID == Array($0.prefix(2)) } ?? true)
            }
        }
    }

    public var description: String {
        switch self {
        case .any: return "any lock advertising FFF2"
        case .address(let a): return "the lock at \(a)"
        case .readers(let rs):
            return "a lock of reader " + rs.map { Hex.encode(Array($0.groupID.prefix(8))) + ($0.subID.map { "/" + Hex.encode(Array($0.prefix(2))) } ?? "") }
                .joined(separator: " or ")
        }
    }
}

/// The virtual phone (central): scans for a lock advertising `FFF2`, connects, discovers, reads
/// the SPSM, opens the credit-based channel and runs the credential side (an `APDUResponder`).
public final class BLEPhone: Sendable {
    public struct Configuration: Sendable {
        public var transport: TransportSpec
        public var btsnoop: String?
        public var name = "LockBench Phone"
        public var scanTimeout: TimeInterval = 5
        public var connectTimeout: TimeInterval = 5
        public var responseTimeout: TimeInterval = 5
        /// Seed of the phone's static random address where the controller has none (Bumble):
        /// random per phone, as phones' private addresses are, so that phones sharing a link
        /// do not collide (Bumble's link routes by address).
        public var addressSeed = UInt64.random(in: 1...UInt64.max)
        /// Which lock to connect to when several advertise.
        public var target: LockTarget = .any
        /// Radio misbehaviours on purpose (none in use).
        public var faults: BLEPhoneFaults = []
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

    /// Scans for the target lock (`configuration.target`) and connects. A lock advertising a
    /// version other than `0x00` (first service-data byte, bits 0–2) is connected to and then
    /// left, as the reference phone does ("Invalid BLE advertisement version";
    /// BLERKE_UD_NEG_FAILED_L2CAP expects the connection and then the disconnection).
    public func connectToLock() throws(BLEError) -> BLEPhoneSession {
        let target = configuration.target
        let report: AdvertisingReport
        do {
            report = try host.scan(timeout: configuration.scanTimeout) { target.matches($0) }
        } catch where error.code == .notFound {
            throw BLEError(.notFound, "BLE scan: no \(target.description) within \(configuration.scanTimeout) s")
        }
        let connection = try host.connect(to: report.address, timeout: configuration.connectTimeout)
        let session = BLEPhoneSession(connection: connection, responseTimeout: configuration.responseTimeout, faults: configuration.faults)
        session.advertisingData = report.data
        if !configuration.faults.contains(.ignoreAdvertisementVersion), let ad = AliroAdvertisement(advertisingData: report.data), ad.advertisingVersion != AliroAdvertisement.version {
            session.disconnect()
            throw BLEError(.connectionFailed, "BLE: \(report.address) advertises version \(ad.advertisingVersion) (service data byte \(Hex.encode([ad.firstByte])), bits 0-2); this phone speaks version 0: disconnected")
        }
        return session
    }

    /// One whole transaction: connect, discover, open the channel, answer, disconnect.
    public func unlock(with responder: APDUResponder) throws(BLEError) -> BLEPhoneOutcome {
        let session = try connectToLock()
        defer { session.disconnect() }
        responder.reset()
        try session.discover(versionWrite: configuration.faults.contains(.writeInvalidVersion) ? [0x01, 0xFF] : AliroBLE.protocolVersion)
        let channel = try session.openChannel()
        let opened = Date()
        let (answered, completion) = try session.serve(responder, on: channel)
        let done = Date()
        channel.close()
        let granted = (responder as? MessageResponder)?.readerReportedUnsecured ?? (completion == EchoFlow.granted)
        return BLEPhoneOutcome(lock: session.connection.peer, commandsAnswered: answered, completion: completion, granted: granted,
                               connectToChannel: opened.timeIntervalSince(session.connection.connectedAt),
                               connectToCompleted: done.timeIntervalSince(session.connection.connectedAt))
    }
}
