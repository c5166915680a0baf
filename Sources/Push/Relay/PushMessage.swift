import Foundation
import TrustModel

/// One push as the relay takes it from a backend (APNs or FCM shape): the device token, the data
/// fields the app receives, and the delivery options both services share.
public struct PushMessage: Sendable, Equatable {
    /// Which front door it came in by (the refusals are worded per service).
    public enum Service: String, Sendable { case apns, fcm, local }

    public var token: String
    /// Data fields, strings only (FCM `message.data`: "the values must be strings").
    public var data: [String: String]
    /// The whole payload as the service measures it (the JSON body's `aps`+custom keys, or FCM's
    /// data), in bytes.
    public var payloadBytes: Int
    /// Seconds the relay keeps it for an unreachable device; 0 = deliver now or never (APNs
    /// `apns-expiration: 0`, FCM `ttl: "0s"`).
    public var timeToLive: TimeInterval
    /// A newer message with the same id replaces a stored one (APNs `apns-collapse-id`, FCM
    /// `collapse_key`), at most 64 bytes.
    public var collapseID: String?
    /// A background (content-available / data-only) push: the OS may throttle it and never
    /// delivers it to an app the user force-quit.
    public var background: Bool
    public var service: Service

    public init(token: String, data: [String: String], payloadBytes: Int? = nil, timeToLive: TimeInterval = PushRules.defaultTimeToLive,
                collapseID: String? = nil, background: Bool = true, service: Service = .local) {
        self.token = token; self.data = data
        self.payloadBytes = payloadBytes ?? PushRules.compactJSON(data).utf8.count
        self.timeToLive = timeToLive; self.collapseID = collapseID; self.background = background; self.service = service
    }
}

/// The limits both services publish, in one place.
public enum PushRules {
    /// APNs: "the maximum size allowed for a notification payload is 4096 bytes"; FCM: 4096 bytes
    /// of data for a data message.
    public static let maxPayloadBytes = 4096
    /// APNs `apns-collapse-id`: "the value of this key must not exceed 64 bytes".
    public static let maxCollapseIDBytes = 64
    /// FCM's default and maximum time to live: 4 weeks.
    public static let defaultTimeToLive: TimeInterval = 28 * 86400
    /// Messages stored per token while its device is unreachable (APNs keeps one, FCM up to 100
    /// per device); beyond this the oldest is dropped.
    public static let maxStoredPerToken = 100
    /// A device token: 1…4096 bytes of printable ASCII without blanks (the trust API's rule for
    /// the tokens phones register, so both ends agree).
    public static let maxTokenBytes = PushTokenRules.maxBytes

    /// Compact JSON of string fields with sorted keys and unescaped slashes: the form payload
    /// sizes are measured in.
    public static func compactJSON(_ fields: [String: String]) -> String {
        CompactJSON.object(fields.sorted { $0.key < $1.key }.map { ($0.key, CompactJSON.string($0.value)) })
    }

    /// Why a message is refused before it is queued, or nil.
    public static func check(_ m: PushMessage) -> PushRefusal? {
        if !PushTokenRules.isValid(m.token) { return .badDeviceToken }
        if m.payloadBytes > maxPayloadBytes { return .payloadTooLarge(m.payloadBytes) }
        if let c = m.collapseID, c.utf8.count > maxCollapseIDBytes { return .badCollapseID(c.utf8.count) }
        if m.timeToLive < 0 || !m.timeToLive.isFinite { return .badExpiration }
        return nil
    }
}

