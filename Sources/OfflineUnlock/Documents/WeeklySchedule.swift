import Codecs
import Foundation

/// A weekly time window: on these days, from `start` to `end` (minutes after local midnight,
/// end exclusive). "Local" is the lock's schedule time zone, a fixed UTC offset in the lock's
/// policy (`scheduleUTCOffsetMinutes`, default 0 = UTC) — documents carry wall-clock windows and
/// the lock decides where its wall is; fixed offsets keep the decision pure (no tz database,
/// no DST jumps). A window across midnight is written as two windows.
///
/// ```cddl
/// Schedule = {
///   0: uint .le 127,      ; days: bit 0 Monday … bit 6 Sunday
///   1: uint .le 1439,     ; start minute
///   2: uint .le 1440      ; end minute (exclusive), > start
/// }
/// ```
/// Text form (CLI, JSON): `mon-fri 08:00-18:00`, `sat,sun 10:00-14:00`, `daily 00:00-24:00`.
public struct WeeklySchedule: Equatable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// Bit 0 Monday … bit 6 Sunday.
    public var days: UInt8
    public var start: Int
    public var end: Int

    public static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    public init(days: UInt8, start: Int, end: Int) throws(DocumentError) {
        guard days != 0, days < 0x80 else { throw DocumentError(.malformed, "schedule days bitmap \(days) must name 1–7 days") }
        guard (0..<1440).contains(start), (1...1440).contains(end), end > start else {
            throw DocumentError(.malformed, "schedule window \(start)–\(end) minutes is not within one day with end after start")
        }
        self.days = days; self.start = start; self.end = end
    }

    /// Parses `DAYS HH:MM-HH:MM`; DAYS is `daily`, `weekdays`, `weekends`, or a comma list of
    /// days and ranges (`mon-fri,sun`).
    public init(parsing text: String) throws(DocumentError) {
        let parts = text.lowercased().split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2 else { throw DocumentError(.malformed, "schedule \"\(text)\": expected \"DAYS HH:MM-HH:MM\", e.g. \"mon-fri 08:00-18:00\"") }
        var days: UInt8 = 0
        switch parts[0] {
        case "daily": days = 0x7F
        case "weekdays": days = 0x1F
        case "weekends": days = 0x60
        default:
            for piece in parts[0].split(separator: ",") {
                let ends = piece.split(separator: "-").map(String.init)
                guard (1...2).contains(ends.count), let a = Self.dayNames.firstIndex(of: ends[0]),
                      let b = Self.dayNames.firstIndex(of: ends.last!), a <= b else {
                    throw DocumentError(.malformed, "schedule \"\(text)\": unknown days \"\(piece)\" (use mon…sun, ranges like mon-fri)")
                }
                for d in a...b { days |= 1 << UInt8(d) }
            }
        }
        let times = parts[1].split(separator: "-").map(String.init)
        func minute(_ s: String) -> Int? {
            let hm = s.split(separator: ":")
            guard hm.count == 2, let h = Int(hm[0]), let m = Int(hm[1]), (0...24).contains(h), (0..<60).contains(m) else { return nil }
            return h * 60 + m
        }
        guard times.count == 2, let s = minute(times[0]), let e = minute(times[1]) else {
            throw DocumentError(.malformed, "schedule \"\(text)\": expected a time window like 08:00-18:00")
        }
        try self.init(days: days, start: s, end: e)
    }

    public var description: String {
        let names: String
        switch days {
        case 0x7F: names = "daily"
        case 0x1F: names = "weekdays"
        case 0x60: names = "weekends"
        default: names = (0..<7).filter { days & (1 << UInt8($0)) != 0 }.map { Self.dayNames[$0] }.joined(separator: ",")
        }
        func hm(_ m: Int) -> String { String(format: "%02d:%02d", m / 60, m % 60) }
        return "\(names) \(hm(start))-\(hm(end))"
    }

    /// Whether `time` falls in this window in a zone `utcOffsetMinutes` east of UTC.
    /// A time outside years 0000–9999 or an offset beyond ±1 day (which no parser lets in) is in
    /// no window.
    public func contains(_ time: Date, utcOffsetMinutes: Int) -> Bool {
        guard RFC3339.isRepresentable(time), (-1440...1440).contains(utcOffsetMinutes) else { return false }
        let local = Int64(time.timeIntervalSince1970.rounded(.down)) + Int64(utcOffsetMinutes) * 60
        let day = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let weekday = Int(((day + 3) % 7 + 7) % 7)        // 1970-01-01 was a Thursday (index 3)
        let minute = Int((local - day * 86_400) / 60)
        return days & (1 << UInt8(weekday)) != 0 && minute >= start && minute < end
    }

    var cbor: CBOR { [0: .unsigned(UInt64(days)), 1: .int(start), 2: .int(end)] }

    init(cbor: CBOR) throws(DocumentError) {
        do {
            let m = try cbor.asMap("Schedule")
            let d = try field(m, 0, "schedule days").asInt("schedule days")
            guard (0...127).contains(d) else { throw DocumentError(.malformed, "schedule days \(d) out of range") }
            try self.init(days: UInt8(d), start: try field(m, 1, "schedule start").asInt("schedule start"),
                          end: try field(m, 2, "schedule end").asInt("schedule end"))
        } catch {
            throw DocumentError.wrap(error, "Schedule")
        }
    }

    // Codable as its text form.
    public init(from decoder: Decoder) throws { try self.init(parsing: try decoder.singleValueContainer().decode(String.self)) }
    public func encode(to encoder: Encoder) throws { var c = encoder.singleValueContainer(); try c.encode(description) }
}
