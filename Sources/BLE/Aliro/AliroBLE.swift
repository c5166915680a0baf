import ByteCore
import Foundation

/// The lock's BLE identity per ALIRO-FACTS (BLE): service `FFF2`, its two characteristics, the
/// advertisement's service data and the frames on the credit-based channel.
public enum AliroBLE {
    /// 16-bit service UUID advertised and served.
    public static let serviceUUID: UInt16 = 0xFFF2
    /// Read: SPSM (2, big-endian) ‖ `02` ‖ supported version `0100`.
    public static let spsmCharacteristic = BLEUUID("D3B5A130-9E23-4B3A-8BE4-6B1EE5F980A3")!
    /// Write: the version the phone selected.
    public static let versionCharacteristic = BLEUUID("BD4B9502-3F54-11EC-B919-0242AC120005")!
    /// Default SPSM for the access protocol channel.
    public static let defaultPSM: UInt16 = 0x0080
    /// LockBench's own PSM for the bare echo used by the benchmark (not part of Aliro).
    public static let echoPSM: UInt16 = 0x0081
    public static let protocolVersion: [UInt8] = [0x01, 0x00]
    /// The BLE transport versions LockBench speaks (aliro-actuator `ble_uwb.py`
    /// `SUPPORTED_VERSIONS = [ALIRO_BLE_UWB_PROTOCOL_VERSION]` = `0x0100`).
    public static let supportedVersions: [UInt16] = [0x0100]

    /// The SPSM characteristic's value.
    public static func spsmValue(psm: UInt16) -> [UInt8] { SPSMCharacteristic(psm: psm, versions: supportedVersions).encoded() }

    /// Parses the SPSM characteristic's value.
    public static func psm(fromCharacteristic v: [UInt8]) -> UInt16? { try? SPSMCharacteristic(parsing: v).psm }

    /// The version a phone wrote to the version characteristic: its first two bytes (a 2-byte
    /// `0100` from older phones, `01 00 01 03` — version, features length, features — from the
    /// newest reference phone); nil when shorter.
    public static func writtenVersion(_ value: [UInt8]) -> UInt16? {
        value.count >= 2 ? UInt16(value[0]) << 8 | UInt16(value[1]) : nil
    }

    /// The lock's GATT service.
    public static func service(psm: UInt16, onVersionSelected: (([UInt8]) -> Void)? = nil) -> ServiceDefinition {
        ServiceDefinition(uuid: BLEUUID(serviceUUID), characteristics: [
            CharacteristicDefinition(uuid: spsmCharacteristic, properties: .read, value: spsmValue(psm: psm)),
            CharacteristicDefinition(uuid: versionCharacteristic, properties: [.read, .write], value: protocolVersion, onWrite: onVersionSelected),
        ])
    }
}

/// The read characteristic `D3B5A130-…`: SPSM (2, big-endian) ‖ versions length ‖ versions (2
/// bytes each) — the reference reader's `spsm + 02 0100` (aliro-actuator murata driver
/// `setup_gatt_database` @ 05d93fe42cd5734626ece6ea89f7d4b325758862).
public struct SPSMCharacteristic: Equatable, Sendable {
    public var psm: UInt16
    /// Empty when the value stops after the SPSM (nothing listed: the phone assumes `0100`).
    public var versions: [UInt16]

    public init(psm: UInt16, versions: [UInt16]) {
        self.psm = psm
        self.versions = versions
    }

    public init(parsing v: [UInt8]) throws(BLEError) {
        guard v.count >= 2 else { throw BLEError(.malformedPacket, "SPSM characteristic: \(v.count) bytes, fewer than the 2-byte SPSM") }
        psm = UInt16(v[0]) << 8 | UInt16(v[1])
        guard v.count > 2 else { versions = []; return }
        let n = Int(v[2])
        guard n % 2 == 0, v.count >= 3 + n else {
            throw BLEError(.malformedPacket, "SPSM characteristic \(Hex.encode(v)): versions length \(n) is odd or runs past the value")
        }
        versions = stride(from: 3, to: 3 + n, by: 2).map { UInt16(v[$0]) << 8 | UInt16(v[$0 + 1]) }
    }

