/// Reader status codes sent in EXCHANGE `97 02` (names after the public reference device's
/// `ReaderStatus`). They live with the decision because most of them *are* the decision told to
/// the credential (key not found, expired, not trusted, access rights); each layer maps its own
/// reasons to them (`DenyReason.readerStatus`, `ProtocolFailure.readerStatus`, the lock's bolt).
public enum ReaderStatus {
    public static let keyNotFound: UInt16 = 0x0001
    public static let keyExpired: UInt16 = 0x0002
    public static let keyNotTrusted: UInt16 = 0x0003
    public static let badSignature: UInt16 = 0x0004
    /// Invalid data format.
    public static let badData: UInt16 = 0x0006
    /// Invalid data content.
    public static let badDataContent: UInt16 = 0x0007
    public static let statusWordError: UInt16 = 0x0020
    public static let noKeySlot: UInt16 = 0x0021
    public static let noPublicKey: UInt16 = 0x0022
    public static let noSignature: UInt16 = 0x0023
    public static let accessRights: UInt16 = 0x0025
    public static let hardware: UInt16 = 0x0026
    public static let secured: UInt16 = 0x0100
    public static let unsecured: UInt16 = 0x0101
    public static let jammed: UInt16 = 0x0102
}
