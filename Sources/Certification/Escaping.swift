// Writing JSON text by hand (the audit streams millions of rows; no encoder per row). XML text: ByteCore's XMLText.

public enum JSONText {
    /// `value` as a JSON string literal, quotes included.
    public static func string(_ value: String) -> String {
        var out = [UInt8]()
        append(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    public static func append(_ value: String, to out: inout [UInt8]) {
        var value = value
        value.withUTF8 { append(bytes: $0, to: &out) }
    }

    /// Appends valid UTF-8 `bytes` as a JSON string literal.
    public static func append(bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(0x22)
        for c in bytes {
            switch c {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
            case 0x0D: out.append(contentsOf: [0x5C, 0x72])
            case 0x09: out.append(contentsOf: [0x5C, 0x74])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 0xF)]])
            default: out.append(c)
            }
        }
        out.append(0x22)
    }

    /// `"key": value` pairs as an object on one line; values are already JSON text.
    public static func object(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { string($0.0) + ": " + $0.1 }.joined(separator: ", ") + "}"
    }

    public static func array(_ items: [String]) -> String { "[" + items.joined(separator: ", ") + "]" }

    public static func optional(_ value: String?) -> String { value.map(string) ?? "null" }
}