    public func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.appendUInt16BE(psm)
        out.append(UInt8(versions.count * 2))
        for version in versions { out.appendUInt16BE(version) }
        return out
    }
}

/// The `FFF2` service data the lock advertises (ALIRO-FACTS BLE): the first byte (bits 0–2
/// advertisement version, 3–4 notification, 6 BLE only, 7 BLE+UWB: the certification tool's
/// `bleuwb_ud_neg_wrong_adv`), tx power, group id [0:8], sub id [0:2], 4-byte expiry, `00`,
/// 7-byte rotating tag. The tag is AES-ECB under the group resolving key; the BLE layer has no
/// crypto, so the key's block function is passed in (`rotate`).
public struct AliroAdvertisement: Equatable, Sendable {
    /// `ALIRO_BLUETOOTH_LE_ADVERTISEMENT_VERSION = 0x00` (aliro-actuator
    /// `transport_protocol/__init__.py` @ 0924ce5f1c35f56c3652f49e5a19690ab277ecec): the reference
    /// phone disconnects from any other.
    public static let version: UInt8 = 0x00

    /// Two bits (3–4); 0 = none.
    public var notification: UInt8 = 0
    public var advertisingVersion: UInt8 = AliroAdvertisement.version
    /// Bit 6: the lock speaks BLE without UWB (LockBench).
    public var bleOnly: Bool = true
    /// Bit 7: BLE with UWB ranging.
    public var bleUWB: Bool = false
    /// Whether any notification bit is set (bit 3, the older one-bit reading).
    public var notify: Bool {
        get { notification != 0 }
        set { notification = newValue ? 1 : 0 }
    }
    public var txPower: Int8 = 0
    public var groupID: [UInt8] = [UInt8](repeating: 0, count: 16)
    public var subID: [UInt8] = [UInt8](repeating: 0, count: 16)
    public var expiry: [UInt8] = [0, 0, 0, 0]
    public var tag: [UInt8] = [UInt8](repeating: 0, count: 7)

    public init() {}

    /// Decodes the 24-byte service data (the advertisement's `FFF2` service data after the UUID);
    /// nil when it is shorter. Bytes after the tag are ignored (a later version may add some).
    public init?(serviceData d: [UInt8]) {
        guard d.count >= 24 else { return nil }
        advertisingVersion = d[0] & 0x07
        notification = d[0] >> 3 & 0x03
        bleOnly = d[0] & 0x40 != 0
        bleUWB = d[0] & 0x80 != 0
        txPower = Int8(bitPattern: d[1])
        groupID = Array(d[2..<10])
        subID = Array(d[10..<12])
        expiry = Array(d[12..<16])
        tag = Array(d[17..<24])
    }

    /// Decodes the advertisement from advertising data (AD structures); nil without `FFF2` service data.
    public init?(advertisingData: [UInt8]) {
        guard let d = AdvertisingData.serviceData(AliroBLE.serviceUUID, in: advertisingData) else { return nil }
        self.init(serviceData: d)
    }

    /// The block the rotating tag encrypts: `00×6 ‖ address ‖ expiry` — the address most
    /// significant byte first (as printed), the expiry as advertised.
    public static func tagBlock(address: BLEAddress, expiry: [UInt8]) -> [UInt8] {
        [UInt8](repeating: 0, count: 6) + address.bytes.reversed() + Array((expiry + [0, 0, 0, 0]).prefix(4))
    }

    /// The expiry LockBench advertises: the end of the current `window` (Unix seconds, big-endian),
    /// windows counted from 1970-01-01; clamped to the 32-bit range.
    public static func expiry(at now: Date, window: TimeInterval) -> [UInt8] {
        let w = max(1, window.isFinite ? window : 1)
        let t = now.timeIntervalSince1970
        let end = t.isFinite ? ((t / w).rounded(.down) + 1) * w : 0
        let v = UInt32(clamping: Int64(max(0, min(end, Double(UInt32.max)))))
        return v.bigEndianBytes
    }

    /// The expiry as a date.
    public var expiryDate: Date {
        let e = (expiry + [0, 0, 0, 0]).prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return Date(timeIntervalSince1970: TimeInterval(e))
    }

