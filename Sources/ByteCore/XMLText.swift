/// Text for XML character data and attribute values (the JUnit reports of `conformance`,
/// `scenario run` and `firmware audit`): the five markup characters as entities; tab, newline
/// and carriage return as character references (an attribute keeps them only that way); the
/// controls XML 1.0 forbids even as references (the other C0 controls, U+FFFE, U+FFFF) as `?`.
public enum XMLText {
    public static func escaped(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            case "\t": out += "&#9;"
            default:
                if c.value < 0x20 || c.value == 0xFFFE || c.value == 0xFFFF { out += "?" } else { out.unicodeScalars.append(c) }
            }
        }
        return out
    }

    /// Appends valid UTF-8 `bytes` escaped like `escaped(_:)`, copying them as they are when
    /// nothing needs escaping (the common case in a large report).
    public static func append(bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        // 0xEF leads U+FFFE and U+FFFF (and others): those take the slow path to be checked.
        let plain = !bytes.contains { $0 < 0x20 || $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 || $0 == 0xEF }
        if plain { out.append(contentsOf: bytes); return }
        out.append(contentsOf: escaped(String(decoding: bytes, as: UTF8.self)).utf8)
    }
}
