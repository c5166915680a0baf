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

    /// A static random address (Core Vol 6 Part B §1.3.2.1) from 6 bytes of a digest, most
    /// significant first: the top two bits are set to `11`, and the 46 random bits, which may not be
    /// all zeros or all ones, get their lowest bit flipped when they are.
    public static func staticRandom(digest: [UInt8]) -> BLEAddress {
        var msbFirst = Array((digest + [UInt8](repeating: 0, count: 6)).prefix(6))
        msbFirst[0] |= 0xC0
        let random = [msbFirst[0] & 0x3F] + msbFirst[1...]
        if random.allSatisfy({ $0 == 0 }) || (random[0] == 0x3F && random.dropFirst().allSatisfy({ $0 == 0xFF })) { msbFirst[5] ^= 0x01 }
        return BLEAddress(type: 1, bytes: msbFirst.reversed())
    }

    /// Parses any address written `C0:11:22:33:44:55` (most significant byte first, as
    /// `description` prints it); a `/P` suffix makes it public, otherwise it is random.
    public init(parsing text: String) throws(BLEError) {
        let isPublic = text.hasSuffix("/P")
        let body = text.hasSuffix("/R") || isPublic ? String(text.dropLast(2)) : text
        let parts = body.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 }),
              let msbFirst = Hex.decode(parts.joined()), msbFirst.count == 6 else {
            throw BLEError(.badAddress, "BLE address \"\(text)\": write six hex bytes separated by colons, most significant first, e.g. C3:12:34:56:78:9A")
        }
        self.init(type: isPublic ? 0 : 1, bytes: msbFirst.reversed())
    }

    /// Parses a static random address written `C0:11:22:33:44:55` (most significant byte first,
    /// as `description` prints it, with or without the `/R` suffix).
    public init(staticRandom text: String) throws(BLEError) {
        guard !text.hasSuffix("/P") else {
            throw BLEError(.badAddress, "BLE address \(text): a lock's own address is static random, not public (drop /P)")
        }
        let body = text.hasSuffix("/R") ? String(text.dropLast(2)) : text
        let msbFirst = Array(try BLEAddress(parsing: text).bytes.reversed())
        guard msbFirst[0] & 0xC0 == 0xC0 else {
            throw BLEError(.badAddress, "BLE address \(body): not a static random address (its first byte must be C0–FF: the top two bits are 11)")
        }
        let random = [msbFirst[0] & 0x3F] + msbFirst[1...]
        guard !random.allSatisfy({ $0 == 0 }), !(random[0] == 0x3F && random.dropFirst().allSatisfy({ $0 == 0xFF })) else {
            throw BLEError(.badAddress, "BLE address \(body): the 46 random bits of a static random address may not be all zeros or all ones")
        }
        self.init(type: 1, bytes: msbFirst.reversed())
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
