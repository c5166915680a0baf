/// A cursor over bytes for parsers of radio and file input: every read is bounds-checked
/// and returns nil instead of trapping, so a short packet is an error, never a crash.
public struct ByteReader {
    public let bytes: ArraySlice<UInt8>
    public private(set) var offset: Int

    public init<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        self.bytes = ArraySlice(bytes)
        self.offset = self.bytes.startIndex
    }

    public var remaining: Int { bytes.endIndex - offset }
    public var isAtEnd: Bool { offset >= bytes.endIndex }

    public mutating func readUInt8() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func readBytes(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, remaining >= count else { return nil }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    public mutating func readUInt16BE() -> UInt16? {
        guard let b = readBytes(2) else { return nil }
        return UInt16(b[b.startIndex]) << 8 | UInt16(b[b.startIndex + 1])
    }

    public mutating func readUInt16LE() -> UInt16? {
        guard let b = readBytes(2) else { return nil }
        return UInt16(b[b.startIndex + 1]) << 8 | UInt16(b[b.startIndex])
    }

    public mutating func readUInt32BE() -> UInt32? { readBytes(4).map { $0.reduce(0) { $0 << 8 | UInt32($1) } } }
    public mutating func readUInt32LE() -> UInt32? { readBytes(4).map { $0.reversed().reduce(0) { $0 << 8 | UInt32($1) } } }
    public mutating func readUInt64BE() -> UInt64? { readBytes(8).map { $0.reduce(0) { $0 << 8 | UInt64($1) } } }
    public mutating func readUInt64LE() -> UInt64? { readBytes(8).map { $0.reversed().reduce(0) { $0 << 8 | UInt64($1) } } }

    /// `count` bytes as an array, or nil when fewer remain.
    public mutating func readArray(_ count: Int) -> [UInt8]? { readBytes(count).map(Array.init) }

    public mutating func readRest() -> ArraySlice<UInt8> {
        defer { offset = bytes.endIndex }
        return bytes[offset...]
    }
}
