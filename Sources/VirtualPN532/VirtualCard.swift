import ByteCore

/// An ISO/IEC 14443-4 (ISO-DEP) type A card for the virtual field: its anticollision identity
/// (UID, ATQA, SAK), its ATS, and the `APDUResponder` that answers its APDUs (a credential
/// state machine, or a test card).
///
/// ISO/IEC 14443-3 consistency rules it enforces: ATQA bits 7–6 give the UID size (00 single =
/// 4 bytes, 01 double = 7, 10 triple = 10); a UID never starts with the cascade tag 0x88; SAK bit
/// 0x20 (ISO-DEP compliant) is set, since only an ISO-DEP card carries APDUs; the ATS's length
/// byte TL counts itself.
public final class VirtualCard: Sendable {
    public static let defaultUID: [UInt8] = [0x04, 0xA2, 0x24, 0x6A, 0x1B, 0x5C, 0x80]
    /// TL=05, T0=78 (FSCI 8: 256-byte frames; TA, TB, TC follow), TA=80 (106 kbps only),
    /// TB=70 (FWI 7, SFGI 0), TC=02 (CID supported, NAD not).
    public static let defaultATS: [UInt8] = [0x05, 0x78, 0x80, 0x70, 0x02]

    public let uid: [UInt8]
    /// ATQA (SENS_RES) as a number, e.g. 0x0044; sent MSB first by InListPassiveTarget.
    public let atqa: UInt16
    public let sak: UInt8
    /// The ATS including its length byte.
    public let ats: [UInt8]
    public let responder: APDUResponder

    public init(responder: APDUResponder, uid: [UInt8] = VirtualCard.defaultUID, atqa: UInt16? = nil,
                sak: UInt8 = 0x20, ats: [UInt8] = VirtualCard.defaultATS) throws(PN532Error) {
        let sizeBits: UInt16
        switch uid.count {
        case 4: sizeBits = 0x00
        case 7: sizeBits = 0x40
        case 10: sizeBits = 0x80
        default: throw PN532Error(.invalidCard, "a UID is 4, 7 or 10 bytes, not \(uid.count)")
        }
        guard uid[0] != 0x88 else { throw PN532Error(.invalidCard, "a UID cannot start with the cascade tag 0x88") }
        let atqa = atqa ?? (0x0004 | sizeBits)
        guard atqa & 0x00C0 == sizeBits else {
            let size = ["single-size", "double-size", "triple-size", "invalid"][Int((atqa & 0xC0) >> 6)]
            let fixed = (atqa & ~0x00C0) | sizeBits
            throw PN532Error(.invalidCard, "ATQA \(atqa.bigEndianBytes.hex) says a \(size) UID but the UID has \(uid.count) bytes (use \([UInt8(fixed >> 8), UInt8(fixed & 0xFF)].hex))")
        }
        guard sak & 0x20 != 0, sak & 0x04 == 0 else {
            throw PN532Error(.invalidCard, "SAK must have bit 0x20 (ISO-DEP) and not 0x04 (UID not complete)")
        }
        guard ats.count >= 2, Int(ats[0]) == ats.count else {
            throw PN532Error(.invalidCard, "ATS length byte TL must count the whole ATS including itself")
        }
        self.uid = uid
        self.atqa = atqa
        self.sak = sak
        self.ats = ats
        self.responder = responder
    }

    /// Target data as InListPassiveTarget / InAutoPoll report it after `Tg`:
    /// ATQA (MSB first) ‖ SAK ‖ UID length ‖ UID ‖ [ATS with its length byte].
    func targetData(includeATS: Bool) -> [UInt8] {
        atqa.bigEndianBytes + [sak, UInt8(uid.count)] + uid + (includeATS ? ats : [])
    }
}
