import struct AccessProtocol.TransactionLimits
import ByteCore
import Codecs
import Crypto
import Foundation
import OfflineUnlock

/// The lock configuration file (JSON; docs/lock-config.md). Relative paths are relative to the
/// file's own directory.
///
/// ```json
/// {
///   "model": "NDE", "firmware": "03.20.00",
///   "reader": { "signingKey": "reader.key.pem",
///               "groupID": "a1a1…(32 hex)", "subID": "b1b1…(32 hex)" },
///   "trustedIssuers": ["issuer.pub.pem"],
///   "policy": { "maxDocumentLifetime": "7d", "clockLeeway": "5m", "relockTime": "5s" },
///   "stateDirectory": "state",
///   "clock": "2026-03-02T09:00:00Z",
///   "nfc": { "connstring": "pn532_uart:/dev/ttyUSB0" },
///   "ble": { "transport": "tcp:127.0.0.1:9000" }
/// }
/// ```
public struct LockConfiguration: Codable, Equatable, Sendable {
    public struct Reader: Codable, Equatable, Sendable {
        /// PEM PKCS#8 private key of the reader (signs AUTH1).
        public var signingKey: String
        /// 16-byte reader group id, 32 hex digits.
        public var groupID: String
        /// 16-byte reader sub id, 32 hex digits.
        public var subID: String
        public init(signingKey: String, groupID: String, subID: String) {
            self.signingKey = signingKey; self.groupID = groupID; self.subID = subID
        }
    }
    public struct NFC: Codable, Equatable, Sendable {
        /// A libnfc connstring (`pn532_uart:/dev/ttyUSB0`, `acr122_usb`, …); absent = the virtual PN532.
        public var connstring: String?
        public init(connstring: String? = nil) { self.connstring = connstring }
    }
    public struct BLE: Codable, Equatable, Sendable {
        /// `hci0`, `uart:/dev/ttyUSB0`, `tcp:HOST:PORT`, `unix:PATH`; absent = no BLE.
        public var transport: String?
        public init(transport: String? = nil) { self.transport = transport }
    }

    public var model: String
    public var firmware: String
    public var reader: Reader
    /// PEM SPKI public key files of the issuers whose documents this lock accepts.
    public var trustedIssuers: [String]
    public var policy: LockPolicy
    /// Where state, the audit log and its key live.
    public var stateDirectory: String
    /// The virtual clock at first start: an RFC 3339 time (frozen there, CI) or "system" (running).
    public var clock: String?
    public var nfc: NFC?
    public var ble: BLE?
    /// Bounds on each transaction (absent: `TransactionLimits()` defaults).
    public var transaction: TransactionLimits?
    /// The audit (and state) HMAC key file; absent = `STATE/audit.key`. Keep it off the state
    /// directory's disk so that whoever can rewrite the state cannot also re-sign it.
    public var auditKeyFile: String?
    /// The directory relative paths are resolved against (not stored in the file).
    public var baseDirectory: String = "."

    enum CodingKeys: String, CodingKey {
        case model, firmware, reader, trustedIssuers, policy, stateDirectory, clock, nfc, ble, transaction, auditKeyFile
    }

    public init(model: String, firmware: String, reader: Reader, trustedIssuers: [String], policy: LockPolicy = LockPolicy(),
                stateDirectory: String, clock: String? = nil, nfc: NFC? = nil, ble: BLE? = nil, baseDirectory: String = ".") {
        self.model = model; self.firmware = firmware; self.reader = reader; self.trustedIssuers = trustedIssuers
        self.policy = policy; self.stateDirectory = stateDirectory; self.clock = clock; self.nfc = nfc; self.ble = ble
        self.baseDirectory = baseDirectory
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        model = try c.decode(String.self, forKey: .model)
        firmware = try c.decode(String.self, forKey: .firmware)
        reader = try c.decode(Reader.self, forKey: .reader)
        trustedIssuers = try c.decodeIfPresent([String].self, forKey: .trustedIssuers) ?? []
        policy = try c.decodeIfPresent(LockPolicy.self, forKey: .policy) ?? LockPolicy()
        stateDirectory = try c.decodeIfPresent(String.self, forKey: .stateDirectory) ?? "state"
        clock = try c.decodeIfPresent(String.self, forKey: .clock)
        nfc = try c.decodeIfPresent(NFC.self, forKey: .nfc)
        ble = try c.decodeIfPresent(BLE.self, forKey: .ble)
        transaction = try c.decodeIfPresent(TransactionLimits.self, forKey: .transaction)
        auditKeyFile = try c.decodeIfPresent(String.self, forKey: .auditKeyFile)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(model, forKey: .model)
        try c.encode(firmware, forKey: .firmware)
        try c.encode(reader, forKey: .reader)
        try c.encode(trustedIssuers, forKey: .trustedIssuers)
        try c.encode(policy, forKey: .policy)
        try c.encode(stateDirectory, forKey: .stateDirectory)
        try c.encodeIfPresent(clock, forKey: .clock)
        try c.encodeIfPresent(nfc, forKey: .nfc)
        try c.encodeIfPresent(ble, forKey: .ble)
        try c.encodeIfPresent(transaction, forKey: .transaction)
        try c.encodeIfPresent(auditKeyFile, forKey: .auditKeyFile)
    }

