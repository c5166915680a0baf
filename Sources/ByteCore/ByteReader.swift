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

    public mutating func readRest() -> ArraySlice<UInt8> {
        defer { offset = bytes.endIndex }
        return bytes[offset...]
    }
}
