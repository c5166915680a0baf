import ByteCore

/// Why bytes are not acceptable CBOR. Tests match on `code`; `reason` is for people;
/// `offset` is the byte position in the input where decoding stopped.
public struct CBORError: CodedError, Equatable, CustomStringConvertible, Sendable {
    /// Stable, machine-readable codes. The raw values never change once released.
    public enum Code: String, Sendable, CaseIterable {
        /// The input ended inside an item (or a count promises more items than bytes remain).
        case truncated = "cbor.truncated"
        /// Bytes remain after the single top-level item.
        case trailingBytes = "cbor.trailing_bytes"
        /// Additional information 28, 29 or 30 (reserved by RFC 8949 §3).
        case reservedAdditionalInfo = "cbor.reserved_additional_info"
        /// Indefinite-length strings, arrays and maps (additional information 31) are rejected.
        case indefiniteLength = "cbor.indefinite_length"
        /// A "break" (0xFF) outside an indefinite-length item.
        case unexpectedBreak = "cbor.unexpected_break"
        /// Nesting deeper than the decoder's `maxDepth`.
        case depthExceeded = "cbor.depth_exceeded"
        /// A string length above 2³¹−1 (beyond any input LockBench reads).
        case lengthTooLarge = "cbor.length_too_large"
        /// A text string that is not valid UTF-8.
        case invalidUTF8 = "cbor.invalid_utf8"
        /// The same key twice in one map.
        case duplicateMapKey = "cbor.duplicate_map_key"
        /// Simple values 24..31 encoded in the two-byte form (RFC 8949 §3.3), or < 32 in it.
        case invalidSimpleValue = "cbor.invalid_simple_value"
        /// Tag 0 not on text, tag 1 not on a number, tag 24 not on a byte string.
        case invalidTagContent = "cbor.invalid_tag_content"
        /// Strict mode: an integer, length or tag not in its shortest form (RFC 8949 §4.2.1).
        case nonShortestEncoding = "cbor.non_shortest_encoding"
        /// Strict mode: map keys not in bytewise lexicographic order of their encodings.
        case unsortedMapKeys = "cbor.unsorted_map_keys"
        /// A typed view found a different shape than it expects (e.g. text where bytes belong).
        case unexpectedType = "cbor.unexpected_type"
        /// A typed view misses a required map entry.
        case missingField = "cbor.missing_field"
        /// A typed view found a value out of its allowed range.
        case invalidValue = "cbor.invalid_value"
    }

    public var code: Code
    public var reason: String
    public var offset: Int?
    public var file: String
    public var line: Int

    public init(_ code: Code, _ reason: String, offset: Int? = nil,
                file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.offset = offset
        self.file = file
        self.line = line
    }

    public var description: String {
        let at = offset.map { " at byte \($0)" } ?? ""
        return "\(code.rawValue)\(at): \(reason)"
    }

    public static func == (a: CBORError, b: CBORError) -> Bool {
        a.code == b.code && a.reason == b.reason && a.offset == b.offset
    }
}
