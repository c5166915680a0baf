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
    /// Whether the lock evaluates schedules. A lock set without (`false`, `config create
    /// --no-schedules`) refuses every document that uses one (`schedules_not_supported`): the
    /// official NFC_RDR_NEG_STEPUP_AD_SCHEDULE_IN_ACCESS_RULE_AND_READER ("rejection of Access
    /// Document with schedules if reader does not support them") expects that refusal.
    public var supportsSchedules: Bool = true

    public init() {}

    /// What each field may be. A configuration outside these is refused when it is read (config
    /// file, `config create` flags), so no duration can overflow a date and no offset an integer.
    public enum Bounds {
        public static let maxDocumentLifetime: ClosedRange<TimeInterval> = 1...(3660 * 86_400)   // ≤ 10 years
        public static let clockLeeway: ClosedRange<TimeInterval> = 0...86_400                    // ≤ 1 day
        public static let relockTime: ClosedRange<TimeInterval> = 0...3600                       // ≤ 1 hour
        public static let scheduleUTCOffsetMinutes: ClosedRange<Int> = -720...840                // UTC−12 … UTC+14
        public static let replayWindow: ClosedRange<Int> = 0...1_048_576
        public static let maxCachedDocuments: ClosedRange<Int> = 0...65_536
    }

    /// Every field within `Bounds`; the first that is not, in words.
    public func validate() throws(DurationText.Refusal) {
        func check(_ v: TimeInterval, _ r: ClosedRange<TimeInterval>, _ name: String) throws(DurationText.Refusal) {
            guard v.isFinite, r.contains(v) else {
                throw DurationText.Refusal(message: "policy.\(name) \(DurationText.format(v)) is out of range: it must lie between \(DurationText.format(r.lowerBound)) and \(DurationText.format(r.upperBound))")
            }
        }
        func check(_ v: Int, _ r: ClosedRange<Int>, _ name: String) throws(DurationText.Refusal) {
            guard r.contains(v) else { throw DurationText.Refusal(message: "policy.\(name) \(v) is out of range \(r.lowerBound)…\(r.upperBound)") }
        }
        try check(maxDocumentLifetime, Bounds.maxDocumentLifetime, "maxDocumentLifetime")
        try check(clockLeeway, Bounds.clockLeeway, "clockLeeway")
        try check(relockTime, Bounds.relockTime, "relockTime")
        try check(scheduleUTCOffsetMinutes, Bounds.scheduleUTCOffsetMinutes, "scheduleUTCOffsetMinutes")
        try check(replayWindow, Bounds.replayWindow, "replayWindow")
        try check(maxCachedDocuments, Bounds.maxCachedDocuments, "maxCachedDocuments")
        // A lock that supports no version refuses every phone: surely not what was meant.
        guard !supportedProtocolVersions.isEmpty else {
            throw DurationText.Refusal(message: "policy.supportedProtocolVersions is empty: the lock would refuse every phone; name at least one version, e.g. [\"1.0\"]")
        }
    }

    enum CodingKeys: String, CodingKey {
        case maxDocumentLifetime, clockLeeway, relockTime, scheduleUTCOffsetMinutes
        case supportedProtocolVersions, minimumProtocolVersion, replayWindow, maxCachedDocuments, supportsSchedules
    }

    /// Durations are written as text (`"7d"`, `"5m"`, `"90s"`), versions as `"1.0"`, `"0.9"`;
    /// every key is optional and defaults as above.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func duration(_ k: CodingKeys, _ range: ClosedRange<TimeInterval>) throws -> TimeInterval? {
            guard let s = try c.decodeIfPresent(String.self, forKey: k) else { return nil }
            do throws(DurationText.Refusal) { return try DurationText.parse(s, within: range, what: "value") } catch {
                throw DecodingError.dataCorruptedError(forKey: k, in: c, debugDescription: error.message)
            }
        }
        func integer(_ k: CodingKeys, _ range: ClosedRange<Int>) throws -> Int? {
            guard let v = try c.decodeIfPresent(Int.self, forKey: k) else { return nil }
            guard range.contains(v) else {
                throw DecodingError.dataCorruptedError(forKey: k, in: c, debugDescription: "\(v) is out of range \(range.lowerBound)…\(range.upperBound)")
            }
            return v
        }
        func version(_ s: String, _ k: CodingKeys) throws -> UInt16 {
            guard let v = ProtocolVersionText.parse(s) else {
                throw DecodingError.dataCorruptedError(forKey: k, in: c, debugDescription: "\"\(s)\" is not a version like 1.0")
            }
            return v
        }
        if let v = try duration(.maxDocumentLifetime, Bounds.maxDocumentLifetime) { maxDocumentLifetime = v }
        if let v = try duration(.clockLeeway, Bounds.clockLeeway) { clockLeeway = v }
        if let v = try duration(.relockTime, Bounds.relockTime) { relockTime = v }
        if let v = try integer(.scheduleUTCOffsetMinutes, Bounds.scheduleUTCOffsetMinutes) { scheduleUTCOffsetMinutes = v }
        if let v = try c.decodeIfPresent([String].self, forKey: .supportedProtocolVersions) {
            // As `validate` says: a lock that supports no version refuses every phone.
            guard !v.isEmpty else {
                throw DecodingError.dataCorruptedError(forKey: .supportedProtocolVersions, in: c,
                                                       debugDescription: "empty: the lock would refuse every phone; name at least one version, e.g. [\"1.0\"]")
            }
            supportedProtocolVersions = try v.map { try version($0, .supportedProtocolVersions) }
        }
        if let v = try c.decodeIfPresent(String.self, forKey: .minimumProtocolVersion) { minimumProtocolVersion = try version(v, .minimumProtocolVersion) }
        if let v = try integer(.replayWindow, Bounds.replayWindow) { replayWindow = v }
        if let v = try integer(.maxCachedDocuments, Bounds.maxCachedDocuments) { maxCachedDocuments = v }
        if let v = try c.decodeIfPresent(Bool.self, forKey: .supportsSchedules) { supportsSchedules = v }
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
        // Written only when off: the configurations of ordinary locks stay as they were.
        if !supportsSchedules { try c.encode(false, forKey: .supportsSchedules) }
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
