import ByteCore
import Codecs
import Foundation

/// A Schedule as the official reader cases write it (the tool's `schedule.py`, Aliro
/// `Schedule`): a start time, an optional end, an optional recurrence rule and flags, in seconds
/// since the Unix epoch. Access rules name schedules by their index in the document's schedule
/// list (`ReaderRule.allowScheduleIDs`, `denyScheduleIDs`). Cases:
/// nfc_rdr_stepup_ad_access_rule_schedules.py @ 0b6dfe1d, nfc_rdr_neg_stepup_ad_no_valid_schedule_allow_scheduleid.py
/// @ 12e49c9b, nfc_rdr_neg_stepup_ad_valid_schedule_deny_scheduleid.py @ 34b97e38.
///
/// ```cddl
/// Schedule = {
///   0: uint .le 0xFFFFFFFF,   ; start time
///   ? 1: uint .le 0xFFFFFFFF, ; end time (0 or absent: none)
///   ? 2: bstr .size 11,       ; recurrence rule (RecurrenceRule)
///   3: uint .le 0xFF          ; flags: bit 0 time in UTC (else the lock's local time)
/// }                           ; other keys skipped
/// ```
/// Told apart from LockBench's `WeeklySchedule` ({0: days, 1: start minute, 2: end minute}) by its
/// flags (key 3) or a byte-string key 2 (`AccessSchedule`).
public struct AliroSchedule: Equatable, Hashable, Sendable, CustomStringConvertible {
    public static let timeInUTC: UInt8 = 1 << 0
    public var flags: UInt8
    public var startTime: UInt32
    /// 0: no end.
    public var endTime: UInt32
    public var rule: RecurrenceRule?

    public init(flags: UInt8 = AliroSchedule.timeInUTC, startTime: UInt32, endTime: UInt32 = 0, rule: RecurrenceRule? = nil) throws(DocumentError) {
        guard flags & ~Self.timeInUTC == 0 else { throw DocumentError(.malformed, "schedule flags \(Hex.encode([flags])): only bit 0 (time in UTC) is defined") }
        guard endTime == 0 || endTime > startTime || rule != nil else {
            throw DocumentError(.malformed, "schedule end time \(endTime) is not after its start time \(startTime)")
        }
        self.flags = flags; self.startTime = startTime; self.endTime = endTime; self.rule = rule
    }

    public var isUTC: Bool { flags & Self.timeInUTC != 0 }

    public var description: String {
        let base = "from \(startTime)\(isUTC ? " UTC" : " local")" + (endTime == 0 ? "" : " until \(endTime)")
        return base + (rule.map { ", \($0)" } ?? "")
    }

    /// Whether `time` falls in an occurrence. A local-time schedule is read in the zone
    /// `utcOffsetMinutes` east of UTC (the lock's policy). A pattern LockBench does not evaluate
    /// (monthly, yearly) contains nothing: it cannot allow, and as a deny schedule the caller
    /// treats it as in force (`inForce`).
    public func contains(_ time: Date, utcOffsetMinutes: Int) -> Bool {
        guard RFC3339.isRepresentable(time), (-1440...1440).contains(utcOffsetMinutes) else { return false }
        let t = Int64(time.timeIntervalSince1970.rounded(.down)) + (isUTC ? 0 : Int64(utcOffsetMinutes) * 60)
        let start = Int64(startTime), end = endTime == 0 ? Int64.max : Int64(endTime)
        guard t >= start else { return false }
        guard let rule else { return t < end }
        guard let pattern = rule.evaluable else { return false }
        let duration = Int64(rule.durationSeconds)
        // The latest occurrence that starts at or before `t` and after `t − duration` decides;
        // occurrences start on days at the start time's time of day. Look back at most
        // `lookBackDays` (a hostile duration must not make a decision loop for years).
        let day = Self.floorDiv(t, 86_400), startDay = Self.floorDiv(start, 86_400)
        let timeOfDay = start - startDay * 86_400
        let earliest = max(startDay, Self.floorDiv(t - duration, 86_400), day - Self.lookBackDays)
        var d = day
        while d >= earliest {
            let occurrence = d * 86_400 + timeOfDay
            if occurrence <= t, occurrence >= start, occurrence < end, t < occurrence + duration,
               pattern.occurs(onDay: d, startDay: startDay, interval: Int64(rule.interval), mask: rule.mask) {
                return true
            }
            d -= 1
        }
        return false
    }

