import BLE
import ByteCore
import Foundation
import Lock
import OfflineUnlock

/// The radios' part of the lock configuration file: its `nfc` and `ble` objects
/// (docs/lock-config.md). The lock (`LockConfiguration`, module Lock) decides, acts and records and
/// never reads them; the runtime starts the radios from them. Both parts are read from, and
/// written to, the same JSON object, so the file's format is one.
public struct RadioSettings: Codable, Equatable, Sendable {
    public struct NFC: Codable, Equatable, Sendable {
        /// A libnfc connstring (`pn532_uart:/dev/ttyUSB0`, `acr122_usb`, …); absent = the virtual PN532.
        public var connstring: String?
        public init(connstring: String? = nil) { self.connstring = connstring }
    }

    public struct BLE: Codable, Equatable, Sendable {
        /// `hci0`, `uart:/dev/ttyUSB0`, `tcp:HOST:PORT`, `unix:PATH`; absent = no BLE.
        public var transport: String?
        /// The lock's static random address (`C3:12:34:56:78:9A`); absent = derived from the reader
        /// identity (docs/ble.md). Checked where the BLE layer parses it (`lock run`).
        public var address: String?
        /// A link with no access-protocol channel open for this long is dropped.
        public var idleTimeout: TimeInterval = 5
        /// A channel with no traffic for this long is closed and its link dropped.
        public var transactionTimeout: TimeInterval = 10
        /// The group resolving key (16 bytes, 32 hex digits) the advertisement's rotating tag is
        /// computed under; absent = derived from the reader group id (docs/ble.md).
        public var groupResolvingKey: String?
        /// How long one rotating tag (and its expiry) lives.
        public var tagRotation: TimeInterval = 900

        public init(transport: String? = nil) { self.transport = transport }

        enum CodingKeys: String, CodingKey { case transport, address, idleTimeout, transactionTimeout, groupResolvingKey, tagRotation }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            func duration(_ k: CodingKeys) throws -> TimeInterval? {
                guard let s = try c.decodeIfPresent(String.self, forKey: k) else { return nil }
                guard let d = DurationText.parse(s), d > 0, d <= 86_400 * 7 else {
                    throw DecodingError.dataCorruptedError(forKey: k, in: c, debugDescription: "\"\(s)\" is not a duration like 5s, 10s, 15m (more than 0, at most 7d)")
                }
                return d
            }
            transport = try c.decodeIfPresent(String.self, forKey: .transport)
            address = try c.decodeIfPresent(String.self, forKey: .address)
            if let v = try duration(.idleTimeout) { idleTimeout = v }
            if let v = try duration(.transactionTimeout) { transactionTimeout = v }
            if let v = try duration(.tagRotation) { tagRotation = v }
            groupResolvingKey = try c.decodeIfPresent(String.self, forKey: .groupResolvingKey)
            if let k = groupResolvingKey, Hex.decode(k)?.count != 16 {
                throw DecodingError.dataCorruptedError(forKey: .groupResolvingKey, in: c, debugDescription: "must be 32 hex digits (16 bytes), got \"\(k)\"")
            }
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encodeIfPresent(transport, forKey: .transport)
            try c.encodeIfPresent(address, forKey: .address)
            try c.encode(DurationText.format(idleTimeout), forKey: .idleTimeout)
            try c.encode(DurationText.format(transactionTimeout), forKey: .transactionTimeout)
            try c.encodeIfPresent(groupResolvingKey, forKey: .groupResolvingKey)
            try c.encode(DurationText.format(tagRotation), forKey: .tagRotation)
        }
    }

    public var nfc: NFC?
    public var ble: BLE?

    public init(nfc: NFC? = nil, ble: BLE? = nil) { self.nfc = nfc; self.ble = ble }
}

/// The lock configuration file as a whole: the lock's part (`LockConfiguration`) and the radios'
/// part (`RadioSettings`), side by side in one JSON object.
public struct LockFile: Codable, Equatable, Sendable {
    public var lock: LockConfiguration
    public var radios: RadioSettings

    public init(lock: LockConfiguration, radios: RadioSettings = RadioSettings()) {
        self.lock = lock
        self.radios = radios
    }

    public init(from decoder: Decoder) throws {
        lock = try LockConfiguration(from: decoder)
        radios = try RadioSettings(from: decoder)
    }

    /// Both parts write into the same object (each its own keys).
    public func encode(to encoder: Encoder) throws {
        try lock.encode(to: encoder)
        try radios.encode(to: encoder)
    }

    /// Reads and checks the file: the lock's part as `LockConfiguration.load` does, then the
    /// radios'; every problem names the file and the field (`lock.json: field ble.idleTimeout: …`).
    public static func load(path: String) throws(LockError) -> LockFile {
        // A path that names no file is bad input (exit 2, as a missing key file is); a file that is
        // there but cannot be read is the machine's failure (exit 3).
        guard FileManager.default.fileExists(atPath: path) else {
            throw LockError(.invalidConfiguration, "lock configuration \(path): no such file (check the --config path)")
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw LockError(.io, "cannot read lock configuration \(path)") }
        return try load(data, path: path)
    }

    /// `load(path:)` on bytes already read from `path` (the fuzz target `config` enters here).
    public static func load(_ data: Data, path: String) throws(LockError) -> LockFile {
        let lock = try LockConfiguration.load(data, path: path)
        let radios: RadioSettings
        do { radios = try JSONDecoder().decode(RadioSettings.self, from: data) } catch {
            throw LockError(.invalidConfiguration, "\(path): \(LockConfiguration.describe(error, decoding: RadioSettings.self, in: data))")
        }
        // Checked when read, not when `lock run --ble` first needs it.
        if let address = radios.ble?.address {
            do throws(BLEError) { _ = try BLEAddress(staticRandom: address) } catch {
                throw LockError(.invalidConfiguration, "\(path): ble.address: \(error.reason)")
            }
        }
        return LockFile(lock: lock, radios: radios)
    }

    /// The file's bytes: pretty JSON, keys sorted (`config create`, `config check --json`).
    public func encoded() -> Data {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try! e.encode(self)
    }
}
