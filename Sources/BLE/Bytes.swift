import ByteCore

/// A Bluetooth device address as it travels (little-endian, 6 bytes) with its type.
public struct BLEAddress: Hashable, Sendable, CustomStringConvertible {
    /// Address type: 0 public, 1 random.
    public var type: UInt8
    /// Little-endian bytes, as on the wire.
    public var bytes: [UInt8]

    public init(type: UInt8, bytes: [UInt8]) {
        self.type = type
        self.bytes = bytes
    }

    /// `C0:11:22:33:44:55` (most significant byte first).
    public var description: String {
        bytes.reversed().map { Hex.encode([$0]).uppercased() }.joined(separator: ":") + (type == 1 ? "/R" : "/P")
    }

    /// A static random address (two top bits set) from a seed; Bumble's controller needs one.
    public static func staticRandom(seed: UInt64) -> BLEAddress {
        var b = [UInt8]()
        var x = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        for _ in 0..<6 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; b.append(UInt8(truncatingIfNeeded: x)) }
        b[5] |= 0xC0
        return BLEAddress(type: 1, bytes: b)
    }
}
