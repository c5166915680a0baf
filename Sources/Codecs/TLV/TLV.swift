import ByteCore

// BER-TLV as ISO/IEC 7816-4 §5.2 / ISO/IEC 8825-1 use it on smart-card APDUs.
//
//   tag    = first-byte [ subsequent-byte* ]      ; first-byte & 0x1F == 0x1F → more bytes follow,
//                                                   each with bit 8 set except the last
//   length = %x00-7F                               ; short form
//          / %x81 %x00-FF                          ; one length byte
//          / %x82 2OCTET                           ; two length bytes, big-endian
//   value  = length OCTETs                         ; constructed (first-byte & 0x20) → nested TLVs
//
// Two phases, as STYLE §3: bytes → `TLV` (generic tree, on slices) → typed message (Messages.swift).

/// A parse error with a stable code (tests match on `code`), a human reason and the byte offset.
public struct TLVError: CodedError, Equatable, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable {
        /// The input ended inside a tag.
        case truncatedTag = "tlv.truncated_tag"
        /// The input ended inside a length field, or the value is shorter than the length says.
        case truncatedValue = "tlv.truncated_value"
        /// Length form 0x80 (indefinite) or 0x83 and longer: not used on APDUs.
        case unsupportedLength = "tlv.unsupported_length"
        /// A tag longer than 3 bytes.
        case tagTooLong = "tlv.tag_too_long"
        /// Nesting deeper than the limit.
        case tooDeep = "tlv.too_deep"
        /// Bytes after the last complete TLV where the caller expected exactly one.
        case leftoverBytes = "tlv.leftover_bytes"
        /// A required tag is absent (typed-message phase).
        case missingTag = "tlv.missing_tag"
        /// A tag has the wrong length for its meaning (typed-message phase).
        case badLength = "tlv.bad_length"
        /// A tag not allowed here, or in the wrong order (typed-message phase).
        case unexpectedTag = "tlv.unexpected_tag"
    }
    public var code: Code
    public var reason: String
    /// Offset in the input where the problem was found (or -1 when not about a position).
    public var offset: Int

    public init(_ code: Code, _ reason: String, offset: Int = -1) {
        self.code = code
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "\(code.rawValue) at \(offset): \(reason)" }
}

/// One BER-TLV element. `tag` holds the tag bytes as a big-endian integer (`0x7F66`, `0x5C`).
public struct TLV: Equatable, Hashable, Sendable {
    public var tag: UInt32
    public var value: [UInt8]

    public init(_ tag: UInt32, _ value: [UInt8]) {
        self.tag = tag
        self.value = value
    }

    /// A constructed element holding `children` encoded in order.
    public init(_ tag: UInt32, children: [TLV]) {
        self.tag = tag
        self.value = children.flatMap { $0.encoded() }
    }

    /// The default nesting limit for `parse`.
    public static let defaultMaxDepth = 8

    /// True when the tag's first byte has the constructed bit (0x20).
    public var isConstructed: Bool { TLV.tagBytes(tag).first.map { $0 & 0x20 != 0 } ?? false }

    /// The children of a constructed element (parsed on demand from `value`).
    public func children(maxDepth: Int = TLV.defaultMaxDepth) throws(TLVError) -> [TLV] {
        try TLV.parseAll(value, maxDepth: maxDepth)
    }

    // MARK: Encoding

    public static func tagBytes(_ tag: UInt32) -> [UInt8] {
        if tag > 0xFFFF { return Array(tag.bigEndianBytes.dropFirst()) }
        if tag > 0xFF { return UInt16(tag).bigEndianBytes }
        return [UInt8(tag)]
    }