    /// Whether a deny schedule is in force at `time`: it contains it, or its pattern is one
    /// LockBench cannot evaluate (refusing is the safe side).
    public func inForce(_ time: Date, utcOffsetMinutes: Int) -> Bool {
        if let rule, rule.evaluable == nil { return true }
        return contains(time, utcOffsetMinutes: utcOffsetMinutes)
    }

    static let lookBackDays: Int64 = 400

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

    var cbor: CBOR {
        var m: [CBOR: CBOR] = [0: .unsigned(UInt64(startTime)), 3: .unsigned(UInt64(flags))]
        if endTime != 0 { m[1] = .unsigned(UInt64(endTime)) }
        if let rule { m[2] = .bytes(rule.encoded()) }
        return .map(m)
    }

    init(cbor m: [CBOR: CBOR]) throws(DocumentError) {
        do {
            func uint32(_ key: Int, _ what: String) throws -> UInt32? {
                guard let v = lookup(m, key) else { return nil }
                guard let n = v.uint64Value, n <= UInt64(UInt32.max) else {
                    throw DocumentError(.malformed, "\(what) (key \(key)) must be an unsigned integer ≤ 0xFFFFFFFF, found \(v.kindName)")
                }
                return UInt32(n)
            }
            guard let start = try uint32(0, "schedule start time") else { throw CBORError(.missingField, "schedule start time (key 0) is missing") }
            guard let flags = try uint32(3, "schedule flags") else { throw CBORError(.missingField, "schedule flags (key 3) is missing") }
            guard flags <= 0xFF else { throw DocumentError(.malformed, "schedule flags \(flags) exceed one byte") }
            let rule = try lookup(m, 2).map { try RecurrenceRule(parsing: try $0.asBytes("schedule recurrence rule")) }
            try self.init(flags: UInt8(flags), startTime: start, endTime: try uint32(1, "schedule end time") ?? 0, rule: rule)
        } catch {
            throw DocumentError.wrap(error, "Schedule")
        }
    }
}

/// The 11-byte recurrence rule of a Schedule (the tool's `recurrence_rule.py`, `to_bytearray`):
/// duration in seconds (4 bytes), mask (4), pattern (1), interval (1), ordinal (1, signed).
/// Multi-byte fields are read big-endian: the tool writes them in `Utility.BYTE_ORDER`, which is
/// not in the stored files read; the cases' rules (DAILY, mask 0) read the same either way but
/// for the duration, whose big-endian reading LockBench also writes.
public struct RecurrenceRule: Equatable, Hashable, Sendable, CustomStringConvertible {
    public enum Pattern: UInt8, Sendable {
        case daily = 1, weekly, monthlyByDay, monthlyByDate, yearlyByDay, yearlyByDate, yearlyByWeek, yearlyByMonthWeek

        /// Whether an occurrence starts on `day` (days since 1970-01-01) for a schedule starting
        /// on `startDay`.
        func occurs(onDay day: Int64, startDay: Int64, interval: Int64, mask: UInt32) -> Bool {
            switch self {
            case .daily:
                return (day - startDay) % interval == 0
            case .weekly:
                // Weeks run Monday to Sunday; 1970-01-01 was a Thursday (index 3, Monday = 0).
                let weekday = { (d: Int64) in Int((((d + 3) % 7) + 7) % 7) }
                let days = mask == 0 ? UInt32(1) << UInt32(weekday(startDay)) : mask
                guard days & (1 << UInt32(weekday(day))) != 0 else { return false }
                let week = AliroSchedule.floorDiv(day - Int64(weekday(day)), 7), startWeek = AliroSchedule.floorDiv(startDay - Int64(weekday(startDay)), 7)
                return (week - startWeek) % interval == 0
            default:
                return false
            }
        }
    }

    public static let byteCount = 11
    public var durationSeconds: UInt32
    public var mask: UInt32
    public var pattern: UInt8
    public var interval: UInt8
    public var ordinal: Int8

    public init(durationSeconds: UInt32, pattern: Pattern, interval: UInt8 = 1, mask: UInt32 = 0, ordinal: Int8 = 0) throws(DocumentError) {
        try self.init(durationSeconds: durationSeconds, mask: mask, pattern: pattern.rawValue, interval: interval, ordinal: ordinal)
    }

