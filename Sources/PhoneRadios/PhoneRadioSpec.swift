import ByteCore
import Foundation
import PhoneSeam
import SocketTransport

/// The registry of phone radios: what a spec names and which `PhoneRadio` serves it, the one
/// place the phone side's radios are chosen (the lock side's is `LockRunner.NFCSource`). A new
/// phone transport is one case here, its parse, and its radio in `radio(_:)`.
///
///     socket[:[HOST:]PORT]      the phone listens on TCP (default 127.0.0.1:5000)
///     pn532[:LINKPATH]          a virtual PN532 on a pty the lock opens with libnfc
///     vpicc[:[HOST:]PORT]       a card in pcscd's virtual reader vpcd (default 127.0.0.1:35963)
///     ble:TRANSPORT             a BLE central on an HCI controller (tcp:HOST:PORT, hci0…)
public enum PhoneRadioSpec: Equatable, Sendable, CustomStringConvertible {
    case socket(host: String, port: UInt16)
    case pn532(link: String?)
    case vpicc(host: String, port: UInt16)
    case ble(transport: String)

    /// The forms `init(parsing:)` takes, for `--help`.
    public static let forms = "socket[:[HOST:]PORT], pn532[:LINKPATH], vpicc[:[HOST:]PORT], ble:TRANSPORT"

    /// vpcd's first port (its reader "Virtual PCD 00 00"), the default of `vpicc`.
    public static let vpcdPort: UInt16 = 35963

    /// Longest spec taken (a path or a transport, not a document).
    static let maximumLength = 1024

    public init(parsing text: String) throws(PhoneRadioSpecError) {
        guard text.utf8.count <= Self.maximumLength else { throw PhoneRadioSpecError(text, "longer than \(Self.maximumLength) bytes") }
        let (scheme, rest) = text.firstIndex(of: ":").map { (String(text[..<$0]), String(text[text.index(after: $0)...])) } ?? (text, nil)
        switch scheme {
        case "socket":
            let (host, port) = try Self.address(rest, text, defaultPort: SocketCredentialServer.defaultPort)
            self = .socket(host: host, port: port)
        case "pn532":
            if let rest, rest.isEmpty { throw PhoneRadioSpecError(text, "pn532: names no link path after the colon") }
            self = .pn532(link: rest)
        case "vpicc":
            let (host, port) = try Self.address(rest, text, defaultPort: Self.vpcdPort)
            self = .vpicc(host: host, port: port)
        case "ble":
            guard let rest, !rest.isEmpty else { throw PhoneRadioSpecError(text, "ble needs a controller transport: ble:tcp:HOST:PORT or ble:hci0") }
            self = .ble(transport: rest)
        default:
            throw PhoneRadioSpecError(text, "unknown phone radio \"\(scheme.prefix(40))\"; one of \(Self.forms)")
        }
    }

    /// `PORT` or `HOST:PORT` (IPv4 host), a default for what is missing.
    static func address(_ rest: String?, _ text: String, defaultPort: UInt16) throws(PhoneRadioSpecError) -> (String, UInt16) {
        guard let rest else { return ("127.0.0.1", defaultPort) }
        let parts = rest.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= 2 else { throw PhoneRadioSpecError(text, "\"\(rest.prefix(80))\" is not PORT or HOST:PORT") }
        guard let port = UInt16(parts.last!) else { throw PhoneRadioSpecError(text, "port \"\(parts.last!.prefix(20))\" is not 0…65535") }
        let host = parts.count == 2 ? parts[0] : "127.0.0.1"
        guard !host.isEmpty else { throw PhoneRadioSpecError(text, "empty host before the port") }
        return (host, port)
    }

    public var description: String {
        switch self {
        case .socket(let h, let p): return "socket:\(h):\(p)"
        case .pn532(let link): return link.map { "pn532:\($0)" } ?? "pn532"
        case .vpicc(let h, let p): return "vpicc:\(h):\(p)"
        case .ble(let t): return "ble:\(t)"
        }
    }

    /// The interface a phone announces on this radio (AUTH1's interface byte).
    public var interface: RadioInterface {
        switch self {
        case .socket: return .socket
        case .pn532, .vpicc: return .nfc
        case .ble: return .ble
        }
    }

    /// What each radio may be told besides its spec.
    public struct Options: Sendable {
        /// The socket's APDU framing.
        public var framing: SocketFraming = .raw
        /// BLE: write the HCI traffic here.
        public var btsnoop: String?
        /// BLE: seconds to scan for the lock.
        public var scanTimeout: TimeInterval = 10
        public init() {}
    }

    /// Makes the radio this spec names, ready to present (listening, pty open, controller up).
    public func radio(_ options: Options = Options()) throws -> any PhoneRadio {
        switch self {
        case .socket(let host, let port): return try SocketPhoneRadio(host: host, port: port, framing: options.framing)
        case .pn532(let link): return try VirtualPN532PhoneRadio(link: link)
        case .vpicc(let host, let port): return VirtualICCPhoneRadio(host: host, port: port)
        case .ble(let transport): return try BLEPhoneRadio(transport: transport, btsnoop: options.btsnoop, scanTimeout: options.scanTimeout)
        }
    }
}

/// A phone radio spec that does not parse: the text and the rule it breaks.
public struct PhoneRadioSpecError: Error, CustomStringConvertible, Equatable {
    public let text: String
    public let reason: String
    init(_ text: String, _ reason: String) { self.text = String(text.prefix(120)); self.reason = reason }
    public var description: String { "phone radio \"\(text)\": \(reason)" }
}
