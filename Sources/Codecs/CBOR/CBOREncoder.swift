import ByteCore
/// Deterministic encoding (RFC 8949 §4.2.1 "Core Deterministic Encoding Requirements"):
/// - integers, lengths and tags in their shortest form;
/// - definite lengths only;
/// - map keys sorted by the bytewise lexicographic order of their own deterministic encodings;
/// - floats in the shortest of half/single/double that keeps the value exactly (§4.2.2),
///   NaN as `f9 7e00`.
extension CBOR {
    /// The deterministic encoding of this item.
    public func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(64)
        encode(into: &out)
        return out
    }

    public func encode(into out: inout [UInt8]) {
        switch self {
        case .unsigned(let n): CBOR.writeHead(major: 0, n, &out)
        case .negative(let n): CBOR.writeHead(major: 1, n, &out)
        case .bytes(let b):
            CBOR.writeHead(major: 2, UInt64(b.count), &out)
            out.append(contentsOf: b)
        case .text(let t):
            let u = Array(t.utf8)
            CBOR.writeHead(major: 3, UInt64(u.count), &out)
            out.append(contentsOf: u)
        case .array(let a):
            CBOR.writeHead(major: 4, UInt64(a.count), &out)
            for item in a { item.encode(into: &out) }
        case .map(let m):
            CBOR.writeHead(major: 5, UInt64(m.count), &out)
            let entries = m.map { (key: $0.key.encoded(), value: $0.value) }
                .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            for e in entries {
                out.append(contentsOf: e.key)
                e.value.encode(into: &out)
            }
        case .tagged(let t, let content):
            CBOR.writeHead(major: 6, t, &out)
            content.encode(into: &out)
        case .simple(let v):
            if v < 24 { out.append(0xE0 | v) } else { out.append(0xF8); out.append(v) }
        case .bool(let b): out.append(b ? 0xF5 : 0xF4)
        case .null: out.append(0xF6)
        case .undefined: out.append(0xF7)
        case .float(let d): CBOR.writeFloat(d, &out)
        }
    }

    static func writeHead(major: UInt8, _ value: UInt64, _ out: inout [UInt8]) {
        let m = major << 5
        switch value {
        case 0..<24: out.append(m | UInt8(value))
        case 24...0xFF: out.append(m | 24); out.append(UInt8(value))
        case 0x100...0xFFFF:
            out.append(m | 25)
            out.appendUInt16BE(UInt16(value))
        case 0x1_0000...0xFFFF_FFFF:
            out.append(m | 26)
            out.appendUInt32BE(UInt32(value))
        default:
            out.append(m | 27)
            out.appendUInt64BE(value)
        }
    }

    static func writeFloat(_ d: Double, _ out: inout [UInt8]) {
        if d.isNaN { out.append(contentsOf: [0xF9, 0x7E, 0x00]); return }
        if let h = Half.bits(exactly: d) {
            out.append(0xF9); out.appendUInt16BE(h); return
        }
        let f = Float(d)
        if Double(f) == d {
            let b = f.bitPattern
            out.append(0xFA)
            out.appendUInt32BE(b)
            return
        }
        let b = d.bitPattern
        out.append(0xFB)
        out.appendUInt64BE(b)
    }
}

/// IEEE 754 half precision, by hand (Float16 is not available on every platform Swift targets).
enum Half {
    static func toDouble(_ h: UInt16) -> Double {
        let sign: Double = h & 0x8000 != 0 ? -1 : 1
        let exp = Int((h >> 10) & 0x1F)
        let mant = Double(h & 0x3FF)
        switch exp {
        case 0: return sign * mant * 0x1p-24
        case 31: return mant == 0 ? sign * .infinity : .nan
        default: return sign * (1 + mant / 1024) * Double(sign: .plus, exponent: exp - 15, significand: 1)
        }
    }

    /// The half-precision bits of `d` when `d` is exactly representable (NaN excluded).
    static func bits(exactly d: Double) -> UInt16? {
        let sign: UInt16 = d.sign == .minus ? 0x8000 : 0
        if d == 0 { return sign }
        if d.isInfinite { return sign | 0x7C00 }
        let f = Float(d)
        guard Double(f) == d else { return nil }
        let fb = f.bitPattern
        let e = Int((fb >> 23) & 0xFF) - 127
        let mant = fb & 0x7F_FFFF
        if (-14...15).contains(e) {
            guard mant & 0x1FFF == 0 else { return nil }
            return sign | UInt16(e + 15) << 10 | UInt16(mant >> 13)
        }
        if (-24 ... -15).contains(e) {
            let m = mant | 0x80_0000
            let shift = UInt32(-(e + 1))
            guard m & ((1 << shift) - 1) == 0 else { return nil }
            return sign | UInt16(m >> shift)
        }
        return nil
    }
}