/// Why the relay refused a message, and how each service says it.
public enum PushRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    case payloadTooLarge(Int)
    case badCollapseID(Int)
    case badExpiration
    case badDeviceToken
    /// The token was valid once and is no more (app uninstalled, token rotated).
    case unregistered(since: Date)
    /// FCM: a data value that is not a string, or a body that is not a message.
    case invalidArgument(String)
    /// The caller is not the one the resource belongs to (an inbox opened with another secret).
    case forbidden(String)
    /// The relay verifies senders (`push serve --provider-key`) and the push carried no token.
    case missingProviderToken
    /// The provider token is malformed, signed by another key, or not ES256.
    case invalidProviderToken(String)
    /// The provider token is more than an hour old.
    case expiredProviderToken
    /// The phone's inbox, or the relay's inboxes together, hold as many bytes as they may.
    case inboxFull(String)

    public var description: String {
        switch self {
        case .payloadTooLarge(let n): return "the payload is \(n) bytes; at most \(PushRules.maxPayloadBytes) are allowed"
        case .badCollapseID(let n): return "the collapse id is \(n) bytes; at most \(PushRules.maxCollapseIDBytes) are allowed"
        case .badExpiration: return "the expiration / ttl is not a non-negative number of seconds"
        case .badDeviceToken: return "the device token is empty, longer than \(PushRules.maxTokenBytes) bytes, or not printable ASCII, or was never registered"
        case .unregistered: return "the device token is no longer registered (app removed or token rotated)"
        case .invalidArgument(let m), .forbidden(let m), .inboxFull(let m): return m
        case .missingProviderToken: return "this relay verifies senders: send Authorization: bearer PROVIDER-TOKEN (an ES256 token signed with the relay's provider key)"
        case .invalidProviderToken(let m): return "the provider token is refused: \(m)"
        case .expiredProviderToken: return "the provider token is more than \(Int(ProviderToken.lifetime)) s old; sign a new one"
        }
    }

    /// The reason as a metric label (`lockbench_trust_push_failures_total{reason=…}`).
    public var metricReason: String {
        switch self {
        case .payloadTooLarge: return "payload_too_large"
        case .badCollapseID: return "bad_collapse_id"
        case .badExpiration: return "bad_expiration"
        case .badDeviceToken: return "bad_device_token"
        case .unregistered: return "unregistered"
        case .invalidArgument: return "refused"
        case .forbidden: return "forbidden"
        case .missingProviderToken: return "missing_provider_token"
        case .invalidProviderToken: return "invalid_provider_token"
        case .expiredProviderToken: return "expired_provider_token"
        case .inboxFull: return "inbox_full"
        }
    }

    /// APNs: HTTP status and `reason`.
    public var apns: (status: Int, reason: String) {
        switch self {
        case .payloadTooLarge: return (413, "PayloadTooLarge")
        case .badCollapseID: return (400, "BadCollapseId")
        case .badExpiration: return (400, "BadExpirationDate")
        case .badDeviceToken: return (400, "BadDeviceToken")
        case .unregistered: return (410, "Unregistered")
        case .invalidArgument: return (400, "BadMessageId")
        case .forbidden: return (403, "Forbidden")
        case .missingProviderToken: return (403, "MissingProviderToken")
        case .invalidProviderToken: return (403, "InvalidProviderToken")
        case .expiredProviderToken: return (403, "ExpiredProviderToken")
        case .inboxFull: return (429, "TooManyRequests")
        }
    }

    /// FCM v1: HTTP status and `error.status` (and the FcmError `errorCode`).
    public var fcm: (status: Int, code: String) {
        switch self {
        case .unregistered: return (404, "UNREGISTERED")
        case .badDeviceToken: return (400, "INVALID_ARGUMENT")
        case .forbidden: return (403, "PERMISSION_DENIED")
        case .missingProviderToken, .invalidProviderToken, .expiredProviderToken: return (401, "UNAUTHENTICATED")
        case .inboxFull: return (429, "QUOTA_EXCEEDED")
        default: return (400, "INVALID_ARGUMENT")
        }
    }
}

/// JSON text in the compact form payload sizes are measured in (no blanks, slashes not escaped);
/// Certification's `JSONText` writes the readable form with blanks.
public enum CompactJSON {
    public static func string(_ s: String) -> String {
        var out = "\""
        out.reserveCapacity(s.utf8.count + 2)
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20: out += String(format: "\\u%04x", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    /// An object from already-encoded member values, in the order given.
    public static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    public static func array(_ items: [String]) -> String { "[" + items.joined(separator: ",") + "]" }
}