    /// Reads and checks a configuration file; every problem names the file and the field.
    public static func load(path: String) throws(LockError) -> LockConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else { throw LockError(.io, "cannot read lock configuration \(path)") }
        var config: LockConfiguration
        do { config = try JSONDecoder().decode(LockConfiguration.self, from: data) } catch {
            throw LockError(.invalidConfiguration, "\(path): \(describe(error))")
        }
        config.baseDirectory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        do throws(DurationText.Refusal) { try config.policy.validate() } catch { throw LockError(.invalidConfiguration, "\(path): \(error.message)") }
        _ = try config.readerIdentity()
        _ = try config.readerSigningKey()
        _ = try config.trustStore()
        _ = try config.initialClock()
        return config
    }

    public func encoded() -> Data {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try! e.encode(self)
    }

    public func resolve(_ p: String) -> String { p.hasPrefix("/") ? p : baseDirectory + "/" + p }

    public var stateDirectoryPath: String { resolve(stateDirectory) }

    /// The audit key file: `auditKeyFile`, or `audit.key` in the state directory.
    public var auditKeyPath: String { auditKeyFile.map(resolve) ?? stateDirectoryPath + "/" + AuditLog.keyFileName }

    public func readerIdentity() throws(LockError) -> ReaderIdentity {
        guard let g = Hex.decode(reader.groupID), g.count == 16 else {
            throw LockError(.invalidIdentity, "reader.groupID must be 32 hex digits (16 bytes), got \"\(reader.groupID)\"")
        }
        guard let s = Hex.decode(reader.subID), s.count == 16 else {
            throw LockError(.invalidIdentity, "reader.subID must be 32 hex digits (16 bytes), got \"\(reader.subID)\"")
        }
        return ReaderIdentity(groupID: g, subID: s)
    }

    public func readerSigningKey() throws(LockError) -> P256.Signing.PrivateKey {
        do throws(LockError) { return try PrivateKeyFile.load(resolve(reader.signingKey)) } catch {
            throw LockError(error.code, "reader.signingKey: \(error.reason)")
        }
    }

    public func trustStore() throws(LockError) -> TrustStore {
        var store = try! TrustStore()
        for (i, p) in trustedIssuers.enumerated() {
            let path = resolve(p)
            guard let data = FileManager.default.contents(atPath: path), let pem = String(data: data, encoding: .utf8) else {
                throw LockError(.invalidIdentity, "trustedIssuers[\(i)]: cannot read \(path)")
            }
            do { try store.add(try Primitives.publicKey(spkiPEM: pem)) } catch {
                throw LockError(.invalidIdentity, "trustedIssuers[\(i)] \(path): \(error.reason)")
            }
        }
        return store
    }

    /// The clock mode at first start.
    public func initialClock() throws(LockError) -> VirtualClock.Mode {
        guard let c = clock, c != "system" else { return .running(offset: 0) }
        guard let d = RFC3339.parse(c) else {
            throw LockError(.invalidConfiguration, "clock must be an RFC 3339 time like 2026-03-02T09:00:00Z or \"system\", got \"\(c)\"")
        }
        return .frozen(d)
    }

    static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let k, let ctx):
            return "missing field \((ctx.codingPath + [k]).map(\.stringValue).joined(separator: "."))"
        case DecodingError.typeMismatch(_, let ctx), DecodingError.valueNotFound(_, let ctx):
            return "field \(ctx.codingPath.map(\.stringValue).joined(separator: ".")): \(ctx.debugDescription)"
        case DecodingError.dataCorrupted(let ctx):
            let at = ctx.codingPath.map(\.stringValue).joined(separator: ".")
            return (at.isEmpty ? "" : "field \(at): ") + ctx.debugDescription + ((ctx.underlyingError).map { " (\($0))" } ?? "")
        default:
            return "\(error)"
        }
    }
}
