import Foundation

/// What Foundation's JSON decoding does not say about a hostile file (issue 20 §5): a key that
/// appears twice in one object (the decoder silently keeps one), and the path of each number a
/// whole-number field cannot hold — the decoder refuses `1e30`, `1.5` or `10^20` only as "The
/// given data was not valid JSON.", naming no field. One pass over the bytes, bounded by their size.
public struct JSONInspection: Sendable {
    /// The first key repeated within one object, with the object's dotted path.
    public private(set) var duplicateKey: (path: String, key: String)?
    /// Numbers that are not whole or do not fit 64 bits, with their dotted path, text and place
    /// (the first `oddNumberLimit`: enough to name, and a hostile file's cost stays linear).
    public private(set) var oddNumbers: [(path: String, text: String, range: Range<Int>)] = []
    static let oddNumberLimit = 16

    public init(_ data: Data) {
        let b = Array(data)
        var i = 0
        // Containers being read: for objects, the keys seen so far and the key being read.
        enum Frame { case object(keys: Set<String>, current: String?), array(index: Int) }
        var stack: [Frame] = []
        var pathNames: [String] { stack.compactMap { f in
            switch f { case .object(_, let k): return k; case .array(let n): return String(n) } } }
        func skipString() -> String? {
            guard i < b.count, b[i] == UInt8(ascii: "\"") else { return nil }
            let start = i + 1
            i += 1
            while i < b.count, b[i] != UInt8(ascii: "\"") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
            let text = String(decoding: b[start..<min(i, b.count)], as: UTF8.self)
            i += 1
            return text
        }
        while i < b.count {
            let c = b[i]
            switch c {
            case UInt8(ascii: "{"): stack.append(.object(keys: [], current: nil)); i += 1
            case UInt8(ascii: "["): stack.append(.array(index: 0)); i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if !stack.isEmpty { stack.removeLast() }; i += 1
            case UInt8(ascii: ","):
                if case .array(let n)? = stack.last { stack[stack.count - 1] = .array(index: n + 1) }
                i += 1
            case UInt8(ascii: "\""):
                let text = skipString() ?? ""
                // A string directly inside an object, followed by a colon, is a key.
                var j = i
                while j < b.count, [0x20, 0x09, 0x0A, 0x0D].contains(b[j]) { j += 1 }
                if case .object(var keys, _)? = stack.last, j < b.count, b[j] == UInt8(ascii: ":") {
                    if duplicateKey == nil, keys.contains(text) {
                        duplicateKey = (pathNames.dropLast().joined(separator: "."), text)
                    }
                    stack[stack.count - 1] = .array(index: 0)   // the set is uniquely ours: inserted in place
                    keys.insert(text)
                    stack[stack.count - 1] = .object(keys: keys, current: text)
                    i = j + 1
                }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                let start = i
                while i < b.count, "+-.eE0123456789".utf8.contains(b[i]) { i += 1 }
                let text = String(decoding: b[start..<i], as: UTF8.self)
                let whole = !text.contains(where: { ".eE".contains($0) })
                if oddNumbers.count < Self.oddNumberLimit, !whole || Int64(text) == nil && UInt64(text) == nil {
                    oddNumbers.append((pathNames.joined(separator: "."), text, start..<i))
                }
            default: i += 1
            }
        }
    }

    /// A decoding error of `T` from `data` that names no field, explained from the bytes when
    /// they show why; nil when they do not. Of the odd numbers, the culprit is the one whose
    /// replacement by 0 gets the decoding past that error (a fractional time is a legitimate
    /// number, a fraction in a count is not); without one, the first.
    public func explanation<T: Decodable>(decoding type: T.Type, from data: Data) -> String? {
        if let d = duplicateKey {
            return "key \"\(d.key)\" appears twice in \(d.path.isEmpty ? "the top-level object" : d.path); keep one"
        }
        guard !oddNumbers.isEmpty else { return nil }
        let bytes = Array(data)
        let culprit = oddNumbers.first { n in
            let patched = Data(bytes[..<n.range.lowerBound] + Array("0".utf8) + bytes[n.range.upperBound...])
            do { _ = try JSONDecoder().decode(type, from: patched); return true } catch DecodingError.dataCorrupted(let ctx) {
                return !ctx.codingPath.isEmpty
            } catch { return true }
        } ?? oddNumbers[0]
        return "field \(culprit.path): \(culprit.text) is not a number it can hold — whole-number fields take integers within their range (at most 2^63−1; docs/lock-config.md gives each field's)"
    }
}
