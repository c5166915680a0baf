/// Builds bytes for encoders: fixed-width integers in the byte order the wire asks for, so no
/// encoder writes shifts by hand. The counterpart of `ByteReader`.
public struct ByteWriter {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func write(_ byte: UInt8) { bytes.append(byte) }
    public mutating func write<S: Sequence>(_ more: S) where S.Element == UInt8 { bytes.append(contentsOf: more) }
    public mutating func writeUInt16BE(_ value: UInt16) { bytes.appendUInt16BE(value) }
    public mutating func writeUInt16LE(_ value: UInt16) { bytes.appendUInt16LE(value) }
    public mutating func writeUInt32BE(_ value: UInt32) { bytes.appendUInt32BE(value) }
    public mutating func writeUInt32LE(_ value: UInt32) { bytes.appendUInt32LE(value) }
    public mutating func writeUInt64BE(_ value: UInt64) { bytes.appendUInt64BE(value) }
    public mutating func writeUInt64LE(_ value: UInt64) { bytes.appendUInt64LE(value) }
}

extension FixedWidthInteger {
    /// The value's bytes, most significant first (network order: APDU fields, PN532 lengths, CBOR).
    public var bigEndianBytes: [UInt8] {
        (0..<(Self.bitWidth / 8)).reversed().map { UInt8(truncatingIfNeeded: self >> ($0 * 8)) }
    }

    /// The value's bytes, least significant first (Bluetooth HCI, L2CAP, ATT).
    public var littleEndianBytes: [UInt8] {
        (0..<(Self.bitWidth / 8)).map { UInt8(truncatingIfNeeded: self >> ($0 * 8)) }
    }
}

extension Array where Element == UInt8 {
    public mutating func appendUInt16BE(_ value: UInt16) { append(UInt8(value >> 8)); append(UInt8(truncatingIfNeeded: value)) }
    public mutating func appendUInt16LE(_ value: UInt16) { append(UInt8(truncatingIfNeeded: value)); append(UInt8(value >> 8)) }
    public mutating func appendUInt32BE(_ value: UInt32) { for s in stride(from: 24, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt32(s))) } }
    public mutating func appendUInt32LE(_ value: UInt32) { for s in stride(from: 0, through: 24, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(s))) } }
    public mutating func appendUInt64BE(_ value: UInt64) { for s in stride(from: 56, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt64(s))) } }
    public mutating func appendUInt64LE(_ value: UInt64) { for s in stride(from: 0, through: 56, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt64(s))) } }
}
