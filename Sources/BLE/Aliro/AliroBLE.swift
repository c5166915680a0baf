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

    /// The SPSM characteristic's value.
    public static func spsmValue(psm: UInt16) -> [UInt8] {
        var v = [UInt8]()
        v.appendUInt16BE(psm)
        return v + [0x02] + protocolVersion
    }

    /// Parses the SPSM characteristic's value.
    public static func psm(fromCharacteristic v: [UInt8]) -> UInt16? {
        guard v.count >= 2 else { return nil }
        return UInt16(v[0]) << 8 | UInt16(v[1])
    }

    /// The lock's GATT service.
    public static func service(psm: UInt16, onVersionSelected: (([UInt8]) -> Void)? = nil) -> ServiceDefinition {
        ServiceDefinition(uuid: BLEUUID(serviceUUID), characteristics: [
            CharacteristicDefinition(uuid: spsmCharacteristic, properties: .read, value: spsmValue(psm: psm)),
            CharacteristicDefinition(uuid: versionCharacteristic, properties: [.read, .write], value: protocolVersion, onWrite: onVersionSelected),
        ])
    }
}

/// The `FFF2` service data the lock advertises (ALIRO-FACTS BLE): `(notify<<3)|advVersion`,
/// tx power, group id [0:8], sub id [0:2], 4-byte expiry, `00`, 7-byte rotating tag. The tag is
/// AES-ECB under the group resolving key; the BLE layer has no crypto, so the key's block
/// function is passed in (`rotate`).
public struct AliroAdvertisement: Equatable, Sendable {
    public var notify: Bool = false
    public var advertisingVersion: UInt8 = 1
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
        notify = d[0] & 0x08 != 0
        advertisingVersion = d[0] & 0x07
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

    /// The 24-byte service data payload (after the UUID).
    public var serviceData: [UInt8] {
        var d: [UInt8] = [(notify ? 0x08 : 0) | (advertisingVersion & 0x07), UInt8(bitPattern: txPower)]
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
/// one frame per L2CAP SDU.
public struct AliroFrame: Equatable, Sendable {
    public enum Kind {
        public static let apdu: UInt8 = 0x00
        public static let notification: UInt8 = 0x02
        public static let timeSync: UInt8 = 0x03
    }
    public enum ID {
        public static let command: UInt8 = 0x00
        public static let response: UInt8 = 0x01
        public static let initiate: UInt8 = 0x05
        public static let completed: UInt8 = 0x03
    }

    public var type: UInt8
    public var id: UInt8
    public var payload: [UInt8]

    public init(type: UInt8, id: UInt8, payload: [UInt8]) {
        self.type = type
        self.id = id
        self.payload = payload
    }

    public static func command(_ apdu: [UInt8]) -> AliroFrame { AliroFrame(type: Kind.apdu, id: ID.command, payload: apdu) }
    public static func response(_ apdu: [UInt8]) -> AliroFrame { AliroFrame(type: Kind.apdu, id: ID.response, payload: apdu) }
    public static func completed(_ payload: [UInt8]) -> AliroFrame { AliroFrame(type: Kind.notification, id: ID.completed, payload: payload) }

    public func encoded() -> [UInt8] {
        var out: [UInt8] = [type, id]
        out.appendUInt16BE(UInt16(payload.count))
        return out + payload
    }

    public init(parsing sdu: [UInt8]) throws(BLEError) {
        var r = ByteReader(sdu)
        guard let t = r.readUInt8(), let i = r.readUInt8(), let n = r.readUInt16BE(), let p = r.readArray(Int(n)) else {
            throw BLEError(.malformedPacket, "BLE frame: truncated (\(sdu.count) bytes)")
        }
        guard r.isAtEnd else { throw BLEError(.malformedPacket, "BLE frame: \(r.remaining) bytes after the payload") }
        self.init(type: t, id: i, payload: p)
    }
}
