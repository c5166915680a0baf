import Foundation

/// The mobile wake-up tutorial's rules, each where the code applies it (docs/trust.md lists them).
public enum WakeUpRules {
    /// "the length of this string should not be more than 4093 bytes" (compact JSON payload).
    public static let maxPayloadBytes = 4093
    /// "If the length is 4064 bytes-long or more" the payload is cut down (value → TooBig,
    /// childEvent → OnlyKeys or TooBig).
    public static let reduceFromBytes = 4064
    /// "Subscription path length cannot be more than 2048 bytes."
    public static let maxPathBytes = 2048
    /// An application (namespace) name: 1…128 bytes of letters, digits, `-` and `_`.
    public static let maxAppBytes = 128
}

/// The REST answer for a refused wake-up request: status code and the JSON `status` string.
public struct WakeUpError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// 404: "No application found with this name".
        case namespaceDoesNotExist = "namespace_does_not_exist"
        /// 403: "Mobile wake-up feature is disabled for this application".
        case disabled
        /// 403: "Security rules prevent read access to the data located at the subscribed data node".
        case permissionDenied = "permission_denied"
        /// 403: "The data located at the subscribed data node is too big".
        case tooBig = "too_big"
        /// 400: a path over 2048 bytes, a missing `id`, an unknown mode, a body that is not JSON.
        case badRequest = "bad_request"
        case pathTooLong = "path_too_long"
        /// 507: the application's data, or all applications' together, would pass the relay's bound.
        case storageFull = "storage_full"

        public var httpStatus: Int {
            switch self {
            case .namespaceDoesNotExist: return 404
            case .disabled, .permissionDenied, .tooBig: return 403
            case .badRequest, .pathTooLong: return 400
            case .storageFull: return 507
            }
        }
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) { self.code = code; self.message = message }
    public var description: String { "\(code.httpStatus) \(code.rawValue): \(message)" }
}

/// Why a subscription ended, sent to the device as `t="revoke"`, `r=<reason>`.
public enum WakeUpRevocation: String, Sendable, CaseIterable {
    case permissionDenied = "permission_denied"
    case namespaceDoesNotExist = "namespace_does_not_exist"
    case disabled
    case expired
    case tooBig = "too_big"
}

/// A subscription mode: what the wake-up message carries.
public enum WakeUpMode: String, Sendable, CaseIterable {
    case noData, value, childEvent

    /// `mode` query parameter: absent or empty = `noData` ("null, this is the default value").
    public init(parsing text: String?) throws(WakeUpError) {
        guard let text, !text.isEmpty, text != "null" else { self = .noData; return }
        guard let m = WakeUpMode(rawValue: text) else {
            throw WakeUpError(.badRequest, "mode \"\(text.prefix(32))\" is not one of noData, value, childEvent")
        }
        self = m
    }
}

/// A subscription path: the sub-path after `.wakeup`, at most 2048 bytes, `sp` = "/a/b".
public struct WakeUpPath: Sendable, Hashable, CustomStringConvertible {
    public var segments: [String]

    public init(parsing text: String) throws(WakeUpError) {
        guard text.utf8.count <= WakeUpRules.maxPathBytes else {
            throw WakeUpError(.pathTooLong, "the path is \(text.utf8.count) bytes; a subscription path is at most \(WakeUpRules.maxPathBytes) bytes")
        }
        var segments = [String]()
        for s in text.split(separator: "/", omittingEmptySubsequences: true) {
            if let bad = s.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F || "\"\\#$[]".unicodeScalars.contains($0) }) {
                throw WakeUpError(.badRequest, "path segment \"\(s.prefix(32))\" holds U+\(String(format: "%04X", bad.value)), which a data key may not hold")
            }
            if s.hasPrefix(".") { throw WakeUpError(.badRequest, "path segment \"\(s.prefix(32))\" starts with \".\" (reserved, like .wakeup)") }
            segments.append(String(s))
        }
        self.segments = segments
    }

    public init(segments: [String]) { self.segments = segments }

    /// The `sp` field.
    public var description: String { "/" + segments.joined(separator: "/") }

    /// This path equals `other` or lies under it.
    public func isWithin(_ other: WakeUpPath) -> Bool { segments.starts(with: other.segments) }
}

/// The data payload of a wake-up message, with the size rules applied.
public enum WakeUpPayload {
    public static func size(_ fields: [String: String]) -> Int { PushRules.compactJSON(fields).utf8.count }

    /// noData: `t`, `app`, `sp`.
    public static func noData(app: String, sp: String) -> [String: String] { ["t": "noData", "app": app, "sp": sp] }

    /// value: `t`, `app`, `sp`, `s="OK"`, `d` = the node's JSON; from 4064 bytes `s="TooBig"` and no `d`.
    public static func value(app: String, sp: String, node: WakeUpValue?) -> [String: String] {
        var full = ["t": "value", "app": app, "sp": sp, "s": "OK", "d": (node ?? .null).encoded()]
        if size(full) >= WakeUpRules.reduceFromBytes {
            full["d"] = nil
            full["s"] = "TooBig"
        }
        return full
    }

    /// childEvent: `added` (object), `removed` (array of keys), `changed` (object), each a JSON
    /// string; from 4064 bytes `s="OnlyKeys"` (added/changed keys → true) if that is under 4064,
    /// else `s="TooBig"` with the three fields empty (`{}`, `[]`, `{}`).
    public static func childEvent(app: String, sp: String, old: WakeUpValue?, new: WakeUpValue?) -> [String: String] {
        let before = old?.children ?? [:], after = new?.children ?? [:]
        var added = [String: WakeUpValue](), changed = [String: WakeUpValue]()
        for (k, v) in after {
            if let was = before[k] { if was != v { changed[k] = v } } else { added[k] = v }
        }
        let removed = before.keys.filter { after[$0] == nil }.sorted().map(CompactJSON.string)
        func fields(_ s: String, _ a: [String: WakeUpValue], _ r: [String], _ c: [String: WakeUpValue]) -> [String: String] {
            ["t": "childEvent", "app": app, "sp": sp, "s": s,
             "added": WakeUpValue.object(a).encoded(), "removed": CompactJSON.array(r), "changed": WakeUpValue.object(c).encoded()]
        }
        let full = fields("OK", added, removed, changed)
        if size(full) < WakeUpRules.reduceFromBytes { return full }
        let keys = fields("OnlyKeys", added.mapValues { _ in .bool(true) }, removed, changed.mapValues { _ in .bool(true) })
        if size(keys) < WakeUpRules.reduceFromBytes { return keys }
        return fields("TooBig", [:], [], [:])
    }

    /// `t="revoke"`, `r`, `app`, `sp`.
    public static func revoke(app: String, sp: String, reason: WakeUpRevocation) -> [String: String] {
        ["t": "revoke", "r": reason.rawValue, "app": app, "sp": sp]
    }
}
