/// The 16-byte transaction id a reader draws for AUTH0: one type from the protocol to the lock's
/// outcome and audit record, written as 32 lowercase hex digits wherever it is shown.
public struct TransactionID: Hashable, Sendable, Codable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// nil unless `hex` is hex digits.
    public init?(hex: String) {
        guard let b = Hex.decode(hex) else { return nil }
        bytes = b
    }

    public var hex: String { Hex.encode(bytes) }
    public var description: String { hex }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = TransactionID(hex: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "transaction id \"\(text)\" is not hex"))
        }
        self = id
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(hex)
    }
}
