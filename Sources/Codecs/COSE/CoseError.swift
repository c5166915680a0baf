import ByteCore

/// Why a COSE structure (RFC 9052) was refused. Tests match on `code`.
public struct CoseError: CodedError, Equatable, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable, CaseIterable {
        /// The bytes are not CBOR, or not the shape of the structure (the `cbor` error says why).
        case malformed = "cose.malformed"
        /// The protected header has no algorithm (label 1).
        case missingAlgorithm = "cose.missing_algorithm"
        /// An algorithm other than ES256 (-7).
        case unsupportedAlgorithm = "cose.unsupported_algorithm"
        /// A detached payload (nil) where LockBench requires it attached.
        case detachedPayload = "cose.detached_payload"
        /// The signature does not verify under the given key.
        case badSignature = "cose.bad_signature"
        /// A COSE_Key that is not an EC2 P-256 key with 32-byte x and y on the curve.
        case invalidKey = "cose.invalid_key"
        /// Critical header parameters (label 2) LockBench does not understand.
        case unknownCriticalHeader = "cose.unknown_critical_header"
    }
    public var code: Code
    public var reason: String
    public var cbor: CBORError?
    public var file: String
    public var line: Int

    public init(_ code: Code, _ reason: String, cbor: CBORError? = nil, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.cbor = cbor
        self.file = file
        self.line = line
    }

    init(_ error: CBORError, _ what: String, file: String = #fileID, line: Int = #line) {
        self.init(.malformed, "\(what): \(error)", cbor: error, file: file, line: line)
    }


    public static func == (a: CoseError, b: CoseError) -> Bool { a.code == b.code && a.reason == b.reason }
}
