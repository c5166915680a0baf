import Foundation

/// One CBOR data item (RFC 8949), as a value.
///
/// - Integers: `.unsigned(n)` is n; `.negative(n)` is −1 − n (the wire form of major type 1),
///   so the whole range −2⁶⁴ … 2⁶⁴−1 is representable. Use `CBOR.int(_:)` for Swift `Int`s.
/// - Maps are Swift dictionaries: key order is not kept in memory, because the encoder always
///   writes the deterministic order (RFC 8949 §4.2.1: keys sorted bytewise by their encoding).
/// - Floats are decoded from half, single and double precision into `.float(Double)` and
///   encoded in the shortest of the three that keeps the value (RFC 8949 §4.2.2).
///
/// Equality follows the deterministic encoding: two floats are equal when they encode to the same
/// bytes (every NaN is `f9 7e00`; `0.0` and `-0.0` differ), so a map cannot hold two NaN keys that
/// would re-encode as a repeated key (a fuzzer finding).
public indirect enum CBOR: Hashable, Sendable {
    case unsigned(UInt64)
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map([CBOR: CBOR])
    case tagged(UInt64, CBOR)
    case simple(UInt8)
    case bool(Bool)
    case null
    case undefined
    case float(Double)

    /// A Swift integer as `.unsigned` or `.negative`.
    public static func int(_ value: Int) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }
    public static func int(_ value: Int64) -> CBOR { .int(Int(value)) }
}

extension CBOR {
    public static func == (lhs: CBOR, rhs: CBOR) -> Bool {
        switch (lhs, rhs) {
        case let (.unsigned(a), .unsigned(b)), let (.negative(a), .negative(b)): return a == b
        case let (.bytes(a), .bytes(b)): return a == b
        case let (.text(a), .text(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.map(a), .map(b)): return a == b
        case let (.tagged(t, a), .tagged(u, b)): return t == u && a == b
        case let (.simple(a), .simple(b)): return a == b
        case let (.bool(a), .bool(b)): return a == b
        case (.null, .null), (.undefined, .undefined): return true
        case let (.float(a), .float(b)): return a.isNaN ? b.isNaN : a.bitPattern == b.bitPattern
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .unsigned(let v): hasher.combine(0); hasher.combine(v)
        case .negative(let v): hasher.combine(1); hasher.combine(v)
        case .bytes(let v): hasher.combine(2); hasher.combine(v)
        case .text(let v): hasher.combine(3); hasher.combine(v)
        case .array(let v): hasher.combine(4); hasher.combine(v)
        case .map(let v): hasher.combine(5); hasher.combine(v)
        case .tagged(let t, let v): hasher.combine(6); hasher.combine(t); hasher.combine(v)
        case .simple(let v): hasher.combine(7); hasher.combine(v)
        case .bool(let v): hasher.combine(8); hasher.combine(v)
        case .null: hasher.combine(9)
        case .undefined: hasher.combine(10)
        case .float(let v): hasher.combine(11); hasher.combine(v.isNaN ? UInt64.max : v.bitPattern)
        }
    }
}

// MARK: - Literals

extension CBOR: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral {
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: CBOR...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (CBOR, CBOR)...) {
        var m = [CBOR: CBOR]()
        for (k, v) in elements { m[k] = v }
        self = .map(m)
    }
    public init(nilLiteral: ()) { self = .null }
}

// MARK: - Accessors (nil when the shape differs)