    init(durationSeconds: UInt32, mask: UInt32, pattern: UInt8, interval: UInt8, ordinal: Int8) throws(DocumentError) {
        guard durationSeconds > 0 else { throw DocumentError(.malformed, "recurrence rule duration is 0 seconds") }
        guard interval > 0 else { throw DocumentError(.malformed, "recurrence rule interval is 0") }
        guard let p = Pattern(rawValue: pattern) else { throw DocumentError(.malformed, "recurrence rule pattern \(pattern) is not 1–8") }
        switch p {
        case .daily where mask != 0 || ordinal != 0:
            throw DocumentError(.malformed, "a daily recurrence rule has mask 0 and ordinal 0, found mask \(mask) ordinal \(ordinal)")
        case .weekly where mask & ~0x7F != 0 || ordinal != 0:
            throw DocumentError(.malformed, "a weekly recurrence rule has a weekday mask (bits 0–6) and ordinal 0, found mask \(mask) ordinal \(ordinal)")
        default: break
        }
        self.durationSeconds = durationSeconds; self.mask = mask; self.pattern = pattern; self.interval = interval; self.ordinal = ordinal
    }

    public init(parsing bytes: [UInt8]) throws(DocumentError) {
        guard bytes.count == Self.byteCount else {
            throw DocumentError(.malformed, "recurrence rule is \(bytes.count) bytes, expected \(Self.byteCount)")
        }
        func u32(_ i: Int) -> UInt32 { bytes[i..<(i + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
        try self.init(durationSeconds: u32(0), mask: u32(4), pattern: bytes[8], interval: bytes[9], ordinal: Int8(bitPattern: bytes[10]))
    }

    public func encoded() -> [UInt8] {
        func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        return be(durationSeconds) + be(mask) + [pattern, interval, UInt8(bitPattern: ordinal)]
    }

    /// The pattern when LockBench evaluates it (daily, weekly); nil for the monthly and yearly ones.
    var evaluable: Pattern? {
        guard let p = Pattern(rawValue: pattern), p == .daily || p == .weekly else { return nil }
        return p
    }

    public var description: String {
        let name = Pattern(rawValue: pattern).map { "\($0)" } ?? "pattern \(pattern)"
        return "\(name) every \(interval), \(durationSeconds) s" + (mask == 0 ? "" : " mask \(String(mask, radix: 16))")
    }
}

/// One entry of an access document's schedule list (AccessData key 3): LockBench's weekly window
/// or an Aliro Schedule. Rules name entries by index (`ReaderRule.allowScheduleIDs`).
public enum AccessSchedule: Equatable, Hashable, Sendable, CustomStringConvertible {
    case weekly(WeeklySchedule)
    case aliro(AliroSchedule)

    public var description: String {
        switch self {
        case .weekly(let w): return w.description
        case .aliro(let a): return a.description
        }
    }

    public func contains(_ time: Date, utcOffsetMinutes: Int) -> Bool {
        switch self {
        case .weekly(let w): return w.contains(time, utcOffsetMinutes: utcOffsetMinutes)
        case .aliro(let a): return a.contains(time, utcOffsetMinutes: utcOffsetMinutes)
        }
    }

    public func inForce(_ time: Date, utcOffsetMinutes: Int) -> Bool {
        switch self {
        case .weekly(let w): return w.contains(time, utcOffsetMinutes: utcOffsetMinutes)
        case .aliro(let a): return a.inForce(time, utcOffsetMinutes: utcOffsetMinutes)
        }
    }

    var cbor: CBOR {
        switch self {
        case .weekly(let w): return w.cbor
        case .aliro(let a): return a.cbor
        }
    }

    init(cbor: CBOR) throws(DocumentError) {
        let m: [CBOR: CBOR]
        do { m = try cbor.asMap("Schedule") } catch { throw DocumentError.wrap(error, "Schedule") }
        // An Aliro Schedule carries flags (key 3) or a recurrence rule as bytes (key 2).
        if lookup(m, 3) != nil || lookup(m, 2)?.bytesValue != nil {
            self = .aliro(try AliroSchedule(cbor: m))
        } else {
            self = .weekly(try WeeklySchedule(cbor: cbor))
        }
    }
}