    /// Fills expiry and tag for `address` at `now`: expiry = the end of the current window,
    /// tag = `cipher(00×6 ‖ address ‖ expiry)[0:7]`, `cipher` being AES-128 under the group
    /// resolving key (one 16-byte block, ECB).
    public mutating func rotate(address: BLEAddress, now: Date, window: TimeInterval, cipher: ([UInt8]) -> [UInt8]) {
        expiry = Self.expiry(at: now, window: window)
        tag = Array((cipher(Self.tagBlock(address: address, expiry: expiry)) + [UInt8](repeating: 0, count: 7)).prefix(7))
    }

    /// `version | notification << 3 | BLE only << 6 | BLE+UWB << 7`: `0x40` for LockBench.
    public var firstByte: UInt8 {
        (advertisingVersion & 0x07) | (notification & 0x03) << 3 | (bleOnly ? 0x40 : 0) | (bleUWB ? 0x80 : 0)
    }

    /// The 24-byte service data payload (after the UUID).
    public var serviceData: [UInt8] {
        var d: [UInt8] = [firstByte, UInt8(bitPattern: txPower)]
        d += Array((groupID + [UInt8](repeating: 0, count: 8)).prefix(8))
        d += Array((subID + [0, 0]).prefix(2))
        d += Array((expiry + [0, 0, 0, 0]).prefix(4))
        d.append(0)
        d += Array((tag + [UInt8](repeating: 0, count: 7)).prefix(7))
        return d
    }

    /// Advertising data: flags `06` and the service data — exactly 31 bytes, so the name goes in
    /// the scan response (which Bumble's virtual controller never sends).
    public var advertisingData: [UInt8] {
        AdvertisingData.structure(AdvertisingData.flags, [0x06])
            + AdvertisingData.structure(AdvertisingData.serviceData16, AliroBLE.serviceUUID.littleEndianBytes + serviceData)
    }

    public static func scanResponse(name: String) -> [UInt8] {
        let n = Array(name.utf8.prefix(29))
        return AdvertisingData.structure(n.count < name.utf8.count ? AdvertisingData.shortName : AdvertisingData.completeName, n)
    }
}

/// A frame on the access-protocol channel (ALIRO-FACTS BLE): `[type][id][len2 BE][payload]`,
/// one frame per L2CAP SDU — ByteCore's `ChannelMessage`, so the access protocol reads the same
/// value the radio framed.
public typealias AliroFrame = ChannelMessage

extension ChannelMessage {
    public enum ID {
        public static let command: UInt8 = 0x00
        public static let response: UInt8 = 0x01
        public static let event: UInt8 = ChannelMessage.Notification.event
        public static let initiate: UInt8 = ChannelMessage.Notification.initiateAccessProtocol
        public static let completed: UInt8 = ChannelMessage.Notification.accessProtocolCompleted
    }

    public static func command(_ apdu: [UInt8]) -> AliroFrame { AliroFrame(type: Kind.apdu, id: ID.command, payload: apdu) }
    public static func response(_ apdu: [UInt8]) -> AliroFrame { AliroFrame(type: Kind.apdu, id: ID.response, payload: apdu) }
    public static func completed(_ payload: [UInt8]) -> AliroFrame { AliroFrame(type: Kind.notification, id: ID.completed, payload: payload) }

    /// The Busy event (`02 00`, attribute `00` without value) a peer sends to ask for more time.
    public static let busy = AliroFrame(type: Kind.notification, id: ID.event, payload: [0x00, 0x00])

    /// Whether this is the phone's answer to a command (`00 01`).
    public var isResponse: Bool { type == Kind.apdu && id == ID.response }

    public init(parsing sdu: [UInt8]) throws(BLEError) {
        var r = ByteReader(sdu)
        guard let t = r.readUInt8(), let i = r.readUInt8(), let n = r.readUInt16BE(), let p = r.readArray(Int(n)) else {
            throw BLEError(.malformedPacket, "BLE frame: truncated (\(sdu.count) bytes)")
        }
        guard r.isAtEnd else { throw BLEError(.malformedPacket, "BLE frame: \(r.remaining) bytes after the payload") }
        self.init(type: t, id: i, payload: p)
    }
}
