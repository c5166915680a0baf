import Foundation

/// Durations as people write them: `90s`, `5m`, `8h`, `7d`, `1w`, combinations `1h30m`, or bare
/// seconds (`90`, `1.5`). The one parser for every duration LockBench reads — the lock
/// configuration, CLI flags, the lock console — so each refuses the same things: signs, exponents,
/// `inf`, `nan`, and anything longer than `maximum`. A duration that parses is finite and adding it
/// to a representable date cannot trap.
public enum DurationText {
    /// The longest duration anything accepts: 100 years (36 525 days).
    public static let maximum: TimeInterval = 36_525 * 86_400

    /// Why a duration was refused, in words for the person who wrote it.
    public struct Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// The duration, or nil when `text` is not one (see `parse(_:within:what:)` for the reason).
    public static func parse(_ text: String) -> TimeInterval? {
        try? parse(text, within: 0...maximum, what: "duration")
    }

    /// The duration if it is well-formed and within `range`; otherwise a refusal naming `what`.
    /// `unitRequired`: a bare number is refused (a command-line flag: `--valid-for 8` is more
    /// likely 8 hours meant than 8 seconds, so the unit must be said).
    public static func parse(_ text: String, within range: ClosedRange<TimeInterval>, what: String, unitRequired: Bool = false) throws(Refusal) -> TimeInterval {
        if unitRequired, !text.isEmpty, text.trimmingCharacters(in: .whitespaces).allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) {
            throw Refusal(message: "\(what) \"\(text)\" has no unit: write it with one of s, m, h, d, w (e.g. \(text)s or \(text)h)")
        }
        guard let seconds = scan(text) else {
            throw Refusal(message: "\(what) \"\(text)\" is not a duration like 90s, 5m, 8h, 7d, 1h30m (at most \(format(maximum)))")
        }
        guard range.contains(seconds) else {
            throw Refusal(message: "\(what) \"\(text)\" is out of range: it must lie between \(format(range.lowerBound)) and \(format(range.upperBound))")
        }
        return seconds
    }

    /// Digits with an optional fraction, each followed by a unit, or one bare number; the total
    /// finite and at most `maximum`.
    private static func scan(_ text: String) -> TimeInterval? {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard !t.isEmpty, t.count <= 64 else { return nil }
        var total = 0.0, number = "", units = 0
        func take(_ unit: Double) -> Bool {
            guard !number.isEmpty, number.first != ".", number.filter({ $0 == "." }).count <= 1,
                  let n = Double(number), n.isFinite else { return false }
            total += n * unit
            number = ""
            return total.isFinite && total <= maximum
        }
        for ch in t {
            if ch.isASCII && (ch.isNumber || ch == ".") { number.append(ch); continue }
            let unit: Double
            switch ch {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3600
            case "d": unit = 86_400
            case "w": unit = 604_800
            default: return nil
            }
            guard take(unit) else { return nil }
            units += 1
        }
        if !number.isEmpty {
            guard units == 0, take(1) else { return nil }   // a bare number is seconds; "1h30" is not
        }
        return total
    }

    /// `7d`, `1h30m`, `0s`; whole seconds. A value no parser lets in (non-finite, beyond `maximum`) is written as `invalid-duration(<seconds>)` rather than trapping.
    public static func format(_ seconds: TimeInterval) -> String {
        if seconds < 0, -seconds <= maximum { return "-" + format(-seconds) }
        guard seconds.isFinite, seconds >= 0, seconds <= maximum else { return "invalid-duration(\(seconds))" }
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