    public static func lengthBytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0 && count <= 0xFFFF, "BER-TLV length out of range")
        if count < 0x80 { return [UInt8(count)] }
        if count <= 0xFF { return [0x81, UInt8(count)] }
        return [0x82] + UInt16(count).bigEndianBytes
    }

    public func encoded() -> [UInt8] {
        TLV.tagBytes(tag) + TLV.lengthBytes(value.count) + value
    }

    // MARK: Parsing

    /// Parses exactly one TLV; bytes after it are `leftoverBytes`.
    public init<C: Collection>(parsing bytes: C, maxDepth: Int = defaultMaxDepth) throws(TLVError)
    where C.Element == UInt8 {
        var reader = ByteReader(bytes)
        let tlv = try TLV.parseOne(&reader, depth: 0, maxDepth: maxDepth)
        if !reader.isAtEnd {
            throw TLVError(.leftoverBytes, "\(reader.remaining) byte(s) after the TLV", offset: reader.offset - reader.bytes.startIndex)
        }
        self = tlv
    }

    /// Parses a concatenation of TLVs (possibly empty). A trailing partial TLV is an error.
    public static func parseAll<C: Collection>(_ bytes: C, maxDepth: Int = defaultMaxDepth) throws(TLVError) -> [TLV]
    where C.Element == UInt8 {
        var reader = ByteReader(bytes)
        var out: [TLV] = []
        while !reader.isAtEnd {
            out.append(try parseOne(&reader, depth: 0, maxDepth: maxDepth))
        }
        return out
    }

    /// The top-level fields of a message from a peer. Unlike `parseAll`, constructed values are
    /// not walked here (a known one is read with `children()` when used), so an unknown tag is
    /// skipped whatever it holds: the public test plan sends `AA 03 010203`, constructed by its
    /// tag byte but not TLV inside (`nfc_rdr_neg_auth0_extra_tag`).
    public static func parseFields<C: Collection>(_ bytes: C) throws(TLVError) -> [TLV] where C.Element == UInt8 {
        var reader = ByteReader(bytes)
        var out: [TLV] = []
        while !reader.isAtEnd {
            out.append(try parseOne(&reader, depth: 0, maxDepth: defaultMaxDepth, walk: false))
        }
        return out
    }

    /// Reads one TLV at the reader's position. Constructed values are walked (not kept as a tree)
    /// so the depth limit and framing are checked on the whole input up front (unless `walk` is false).
    static func parseOne(_ reader: inout ByteReader, depth: Int, maxDepth: Int, walk: Bool = true) throws(TLVError) -> TLV {
        let start = reader.offset - reader.bytes.startIndex
        guard depth < maxDepth else { throw TLVError(.tooDeep, "nesting deeper than \(maxDepth)", offset: start) }
        guard let first = reader.readUInt8() else { throw TLVError(.truncatedTag, "no tag byte", offset: start) }
        var tag = UInt32(first)
        if first & 0x1F == 0x1F {
            var count = 1
            while true {
                guard let next = reader.readUInt8() else {
                    throw TLVError(.truncatedTag, "multi-byte tag ends early", offset: start)
                }
                count += 1
                guard count <= 3 else { throw TLVError(.tagTooLong, "tag longer than 3 bytes", offset: start) }
                tag = tag << 8 | UInt32(next)
                if next & 0x80 == 0 { break }
            }
        }
        let lengthOffset = reader.offset - reader.bytes.startIndex
        guard let l0 = reader.readUInt8() else { throw TLVError(.truncatedValue, "no length byte", offset: lengthOffset) }
        let length: Int
        switch l0 {
        case 0x00...0x7F: length = Int(l0)
        case 0x81:
            guard let l1 = reader.readUInt8() else { throw TLVError(.truncatedValue, "length 81 without its byte", offset: lengthOffset) }
            length = Int(l1)
        case 0x82:
            guard let l = reader.readUInt16BE() else { throw TLVError(.truncatedValue, "length 82 without its 2 bytes", offset: lengthOffset) }
            length = Int(l)
        default:
            throw TLVError(.unsupportedLength, "length form \(Hex.encode([l0]))", offset: lengthOffset)
        }
        let valueOffset = reader.offset - reader.bytes.startIndex
        guard let value = reader.readBytes(length) else {
            throw TLVError(.truncatedValue, "value needs \(length) byte(s), \(reader.remaining) left", offset: valueOffset)
        }
        if walk && first & 0x20 != 0 {
            var inner = ByteReader(value)
            while !inner.isAtEnd {
                do {
                    _ = try parseOne(&inner, depth: depth + 1, maxDepth: maxDepth)
                } catch {
                    throw TLVError(error.code, error.reason, offset: error.offset < 0 ? error.offset : valueOffset + error.offset)
                }
            }
        }
        return TLV(tag, Array(value))
    }
}

extension Array where Element == TLV {
    /// The first element with `tag`.
    public func first(_ tag: UInt32) -> TLV? { first { $0.tag == tag } }

    public func encoded() -> [UInt8] { flatMap { $0.encoded() } }

    /// The value of a required tag, optionally of an exact length.
    public func require(_ tag: UInt32, length: Int? = nil) throws(TLVError) -> [UInt8] {
        guard let t = first(tag) else {
            throw TLVError(.missingTag, "tag \(String(tag, radix: 16, uppercase: true)) missing")
        }
        if let length, t.value.count != length {
            throw TLVError(.badLength, "tag \(String(tag, radix: 16, uppercase: true)) has \(t.value.count) byte(s), expected \(length)")
        }
        return t.value
    }

    /// The value of an optional tag: nil when absent; a present one of the wrong length is refused.
    public func optional(_ tag: UInt32, length: Int? = nil) throws(TLVError) -> [UInt8]? {
        guard first(tag) != nil else { return nil }
        return try require(tag, length: length)
    }
}
