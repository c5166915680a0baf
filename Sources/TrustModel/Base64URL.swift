import Codecs
import Foundation

/// base64url without padding (RFC 4648 §5), as JWTs and opaque tokens use.
public enum Base64URL {
    public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    public static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.count <= 65536 else { return nil }
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.utf8.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s).map(Array.init)
    }

    public static func random(_ n: Int) -> String { encode(Primitives.randomBytes(n)) }
}
