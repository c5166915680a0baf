import ByteCore

/// The one error type of the PC/SC layer: a stable code to match on, a reason that says what to
/// do about it, and the PC/SC return value (`SCARD_E_…`/`SCARD_W_…`) it came from.
public struct PCSCError: CodedError, CustomStringConvertible, Equatable, Sendable {
    public enum Code: String, Sendable, CaseIterable {
        /// SCARD_E_NO_SERVICE / SCARD_E_SERVICE_STOPPED: pcscd is not running (or went away).
        case noService
        /// SCARD_E_NO_READERS_AVAILABLE: pcscd runs but offers no reader.
        case noReaders
        /// SCARD_E_UNKNOWN_READER: no reader by that name.
        case unknownReader
        /// SCARD_E_READER_UNAVAILABLE: the reader was unplugged or its driver failed.
        case readerUnavailable
        /// SCARD_E_NO_SMARTCARD: no card on the reader.
        case noCard
        /// SCARD_W_REMOVED_CARD, SCARD_E_NOT_TRANSACTED, an empty answer: the card left mid-exchange.
        case cardRemoved
        /// SCARD_W_RESET_CARD / SCARD_W_UNPOWERED_CARD: another program reset or powered the card down.
        case cardReset
        /// SCARD_W_UNRESPONSIVE_CARD / SCARD_W_UNSUPPORTED_CARD / SCARD_E_PROTO_MISMATCH: the card does not answer as needed.
        case cardUnresponsive
        /// SCARD_E_SHARING_VIOLATION: another program holds the card exclusively.
        case sharingViolation
        /// SCARD_E_TIMEOUT.
        case timeout
        /// SCARD_E_CANCELLED.
        case cancelled
        /// SCARD_E_INVALID_HANDLE: the context or card handle is no longer valid (pcscd restarted).
        case invalidHandle
        /// SCARD_F_COMM_ERROR and other internal failures of pcscd or the driver.
        case communication
        /// An argument PC/SC refused, an answer that does not fit, or anything else.
        case other
    }

    public let code: Code
    public let reason: String
    /// The PC/SC return value, when the error came from the library.
    public let pcscCode: UInt32?

    public init(_ code: Code, _ reason: String, pcscCode: UInt32? = nil) {
        self.code = code
        self.reason = reason
        self.pcscCode = pcscCode
    }

    public var description: String { reason }

    /// True when the reader (not the card) failed: a loop reopens it.
    public var isReaderFailure: Bool {
        [.noService, .noReaders, .unknownReader, .readerUnavailable, .invalidHandle, .communication].contains(code)
    }

    /// How to start pcscd, for every "not running" message.
    public static let startAdvice = """
    start it: `sudo systemctl start pcscd.socket` (Debian/Ubuntu, package pcscd), or `sudo pcscd -f -a` \
    in a terminal of its own; `lockbench doctor` checks it
    """

    /// What to do when there is no reader, for every "no reader" message.
    public static let readerAdvice = """
    plug in a CCID reader (ACR1252U, HID Omnikey, Identiv uTrust; package libccid), or install the \
    virtual reader `vsmartcard-vpcd` and restart pcscd; `lockbench pcsc list` shows what pcscd offers
    """
}
