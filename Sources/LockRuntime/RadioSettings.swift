import Foundation

/// Where a lock's radios are: the `"nfc"` and `"ble"` members of its configuration file, read by
/// the runtime (the lock's own `LockConfiguration` knows no radio). Flags on `lock run` override them.
///
///     "nfc": { "connstring": "pcsc:ACS ACR1252 1S CL Reader PICC 0" },
///     "ble": { "transport": "tcp:127.0.0.1:9000" }
public struct RadioSettings: Codable, Equatable, Sendable {
    public struct NFC: Codable, Equatable, Sendable {
        /// What `--nfc` takes: a libnfc connstring, `virtual[:LINK]`, `pcsc[:READER]`; absent = the virtual PN532.
        public var connstring: String?
        public init(connstring: String? = nil) { self.connstring = connstring }
    }
    public struct BLE: Codable, Equatable, Sendable {
        /// `hci0`, `uart:/dev/ttyUSB0`, `tcp:HOST:PORT`, `unix:PATH`; absent = no BLE.
        public var transport: String?
        public init(transport: String? = nil) { self.transport = transport }
    }

    public var nfc: NFC?
    public var ble: BLE?

    public init(nfc: NFC? = nil, ble: BLE? = nil) {
        self.nfc = nfc
        self.ble = ble
    }

    /// The radio members of the configuration file at `path` (absent members: none).
    public static func load(path: String) throws -> RadioSettings {
        guard let data = FileManager.default.contents(atPath: path) else { throw LockServiceError("cannot read lock configuration \(path)") }
        do { return try JSONDecoder().decode(RadioSettings.self, from: data) } catch {
            throw LockServiceError("\(path): the \"nfc\" or \"ble\" member is not {\"connstring\": …} / {\"transport\": …}: \(error)")
        }
    }

    /// `json` (a lock configuration) with these members added, keys sorted as the lock writes them.
    public func added(to json: Data) -> Data {
        guard nfc != nil || ble != nil, var object = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any],
              let mine = (try? JSONSerialization.jsonObject(with: JSONEncoder().encode(self))) as? [String: Any] else { return json }
        object.merge(mine) { _, new in new }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? json
    }

    /// The NFC reader spec: `virtual` when the member is there without a connstring.
    public var nfcSpec: String? { nfc.map { $0.connstring ?? "virtual" } }
}
