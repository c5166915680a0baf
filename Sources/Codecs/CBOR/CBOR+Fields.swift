import ByteCore
import Foundation

/// Typed reads out of a decoded tree with precise errors: phase two of "bytes → tree → value".
extension CBOR {
    /// The map entries, or `unexpectedType` naming `what`.
    public func asMap(_ what: String) throws(CBORError) -> [CBOR: CBOR] {
        guard case .map(let m) = self else { throw CBORError(.unexpectedType, "\(what): expected map, found \(kindName)") }
        return m
    }
    public func asArray(_ what: String) throws(CBORError) -> [CBOR] {
        guard case .array(let a) = self else { throw CBORError(.unexpectedType, "\(what): expected array, found \(kindName)") }
        return a
    }
    public func asBytes(_ what: String) throws(CBORError) -> [UInt8] {
        guard case .bytes(let b) = self else { throw CBORError(.unexpectedType, "\(what): expected byte string, found \(kindName)") }
        return b
    }
    public func asText(_ what: String) throws(CBORError) -> String {
        guard case .text(let t) = self else { throw CBORError(.unexpectedType, "\(what): expected text string, found \(kindName)") }
        return t
    }
    public func asInt(_ what: String) throws(CBORError) -> Int {
        guard let v = intValue else { throw CBORError(.unexpectedType, "\(what): expected integer, found \(kindName)") }
        return v
    }
    public func asBool(_ what: String) throws(CBORError) -> Bool {
        guard case .bool(let b) = self else { throw CBORError(.unexpectedType, "\(what): expected bool, found \(kindName)") }
        return b
    }
    public func asDate(_ what: String) throws(CBORError) -> Date {
        guard let d = dateValue else { throw CBORError(.unexpectedType, "\(what): expected tag 0 or 1 date, found \(kindName)") }
        return d
    }
}

extension Dictionary where Key == CBOR, Value == CBOR {
    /// A numbered field under either spelling of its key: text `"1"` or integer `1` (ALIRO-FACTS
    /// writes both; other encoders pick either).
    public func numbered(_ n: Int) -> CBOR? { self[.text(String(n))] ?? self[.int(n)] }

    /// The numbered field, or `missingField` naming `what`.
    public func requiredNumbered(_ n: Int, _ what: String) throws(CBORError) -> CBOR {
        guard let v = numbered(n) else { throw CBORError(.missingField, "\(what) (key \(n) or \"\(n)\") is missing") }
        return v
    }

    /// The value at `key`, or `missingField` naming `what`.
    public func required(_ key: CBOR, _ what: String) throws(CBORError) -> CBOR {
        guard let v = self[key] else { throw CBORError(.missingField, "\(what) (key \(key.diagnostic)) is missing") }
        return v
    }
}


extension CBOR {
    /// RFC 8949 §8 diagnostic notation, e.g. `{"1": h'0102', 2: [1, -1]}`.
    public var diagnostic: String {
        switch self {
        case .unsigned(let n): return String(n)
        case .negative(let n): return n == UInt64.max ? "-18446744073709551616" : "-\(n + 1)"
        case .bytes(let b): return "h'\(Hex.encode(b))'"
        case .text(let t):
            var s = "\""
            for ch in t.unicodeScalars {
                switch ch {
                case "\"": s += "\\\""
                case "\\": s += "\\\\"
                case "\n": s += "\\n"
                default:
                    if ch.value < 0x20 { s += String(format: "\\u%04x", ch.value) } else { s.unicodeScalars.append(ch) }
                }
            }
            return s + "\""
        case .array(let a): return "[" + a.map(\.diagnostic).joined(separator: ", ") + "]"
        case .map(let m):
            let entries = m.map { (k: $0.key.encoded(), d: "\($0.key.diagnostic): \($0.value.diagnostic)") }
                .sorted { $0.k.lexicographicallyPrecedes($1.k) }
            return "{" + entries.map(\.d).joined(separator: ", ") + "}"
        case .tagged(let t, let c): return "\(t)(\(c.diagnostic))"
        case .simple(let v): return "simple(\(v))"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .undefined: return "undefined"
        case .float(let d):
            if d.isNaN { return "NaN" }
            if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
            return d == d.rounded() && abs(d) < 1e15 ? String(format: "%.1f", d) : "\(d)"
        }
    }
}
