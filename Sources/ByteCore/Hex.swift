/// Hex text <-> bytes, for vectors, logs and JSON output.
public enum Hex {
    /// Lowercase hex, no separators.
    public static func encode<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        bytes.withContiguousStorageIfAvailable(encodeBuffer) ?? Array(bytes).withUnsafeBufferPointer(encodeBuffer)
    }

    private static func encodeBuffer(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            var i = 0
            for b in bytes {
                out[i] = digit(b >> 4)
                out[i + 1] = digit(b & 0x0F)
                i += 2
            }
            return i
        }
    }

    /// `0…15` → `0…9a…f` (ASCII).
    private static func digit(_ v: UInt8) -> UInt8 { v < 10 ? v &+ 0x30 : v &+ 0x57 }

    /// Parses hex, ignoring spaces, newlines and colons; nil on an odd count or a non-hex digit.
    public static func decode(_ text: String) -> [UInt8]? {
        var out = [UInt8]()
        var high: UInt8? = nil
        for c in text.utf8 {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: ":"): continue
            default: return nil
            }
            if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
        }
        return high == nil ? out : nil
    }
}

extension Array where Element == UInt8 {
    /// `[0x00, 0xA4]` → `"00a4"`.
    public var hex: String { Hex.encode(self) }
}
