import ByteCore
import OfflineUnlock

/// The lock's last message of a BLE transaction, "reader status: access protocol completed"
/// (`02 03`): attribute `00` READER_INFORMATION = `<unsolicited reporting << 5> <reader status>`,
/// sealed under BleSKReader once BleSK exists (aliro-actuator `ble_message_format.py`
/// `create_access_protocol_completed` @ 01b4381b158bfb74c892ebefcff48a6e5d9a5636). Over BLE the
/// outcome goes here, not in EXCHANGE (`user_device.py`: "EXCHANGE command has reader status tag
/// while using BLE").
public struct AccessProtocolCompleted: Equatable, Sendable {
    public static let readerInformation: UInt8 = 0x00

    /// `UnsolicitedReaderStatusReporting_Values`.
    public enum UnsolicitedReporting: UInt8, Sendable, CaseIterable {
        case doNotSend = 0, sendToEachConnected = 1, sendOnlyToThis = 2
    }

    /// `ReaderStatusInformation_Values`: the bolt as the phone is told it. `00`–`02` from the
    /// stored `ble_message_format.py` (@ 01b4381b158bfb74c892ebefcff48a6e5d9a5636); the newer
    /// STARTED_SECURE, STARTED_UNSECURE and UNKNOWN (the BLERKE_RDR_* pass rules name them) have
    /// no stored byte value: LockBench takes the low byte of their NFC reader statuses
    /// `0180`/`0181`/`0182` (`apdu.py` `ReaderStatus`, as `00`–`02` are of `0100`–`0102`).
    public enum ReaderStatusInformation: UInt8, Sendable, CaseIterable {
        case secured = 0, unsecured = 1, jammed = 2
        case startedSecure = 0x80, startedUnsecure = 0x81, unknown = 0x82

        public var name: String {
            switch self {
            case .secured: return "secured"
            case .unsecured: return "unsecured"
            case .jammed: return "jammed"
            case .startedSecure: return "started secure"
            case .startedUnsecure: return "started unsecure"
            case .unknown: return "unknown"
            }
        }

        /// From the reader status LockBench's lock reports (`97` values over NFC): the bolt's
        /// state; a denial leaves it secured.
        public init(_ readerStatus: UInt16) {
            switch readerStatus {
            case ReaderStatus.unsecured: self = .unsecured
            case ReaderStatus.jammed: self = .jammed
            default: self = .secured
            }
        }
    }

    public var unsolicitedReporting: UnsolicitedReporting
    public var readerStatus: ReaderStatusInformation

    public init(unsolicitedReporting: UnsolicitedReporting = .doNotSend, readerStatus: ReaderStatusInformation) {
        self.unsolicitedReporting = unsolicitedReporting
        self.readerStatus = readerStatus
    }

    /// `00 02 <u << 5> <status>`.
    public func encoded() -> [UInt8] {
        BLEAttribute(id: Self.readerInformation, value: [unsolicitedReporting.rawValue << 5, readerStatus.rawValue]).encoded()
    }

    /// As the reference phone reads it (`_parse_access_protocol_completed_payload`): attribute
    /// `00` of 2 bytes, byte 0 bits 7–5 and byte 1 inside their enums.
    public init(parsing plaintext: [UInt8]) throws(ProtocolError) {
        let attributes = try BLEAttribute.parseAll(plaintext)
        guard let a = attributes.first, attributes.count == 1, a.id == Self.readerInformation, a.value.count == 2 else {
            throw ProtocolError(.malformed, "access protocol completed: \(Hex.encode(plaintext)) is not one attribute 00 of 2 bytes (00 02 xx yy)")
        }
        guard let u = UnsolicitedReporting(rawValue: a.value[0] >> 5) else {
            throw ProtocolError(.malformed, "access protocol completed: byte \(Hex.encode([a.value[0]])) bits 7-5 = \(a.value[0] >> 5), not 0, 1 or 2")
        }
        guard let s = ReaderStatusInformation(rawValue: a.value[1]) else {
            throw ProtocolError(.malformed, "access protocol completed: reader status \(Hex.encode([a.value[1]])) is not 00 secured, 01 unsecured, 02 jammed, 80 started secure, 81 started unsecure or 82 unknown")
        }
        unsolicitedReporting = u
        readerStatus = s
    }
}
