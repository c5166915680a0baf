import ByteCore

/// Why DER bytes (X.690 §10) or an X.509 certificate (RFC 5280) were refused. Each reason names
/// the byte offset in the input and the rule. Tests match on `code`.
public struct X509Error: CodedError, Equatable, Sendable {
    public enum Code: String, Sendable, CaseIterable {
        /// Not DER: a length runs past the input, a non-minimal length, trailing bytes.
        case malformed = "x509.malformed"
        /// DER of the wrong shape for a certificate (a field missing or of another type).
        case unexpectedStructure = "x509.unexpected_structure"
        /// A signature algorithm other than ecdsa-with-SHA256, or a key other than named-curve P-256.
        case unsupportedAlgorithm = "x509.unsupported_algorithm"
        /// The subject public key is not a P-256 point (empty, truncated, off the curve).
        case invalidPublicKey = "x509.invalid_public_key"
        /// A validity time that is not UTCTime/GeneralizedTime `…Z` with valid digits.
        case invalidTime = "x509.invalid_time"
    }
    public var code: Code
    public var reason: String
    public init(_ code: Code, _ reason: String) { self.code = code; self.reason = reason }
}

/// One DER TLV. Slices keep the indices of the bytes they were cut from, so `offset` is the tag's
/// position in the whole input (what a refusal names).
public struct DERElement: Equatable, Sendable {
    public var tag: UInt8
    /// The whole TLV (what a signature over the tbsCertificate covers).
    public var encoded: ArraySlice<UInt8>
    public var content: ArraySlice<UInt8>
    public var offset: Int { encoded.startIndex }
}

/// A bounded DER reader and writer: single-byte tags (no high tag numbers), definite minimal
/// lengths of at most 3 length bytes (16 MiB, far above any certificate), every length checked
/// against the bytes that remain before it is used.
public enum DER {
    public enum Tag {
        public static let integer: UInt8 = 0x02
        public static let bitString: UInt8 = 0x03
        public static let octetString: UInt8 = 0x04
        public static let oid: UInt8 = 0x06
        public static let utf8String: UInt8 = 0x0C
        public static let printableString: UInt8 = 0x13
        public static let utcTime: UInt8 = 0x17
        public static let generalizedTime: UInt8 = 0x18
        public static let sequence: UInt8 = 0x30
        public static let set: UInt8 = 0x31
    }

    /// The TLVs that fill `bytes` exactly, in order.
    public static func elements(_ bytes: ArraySlice<UInt8>) throws(X509Error) -> [DERElement] {
        var out = [DERElement](), i = bytes.startIndex
        while i < bytes.endIndex {
            let element = try element(at: i, in: bytes)
            out.append(element)
            i = element.encoded.endIndex
        }
        return out
    }

    /// The one TLV that starts at `i` and ends within `bytes`.
    static func element(at i: Int, in bytes: ArraySlice<UInt8>) throws(X509Error) -> DERElement {
        guard bytes.endIndex - i >= 2 else { throw X509Error(.malformed, "byte \(i): a DER element needs a tag and a length, \(bytes.endIndex - i) byte(s) remain") }
        let tag = bytes[i]
        guard tag & 0x1F != 0x1F else { throw X509Error(.malformed, "byte \(i): tag \(Hex.encode([tag])) uses a high tag number, which no certificate field does") }
        var length = Int(bytes[i + 1]), at = i + 2
        if length & 0x80 != 0 {
            let n = length & 0x7F
            guard (1...3).contains(n) else { throw X509Error(.malformed, "byte \(i + 1): length of \(n) length bytes (DER: definite, 1…3 here)") }
            guard bytes.endIndex - at >= n else { throw X509Error(.malformed, "byte \(i + 1): the length bytes run past the end") }
            length = bytes[at..<(at + n)].reduce(0) { $0 << 8 | Int($1) }
            guard bytes[at] != 0, length >= 0x80 else { throw X509Error(.malformed, "byte \(i + 1): length \(length) not in its shortest form (X.690 §10.1)") }
            at += n
        }
        guard bytes.endIndex - at >= length else {
            throw X509Error(.malformed, "byte \(i): element \(Hex.encode([tag])) says \(length) content bytes, \(bytes.endIndex - at) remain")
        }
        return DERElement(tag: tag, encoded: bytes[i..<(at + length)], content: bytes[at..<(at + length)])
    }

    /// `bytes` as exactly one element with `tag`.
    public static func single(_ bytes: ArraySlice<UInt8>, tag: UInt8, _ what: String) throws(X509Error) -> DERElement {
        let all = try elements(bytes)
        guard all.count == 1 else { throw X509Error(.malformed, "\(what): \(all.count) DER elements where one is expected") }
        return try expect(all[0], tag: tag, what)
    }

    public static func expect(_ e: DERElement, tag: UInt8, _ what: String) throws(X509Error) -> DERElement {
        guard e.tag == tag else {
            throw X509Error(.unexpectedStructure, "byte \(e.offset): \(what) has tag \(Hex.encode([e.tag])), expected \(Hex.encode([tag]))")
        }
        return e
    }

    /// The children of a constructed element (SEQUENCE, SET, [n]).
    public static func children(_ e: DERElement) throws(X509Error) -> [DERElement] { try elements(e.content) }

    // MARK: Writing

    /// `tag ‖ length ‖ content` with the shortest length.
    public static func encode(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        let n = content.count
        let length: [UInt8] = n < 0x80 ? [UInt8(n)]
            : n <= 0xFF ? [0x81, UInt8(n)]
            : n <= 0xFFFF ? [0x82, UInt8(n >> 8), UInt8(n & 0xFF)]
            : [0x83, UInt8(n >> 16), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
        return [tag] + length + content
    }

    public static func sequence(_ parts: [[UInt8]]) -> [UInt8] { encode(Tag.sequence, parts.flatMap { $0 }) }

    /// A non-negative INTEGER from big-endian magnitude bytes (leading zeros dropped, a 00 added
    /// when the top bit is set).
    public static func unsignedInteger(_ magnitude: [UInt8]) -> [UInt8] {
        var m = Array(magnitude.drop { $0 == 0 })
        if m.isEmpty || m[0] & 0x80 != 0 { m.insert(0, at: 0) }
        return encode(Tag.integer, m)
    }
}
