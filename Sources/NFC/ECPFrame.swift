import ByteCore

/// An Apple Enhanced Contactless Polling (ECP) frame: a short frame a reader sends in its
/// ISO/IEC 14443-A polling loop, before REQA/WUPA, telling an iPhone or Apple Watch what kind of
/// terminal this is so it can present the matching Wallet pass in express mode. No card answers
/// it. Sent through InCommunicateThru; the chip appends the ISO14443-A CRC.
///
/// Frame layout (ECP 2.0), from kormax, "Apple Enhanced Contactless Polling",
/// https://github.com/kormax/apple-enhanced-contactless-polling (README, "Structure"):
///
///     6A       02        CC        TT      SS       TCI (3)   [data]
///     header   version   config    type    subtype  terminal capabilities identifier
///
/// config: bit 7 automatic pass presentment, bit 6 authentication not required, bits 3–0 the
/// length of TCI + data. Type 0x02 = access. The same README's worked example "Access: Demo"
/// is `6a02c3020002ffff` (config C3, type 02, subtype 00, TCI 02 FF FF, the placeholder TCI
/// that unconfigured and development access passes carry), which is LockBench's default.
public struct ECPFrame: Equatable, Sendable, CustomStringConvertible {
    /// The frame without its CRC.
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// An ECP 2.0 access frame. `readerGroupID`: the optional 8-byte reader group identifier that
    /// lets passes of the same type tell installations apart.
    public static func access(tci: [UInt8] = [0x02, 0xFF, 0xFF], subtype: UInt8 = 0x00,
                              readerGroupID: [UInt8] = [], automaticPresentment: Bool = true,
                              authenticationRequired: Bool = false) -> ECPFrame {
        precondition(tci.count == 3 && readerGroupID.count <= 12, "TCI is 3 bytes; data at most 15 bytes in all")
        var config = UInt8(tci.count + readerGroupID.count)
        if automaticPresentment { config |= 0x80 }
        if !authenticationRequired { config |= 0x40 }
        return ECPFrame(bytes: [0x6A, 0x02, config, 0x02, subtype] + tci + readerGroupID)
    }

    /// `6A 02 C3 02 00 02 FF FF`: ECP 2.0, access terminal, placeholder TCI.
    public static let accessDefault = ECPFrame.access()

    public var description: String { bytes.hex }
}
