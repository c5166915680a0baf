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