extension CBOR {
    /// The value as a Swift `Int`, when it is an integer that fits.
    public var intValue: Int? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int.max) ? Int(n) : nil
        case .negative(let n): return n <= UInt64(Int.max) ? -Int(n) - 1 : nil
        default: return nil
        }
    }
    public var uint64Value: UInt64? { if case .unsigned(let n) = self { return n } else { return nil } }
    public var bytesValue: [UInt8]? { if case .bytes(let b) = self { return b } else { return nil } }
    public var textValue: String? { if case .text(let t) = self { return t } else { return nil } }
    public var arrayValue: [CBOR]? { if case .array(let a) = self { return a } else { return nil } }
    public var mapValue: [CBOR: CBOR]? { if case .map(let m) = self { return m } else { return nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var doubleValue: Double? {
        switch self {
        case .float(let d): return d
        case .unsigned(let n): return Double(n)
        case .negative(let n): return -1 - Double(n)
        default: return nil
        }
    }
    /// The tag number and content, when tagged.
    public var tagValue: (tag: UInt64, content: CBOR)? {
        if case .tagged(let t, let c) = self { return (t, c) } else { return nil }
    }

    /// Map lookup: `cbor["1"]`, `cbor[2]`. nil when not a map or no such key.
    public subscript(key: CBOR) -> CBOR? {
        if case .map(let m) = self { return m[key] }
        return nil
    }
}

// MARK: - Tags 0, 1, 24 (RFC 8949 §3.4.1, §3.4.2, §3.4.5.1)

extension CBOR {
    public enum Tag {
        /// Standard date/time string (RFC 3339), content: text.
        public static let dateTimeString: UInt64 = 0
        /// Epoch-based date/time, content: integer or float seconds since 1970-01-01T00:00Z.
        public static let epochDateTime: UInt64 = 1
        /// Encoded CBOR data item, content: byte string holding one well-formed CBOR item.
        public static let encodedCBOR: UInt64 = 24
    }

    /// Tag 0 with an RFC 3339 UTC string at whole seconds (`2026-11-22T00:00:00Z`).
    public static func dateTime(_ date: Date) -> CBOR {
        .tagged(Tag.dateTimeString, .text(RFC3339.format(date)))
    }

    /// Tag 1 with integer seconds since the epoch.
    public static func epoch(_ date: Date) -> CBOR {
        .tagged(Tag.epochDateTime, .int(Int(date.timeIntervalSince1970.rounded(.down))))
    }

    /// The date of a tag 0 or tag 1 item; nil for anything else.
    public var dateValue: Date? {
        switch self {
        case .tagged(Tag.dateTimeString, .text(let s)): return RFC3339.parse(s)
        case .tagged(Tag.epochDateTime, let v):
            guard let seconds = v.doubleValue, RFC3339.isRepresentable(seconds: seconds) else { return nil }
            return Date(timeIntervalSince1970: seconds)
        default: return nil
        }
    }

    /// Tag 24 around the deterministic encoding of `item` (the `#6.24(bstr .cbor T)` of CDDL).
    public static func embedded(_ item: CBOR) -> CBOR {
        .tagged(Tag.encodedCBOR, .bytes(item.encoded()))
    }

    /// Tag 24 around exactly these bytes (kept as they are, e.g. to preserve a digest).
    public static func embedded(bytes: [UInt8]) -> CBOR {
        .tagged(Tag.encodedCBOR, .bytes(bytes))
    }

    /// The raw bytes inside a tag 24 item; nil when this is not tag 24 on bytes.
    public var embeddedBytes: [UInt8]? {
        if case .tagged(Tag.encodedCBOR, .bytes(let b)) = self { return b }
        return nil
    }

    /// Decodes the item inside a tag 24 wrapper.
    public func embeddedItem(options: CBORDecoder.Options = .init()) throws(CBORError) -> CBOR {
        guard let b = embeddedBytes else {
            throw CBORError(.unexpectedType, "expected tag 24 around a byte string, found \(kindName)")
        }
        return try CBOR(parsing: b, options: options)
    }

    /// A short name of the item's kind, for error messages.
    public var kindName: String {
        switch self {
        case .unsigned, .negative: return "integer"
        case .bytes: return "byte string"
        case .text: return "text string"
        case .array: return "array"
        case .map: return "map"
        case .tagged(let t, _): return "tag \(t)"
        case .simple(let v): return "simple(\(v))"
        case .bool: return "bool"
        case .null: return "null"
        case .undefined: return "undefined"
        case .float: return "float"
        }
    }
}

/// RFC 3339 timestamps at whole seconds in UTC, as LockBench writes them (`YYYY-MM-DDTHH:MM:SSZ`).
/// Parsing also accepts fractional seconds and numeric offsets.
public enum RFC3339 {
    /// The instants a four-digit year can name: 0000-01-01T00:00:00Z …
    public static let earliest = Date(timeIntervalSince1970: earliestSeconds)
    /// … 9999-12-31T23:59:59Z. Every date LockBench reads (documents, configuration, state,
    /// command line) lies in this range or is refused: a date outside it — or NaN, or infinite —
    /// would trap the integer conversions that format, compare and schedule it.
    public static let latest = Date(timeIntervalSince1970: latestSeconds)
    static let earliestSeconds: Double = -62_167_219_200
    static let latestSeconds: Double = 253_402_300_799

    /// Finite and within `earliest…latest`.
    public static func isRepresentable(_ date: Date) -> Bool { isRepresentable(seconds: date.timeIntervalSince1970) }

    public static func isRepresentable(seconds: Double) -> Bool {
        seconds.isFinite && seconds >= earliestSeconds && seconds <= latestSeconds
    }

    /// A date outside the representable range (which no parser lets in) is written as
    /// `invalid-time(<seconds>)` rather than trapping.
    public static func format(_ date: Date) -> String {
        let t = date.timeIntervalSince1970
        guard isRepresentable(seconds: t) else { return "invalid-time(\(t))" }
        return formatEpoch(Int64(t.rounded(.down)))
    }

    public static func formatEpoch(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rem = seconds - days * 86_400
        let (y, m, d) = civil(fromDays: days)
        let hh = rem / 3600, mm = (rem % 3600) / 60, ss = rem % 60
        func p2(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        var year = String(y)
        while year.count < 4 { year = "0" + year }
        return "\(year)-\(p2(m))-\(p2(d))T\(p2(hh)):\(p2(mm)):\(p2(ss))Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`; nil when malformed.
    public static func parse(_ text: String) -> Date? {
        let c = Array(text.utf8)
        func num(_ from: Int, _ len: Int) -> Int64? {
            guard from + len <= c.count else { return nil }
            var v: Int64 = 0
            for i in from..<from + len {
                guard c[i] >= 48, c[i] <= 57 else { return nil }
                v = v * 10 + Int64(c[i] - 48)
            }
            return v
        }
        guard c.count >= 20, c[4] == UInt8(ascii: "-"), c[7] == UInt8(ascii: "-"),
              c[10] == UInt8(ascii: "T") || c[10] == UInt8(ascii: "t"),
              c[13] == UInt8(ascii: ":"), c[16] == UInt8(ascii: ":"),
              let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2),
              let h = num(11, 2), let mi = num(14, 2), let s = num(17, 2),
              (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61 else { return nil }
        var i = 19
        var fraction = 0.0
        if i < c.count, c[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 0.1
            let start = i
            while i < c.count, c[i] >= 48, c[i] <= 57 { fraction += Double(c[i] - 48) * scale; scale /= 10; i += 1 }
            guard i > start else { return nil }
        }
        var offset: Int64 = 0
        guard i < c.count else { return nil }
        if c[i] == UInt8(ascii: "Z") || c[i] == UInt8(ascii: "z") {
            i += 1
        } else if c[i] == UInt8(ascii: "+") || c[i] == UInt8(ascii: "-") {
            // RFC 3339's time-numoffset: hours 00–23, minutes 00–59 (`+99:99` is no offset).
            guard let oh = num(i + 1, 2), c.count > i + 3, c[i + 3] == UInt8(ascii: ":"), let om = num(i + 4, 2), oh < 24, om < 60 else { return nil }
            offset = (oh * 3600 + om * 60) * (c[i] == UInt8(ascii: "+") ? 1 : -1)
            i += 6
        } else { return nil }
        guard i == c.count else { return nil }
        let days = days(fromCivil: y, mo, d)
        guard civil(fromDays: days) == (y, mo, d) else { return nil }
        let secs = days * 86_400 + h * 3600 + mi * 60 + s - offset
        guard isRepresentable(seconds: Double(secs)) else { return nil }   // e.g. 0000-01-01T00:00:00+01:00
        return Date(timeIntervalSince1970: Double(secs) + fraction)
    }

    // Howard Hinnant's civil-from-days algorithms (proleptic Gregorian).
    static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
