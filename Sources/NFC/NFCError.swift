import ByteCore

/// The one error type of the NFC layer: a stable code to match on, a reason that says what to
/// do about it, the libnfc error code when there is one, and the source site.
public struct NFCError: CodedError, CustomStringConvertible, Equatable, Sendable {
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// `nfc_init` failed (out of memory, unreadable configuration).
        case contextUnavailable
        /// No reader at that connstring (or none found at all).
        case noDevice
        /// The reader exists but this user may not open it: install the udev rules / join a group.
        case permissionDenied
        /// The reader is held by another driver (the kernel's pn533) or another program.
        case deviceBusy
        /// The reader was found but did not answer like a PN53x.
        case openFailed
        /// The card did not answer in time (NFC_ETIMEOUT, or chip status 0x01 through NFC_ERFTRANS).
        case timeout
        /// The card left the field (NFC_ETGRELEASED / RF transmission error).
        case targetLost
        /// Bytes could not be moved to or from the reader (NFC_EIO): it was unplugged, or its pty closed.
        case io
        /// The operation was aborted (NFC_EOPABORTED), e.g. by `stop()`.
        case aborted
        /// libnfc refused the arguments (NFC_EINVARG), or an APDU is too long for one frame.
        case invalidArgument
        /// The reader cannot do this (NFC_EDEVNOTSUPP / NFC_ENOTIMPL).
        case notSupported
        /// The chip reported an error (NFC_ECHIP) or the answer did not fit (NFC_EOVFLOW).
        case chip
        /// The device was closed.
        case closed
    }

    public let code: Code
    public let reason: String
    /// The libnfc return value (`NFC_E…`), when the error came from libnfc.
    public let libnfcCode: Int32?
    public let file: String
    public let line: Int

    public init(_ code: Code, _ reason: String, libnfcCode: Int32? = nil, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.libnfcCode = libnfcCode
        self.file = file
        self.line = line
    }

    public var description: String { reason }

    public static func == (a: NFCError, b: NFCError) -> Bool { a.code == b.code && a.reason == b.reason && a.libnfcCode == b.libnfcCode }

    /// Connstrings to try, for "no device" messages.
    public static let connstringExamples = """
    Connstring examples: acr122_usb (ACS ACR122U), pn53x_usb (PN533, SCL3711), \
    pn532_uart:/dev/ttyUSB0 (PN532 on a USB-serial adapter), pn532_uart:/dev/pts/N \
    (LockBench's virtual reader: run `lockbench nfc virtual-reader`); `lockbench nfc list` \
    shows what libnfc finds, `lockbench doctor` what is missing.
    """
}
