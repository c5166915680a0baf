import TrustModel
import TrustCore
import HTTPServing
import Foundation

/// An application/x-www-form-urlencoded body: `+` is a space, `%XX` a byte; a repeated
/// parameter makes the request invalid (RFC 6749 §3.1).
struct FormBody {
    var fields: [String: String] = [:]

    init?(parsing text: String) {
        for pair in text.split(separator: "&", omittingEmptySubsequences: true).prefix(64) {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let k = Self.decode(kv[0]), let v = Self.decode(kv.count > 1 ? kv[1] : "") else { return nil }
            guard fields[k] == nil else { return nil }
            fields[k] = v
        }
    }

    subscript(_ name: String) -> String? { fields[name] }

    static func decode(_ s: Substring) -> String? {
        s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
