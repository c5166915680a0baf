/// Just enough DER (ITU-T X.690) for the fixed shapes LockBench reads and writes: definite lengths
/// up to 4 bytes, low tag numbers. Reading is bounded by the input; nothing recurses on its own.
public enum DER {
    /// One element: its tag byte and the bounds of its content in the input.
    public struct Element: Sendable {
        public var tag: UInt8
        public var content: ArraySlice<UInt8>
        /// The whole TLV (what a signature over a tbsCertificate covers); its start is the tag's
        /// offset in the input, which refusals name.
        public var encoded: ArraySlice<UInt8>
        public var offset: Int { encoded.startIndex }
    }

    public struct Refusal: Error, Equatable, Sendable {
        public var reason: String
        /// Offset in the input where the problem was found.
        public var offset: Int
    }

    /// The elements of `bytes`, in sequence, none nested.
    public static func elements(_ bytes: ArraySlice<UInt8>) throws(Refusal) -> [Element] {
        var out = [Element](), i = bytes.startIndex
        while i < bytes.endIndex {
            guard bytes.endIndex - i >= 2 else { throw Refusal(reason: "truncated DER element", offset: i) }
            let tag = bytes[i]
            guard tag & 0x1F != 0x1F else { throw Refusal(reason: String(format: "tag %02X: high tag numbers are not used here", tag), offset: i) }
            var length = Int(bytes[i + 1]), at = i + 2
            if length & 0x80 != 0 {
                let n = length & 0x7F
                guard (1...4).contains(n), bytes.endIndex - at >= n else {
                    throw Refusal(reason: String(format: "length byte %02X: indefinite or too long", bytes[i + 1]), offset: i + 1)
                }
                length = bytes[at..<(at + n)].reduce(0) { $0 << 8 | Int($1) }
                // DER: the shortest length form (X.690 §10.1).
                guard bytes[at] != 0, length >= 0x80 else {
                    throw Refusal(reason: "length \(length) not in its shortest form (X.690 §10.1)", offset: i + 1)
                }
                at += n
            }
            guard bytes.endIndex - at >= length else {
                throw Refusal(reason: String(format: "tag %02X says %d bytes, %d remain", tag, length, bytes.endIndex - at), offset: i)
            }
            out.append(Element(tag: tag, content: bytes[at..<(at + length)], encoded: bytes[i..<(at + length)]))
            i = at + length
        }
        return out
    }

    /// The single element `bytes` must be, with tag `tag`.
    public static func single(_ bytes: ArraySlice<UInt8>, tag: UInt8, _ what: String) throws(Refusal) -> Element {
        let all = try elements(bytes)
        guard all.count == 1 else { throw Refusal(reason: "\(what): \(all.count) elements where one was expected", offset: bytes.startIndex) }
        guard all[0].tag == tag else {
            throw Refusal(reason: String(format: "\(what): tag %02X where %02X was expected", all[0].tag, tag), offset: bytes.startIndex)
        }
        return all[0]
    }

    /// `tag ‖ length ‖ content` with the shortest definite length.
    public static func encode(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        let n = content.count
        let length: [UInt8]
        switch n {
        case ..<0x80: length = [UInt8(n)]
        case ..<0x100: length = [0x81, UInt8(n)]
        case ..<0x10000: length = [0x82, UInt8(n >> 8), UInt8(n & 0xFF)]
        default: length = [0x83, UInt8(n >> 16), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
        }
        return [tag] + length + content
    }

    /// A SEQUENCE of already encoded elements.
    public static func sequence(_ parts: [[UInt8]]) -> [UInt8] { encode(0x30, parts.flatMap { $0 }) }

    /// An INTEGER from unsigned big-endian magnitude bytes (leading zeros dropped, one 00 added
    /// when the top bit is set, as DER's two's complement needs).
    public static func unsignedInteger(_ magnitude: [UInt8]) -> [UInt8] {
        var m = Array(magnitude.drop { $0 == 0 })
        if m.isEmpty { m = [0] }
        if m[0] & 0x80 != 0 { m.insert(0, at: 0) }
        return encode(0x02, m)
    }
}
