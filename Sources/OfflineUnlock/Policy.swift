import Foundation

/// A lock's access policy (the `policy` object of the lock configuration, docs/lock-config.md).
public struct LockPolicy: Equatable, Sendable, Codable {
    /// Documents whose validFrom…validUntil spans more than this are refused (`validity_too_long`).
    public var maxDocumentLifetime: TimeInterval = 7 * 86_400
    /// Tolerance for clock differences, applied to validity windows and rollback detection.
    public var clockLeeway: TimeInterval = 300
    /// How long the lock stays unsecured after a grant.
    public var relockTime: TimeInterval = 5
    /// The lock's schedule time zone as a fixed offset east of UTC, in minutes.
    public var scheduleUTCOffsetMinutes: Int = 0
    /// Protocol versions the lock accepts (`unsupported_version` otherwise).
    public var supportedProtocolVersions: [UInt16] = [0x0100, 0x0009]
    /// Versions below this are a `downgrade`; so is a credential coming back with a lower
    /// version than it used before.
    public var minimumProtocolVersion: UInt16 = 0x0009
    /// How many recent transaction ids the lock remembers to detect replays.
    public var replayWindow: Int = 1024
    /// How many access documents the lock caches (evicting the soonest to expire).
    public var maxCachedDocuments: Int = 256

    public init() {}

    enum CodingKeys: String, CodingKey {
        case maxDocumentLifetime, clockLeeway, relockTime, scheduleUTCOffsetMinutes
        case supportedProtocolVersions, minimumProtocolVersion, replayWindow, maxCachedDocuments
    }

    /// Durations are written as text (`"7d"`, `"5m"`, `"90s"`), versions as `"1.0"`, `"0.9"`;
    /// every key is optional and defaults as above.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func duration(_ k: CodingKeys) throws -> TimeInterval? {
            guard let s = try c.decodeIfPresent(String.self, forKey: k) else { return nil }
            guard let d = DurationText.parse(s) else {
                throw DecodingError.dataCorruptedError(forKey: k, in: c, debugDescription: "\"\(s)\" is not a duration like 90s, 5m, 8h, 7d")
            }
            return d
        }
        func version(_ s: String, _ k: CodingKeys) throws -> UInt16 {
            guard let v = ProtocolVersionText.parse(s) else {
                throw DecodingError.dataCorruptedError(forKey: k, in: c, debugDescription: "\"\(s)\" is not a version like 1.0")
            }
            return v
        }
        if let v = try duration(.maxDocumentLifetime) { maxDocumentLifetime = v }
        if let v = try duration(.clockLeeway) { clockLeeway = v }
        if let v = try duration(.relockTime) { relockTime = v }
        if let v = try c.decodeIfPresent(Int.self, forKey: .scheduleUTCOffsetMinutes) { scheduleUTCOffsetMinutes = v }
        if let v = try c.decodeIfPresent([String].self, forKey: .supportedProtocolVersions) {
            supportedProtocolVersions = try v.map { try version($0, .supportedProtocolVersions) }
        }
        if let v = try c.decodeIfPresent(String.self, forKey: .minimumProtocolVersion) { minimumProtocolVersion = try version(v, .minimumProtocolVersion) }
        if let v = try c.decodeIfPresent(Int.self, forKey: .replayWindow) { replayWindow = max(0, v) }
        if let v = try c.decodeIfPresent(Int.self, forKey: .maxCachedDocuments) { maxCachedDocuments = max(0, v) }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(DurationText.format(maxDocumentLifetime), forKey: .maxDocumentLifetime)
        try c.encode(DurationText.format(clockLeeway), forKey: .clockLeeway)
        try c.encode(DurationText.format(relockTime), forKey: .relockTime)
        try c.encode(scheduleUTCOffsetMinutes, forKey: .scheduleUTCOffsetMinutes)
        try c.encode(supportedProtocolVersions.map(ProtocolVersionText.format), forKey: .supportedProtocolVersions)
        try c.encode(ProtocolVersionText.format(minimumProtocolVersion), forKey: .minimumProtocolVersion)
        try c.encode(replayWindow, forKey: .replayWindow)
        try c.encode(maxCachedDocuments, forKey: .maxCachedDocuments)
    }
}

/// Durations as people write them: `90s`, `5m`, `8h`, `7d`, `1w`, combinations `1h30m`, or bare seconds.
public enum DurationText {
    public static func parse(_ text: String) -> TimeInterval? {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        if let s = Double(t), s >= 0 { return s }
        var total = 0.0, number = "", sawUnit = false
        for ch in t {
            if ch.isNumber || ch == "." { number.append(ch); continue }
            let unit: Double
            switch ch {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3600
            case "d": unit = 86_400
            case "w": unit = 604_800
            default: return nil
            }
            guard let n = Double(number) else { return nil }
            total += n * unit
            number = ""
            sawUnit = true
        }
        return number.isEmpty && sawUnit ? total : nil
    }

    public static func format(_ seconds: TimeInterval) -> String {
        var s = Int(seconds.rounded())
        if s == 0 { return "0s" }
        var out = ""
        for (unit, name) in [(86_400, "d"), (3600, "h"), (60, "m"), (1, "s")] where s >= unit {
            out += "\(s / unit)\(name)"
            s %= unit
        }
        return out
    }
}

/// Protocol versions as `major.minor` text: `1.0` = 0x0100, `0.9` = 0x0009.
public enum ProtocolVersionText {
    public static func parse(_ text: String) -> UInt16? {
        let p = text.split(separator: ".")
        guard p.count == 2, let a = UInt8(p[0]), let b = UInt8(p[1]) else { return nil }
        return UInt16(a) << 8 | UInt16(b)
    }
    public static func format(_ v: UInt16) -> String { "\(v >> 8).\(v & 0xFF)" }
}
