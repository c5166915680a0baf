/// Text for XML character data and attribute values (the JUnit reports of `conformance` and
/// `scenario run`): the five markup characters as entities, and the C0 controls XML 1.0 forbids
/// even as references (all but tab, newline and carriage return) as `?`.
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
            default:
                if c.value < 0x20 && c != "\n" && c != "\t" && c != "\r" { out += "?" } else { out.unicodeScalars.append(c) }
            }
        }
        return out
    }
}
