import ByteCore
import CPCSCLite
#if canImport(Glibc)
import Glibc
#endif

/// The one file that calls `SCard*` (pcsc-lite's libpcsclite, the PC/SC resource manager pcscd
/// serves): a context, the readers' states, a connected card. Every return code goes through
/// `PCSCLite.check`, which turns it into a `PCSCError` that says what to do.
enum PCSCLite {
    /// `SCARD_S_SUCCESS` and the codes the wrappers look at (pcsclite.h declares them as casts,
    /// which Swift does not import).
    static let success: UInt32 = 0x0000_0000
    static let timeoutCode: UInt32 = 0x8010_000A
    static let noReadersCode: UInt32 = 0x8010_002E
    /// `INFINITE` for SCardGetStatusChange; never used: every wait here is bounded.
    static let maxTimeout: UInt32 = 60_000

    /// The code as pcsclite.h spells it (for messages and tests).
    static func name(_ code: UInt32) -> String {
        let names: [UInt32: String] = [
            0x8010_0001: "SCARD_F_INTERNAL_ERROR", 0x8010_0002: "SCARD_E_CANCELLED", 0x8010_0003: "SCARD_E_INVALID_HANDLE",
            0x8010_0004: "SCARD_E_INVALID_PARAMETER", 0x8010_0006: "SCARD_E_NO_MEMORY", 0x8010_0008: "SCARD_E_INSUFFICIENT_BUFFER",
            0x8010_0009: "SCARD_E_UNKNOWN_READER", 0x8010_000A: "SCARD_E_TIMEOUT", 0x8010_000B: "SCARD_E_SHARING_VIOLATION",
            0x8010_000C: "SCARD_E_NO_SMARTCARD", 0x8010_000F: "SCARD_E_PROTO_MISMATCH", 0x8010_0010: "SCARD_E_NOT_READY",
            0x8010_0011: "SCARD_E_INVALID_VALUE", 0x8010_0013: "SCARD_F_COMM_ERROR", 0x8010_0014: "SCARD_F_UNKNOWN_ERROR",
            0x8010_0016: "SCARD_E_NOT_TRANSACTED", 0x8010_0017: "SCARD_E_READER_UNAVAILABLE", 0x8010_001C: "SCARD_E_CARD_UNSUPPORTED",
            0x8010_001D: "SCARD_E_NO_SERVICE", 0x8010_001E: "SCARD_E_SERVICE_STOPPED", 0x8010_002E: "SCARD_E_NO_READERS_AVAILABLE",
            0x8010_002F: "SCARD_E_COMM_DATA_LOST", 0x8010_0065: "SCARD_W_UNSUPPORTED_CARD", 0x8010_0066: "SCARD_W_UNRESPONSIVE_CARD",
            0x8010_0067: "SCARD_W_UNPOWERED_CARD", 0x8010_0068: "SCARD_W_RESET_CARD", 0x8010_0069: "SCARD_W_REMOVED_CARD",
        ]
        return names[code] ?? String(format: "0x%08X", code)
    }

    /// Maps a return code to the layer's error; `what` names the call and its subject.
    static func error(_ code: UInt32, _ what: String) -> PCSCError {
        let name = Self.name(code)
        let (kind, advice): (PCSCError.Code, String)
        switch code {
        case 0x8010_001D, 0x8010_001E:
            (kind, advice) = (.noService, "pcscd, the PC/SC daemon, is not running: " + PCSCError.startAdvice)
        case 0x8010_002E:
            (kind, advice) = (.noReaders, "pcscd offers no reader: " + PCSCError.readerAdvice)
        case 0x8010_0009:
            (kind, advice) = (.unknownReader, "no such reader: `lockbench pcsc list` shows the names pcscd offers")
        case 0x8010_0017:
            (kind, advice) = (.readerUnavailable, "the reader is unavailable (unplugged, or its driver failed); plug it in again")
        case 0x8010_000C:
            (kind, advice) = (.noCard, "no card on the reader")
        case 0x8010_0069, 0x8010_0016:
            (kind, advice) = (.cardRemoved, "the card left the reader")
        case 0x8010_0068, 0x8010_0067:
            (kind, advice) = (.cardReset, "another program reset or powered down the card; tap again")
        case 0x8010_0066, 0x8010_0065, 0x8010_000F, 0x8010_001C:
            (kind, advice) = (.cardUnresponsive, "the card does not answer over T=0 or T=1")
        case 0x8010_000B:
            (kind, advice) = (.sharingViolation, "another program holds the card exclusively (close it, e.g. pcsc_scan or a browser's smart-card module)")
        case 0x8010_000A:
            (kind, advice) = (.timeout, "timed out")
        case 0x8010_0002:
            (kind, advice) = (.cancelled, "cancelled")
        case 0x8010_0003:
            (kind, advice) = (.invalidHandle, "the PC/SC handle is no longer valid (pcscd restarted?)")
        case 0x8010_0013, 0x8010_0001, 0x8010_0014, 0x8010_002F:
            (kind, advice) = (.communication, "pcscd or the reader's driver failed; see pcscd's log (`pcscd -f -d`)")
        default:
            (kind, advice) = (.other, "PC/SC refused it")
        }
        return PCSCError(kind, "\(what): \(name): \(advice)", pcscCode: code)
    }

    static func check(_ rc: LONG, _ what: @autoclosure () -> String) throws(PCSCError) {
        let code = UInt32(truncatingIfNeeded: rc)
        guard code == success else { throw error(code, what()) }
    }
}

/// A reader's state as SCardGetStatusChange reports it.
public struct PCSCReaderState: Equatable, Sendable {
    /// `SCARD_STATE_*` bits (without CHANGED and without the event counter).
    public var flags: UInt
    /// pcsc-lite's count of card events on this reader (the high 16 bits of `dwEventState`): a
    /// card removed and put back between two waits still changes it.
    public var eventCount: UInt = 0
    /// The card's ATR when one is present.
    public var atr: [UInt8]

    public var isPresent: Bool { flags & UInt(SCARD_STATE_PRESENT) != 0 }
    public var isEmpty: Bool { flags & UInt(SCARD_STATE_EMPTY) != 0 }
    /// A card is there but does not answer (vpcd reports it after a virtual card disconnects).
    public var isMute: Bool { flags & UInt(SCARD_STATE_MUTE) != 0 }
    public var isUnavailable: Bool { flags & UInt(SCARD_STATE_UNAVAILABLE | SCARD_STATE_UNKNOWN) != 0 }
    public var isExclusive: Bool { flags & UInt(SCARD_STATE_EXCLUSIVE) != 0 }
    /// A card that a transaction can use.
    public var hasUsableCard: Bool { isPresent && !isMute && !isExclusive }
}

/// A PC/SC context (SCardEstablishContext, system scope); released on `release()` or deinit.
public final class PCSCContext {
    private var handle: SCARDCONTEXT = 0
    private var established = false

    public init() throws(PCSCError) {
        try PCSCLite.check(SCardEstablishContext(DWORD(SCARD_SCOPE_SYSTEM), nil, nil, &handle), "SCardEstablishContext")
        established = true
    }

    deinit { release() }

    public func release() {
        if established { _ = SCardReleaseContext(handle); established = false }
    }

    /// False once pcscd went away (SCardIsValidContext).
    public var isValid: Bool { established && UInt32(truncatingIfNeeded: SCardIsValidContext(handle)) == PCSCLite.success }

    /// The readers pcscd offers, in its order; empty when there are none.
    public func readers() throws(PCSCError) -> [String] {
        var length: DWORD = 0
        var rc = SCardListReaders(handle, nil, nil, &length)
        if UInt32(truncatingIfNeeded: rc) == PCSCLite.noReadersCode { return [] }
        try PCSCLite.check(rc, "SCardListReaders")
        // A multi-string: names separated by NUL, ended by an empty one. pcscd bounds it; so do we.
        guard length > 0, length <= 65_536 else { return [] }
        var buffer = [CChar](repeating: 0, count: Int(length))
        rc = SCardListReaders(handle, nil, &buffer, &length)
        if UInt32(truncatingIfNeeded: rc) == PCSCLite.noReadersCode { return [] }
        try PCSCLite.check(rc, "SCardListReaders")
        return buffer.prefix(Int(min(length, DWORD(buffer.count))))
            .split(separator: 0, omittingEmptySubsequences: true)
            .map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    }

    /// Waits up to `timeoutMilliseconds` for `reader` to differ from `known` (SCardGetStatusChange;
    /// nil = SCARD_STATE_UNAWARE, answered at once); returns its state, or nil when nothing changed in time.
    public func waitForChange(of reader: String, from known: PCSCReaderState?, timeoutMilliseconds: UInt32) throws(PCSCError) -> PCSCReaderState? {
        let name = strdup(reader)
        defer { free(name) }
        var state = SCARD_READERSTATE()
        state.szReader = UnsafePointer(name)
        state.dwCurrentState = known.map { DWORD($0.eventCount << 16 | $0.flags) } ?? DWORD(SCARD_STATE_UNAWARE)
        let rc = SCardGetStatusChange(handle, DWORD(min(timeoutMilliseconds, PCSCLite.maxTimeout)), &state, 1)
        if UInt32(truncatingIfNeeded: rc) == PCSCLite.timeoutCode { return nil }
        try PCSCLite.check(rc, "SCardGetStatusChange on \"\(reader)\"")
        let count = min(Int(state.cbAtr), 33)
        let atr = withUnsafeBytes(of: state.rgbAtr) { Array($0.prefix(count)) }
        let event = UInt(state.dwEventState)
        return PCSCReaderState(flags: event & 0xFFFF & ~UInt(SCARD_STATE_CHANGED), eventCount: event >> 16, atr: atr)
    }

    /// Connects to the card on `reader` (shared; T=0 or T=1, as the card offers).
    public func connect(_ reader: String) throws(PCSCError) -> PCSCCardHandle {
        var card: SCARDHANDLE = 0
        var protocolInUse: DWORD = 0
        try PCSCLite.check(SCardConnect(handle, reader, DWORD(SCARD_SHARE_SHARED), DWORD(SCARD_PROTOCOL_T0 | SCARD_PROTOCOL_T1),
                                        &card, &protocolInUse), "SCardConnect to \"\(reader)\"")
        return PCSCCardHandle(handle: card, reader: reader, protocolInUse: UInt(protocolInUse))
    }
}

/// A connected card: the reader side of a transaction (an `APDUTransceiver`).
public final class PCSCCardHandle: APDUTransceiver {
    private var handle: SCARDHANDLE
    private var connected = true
    public let reader: String
    /// `SCARD_PROTOCOL_T0` (1) or `SCARD_PROTOCOL_T1` (2).
    public let protocolInUse: UInt
    /// The largest response accepted: a short APDU's 256 bytes + SW, or an extended one's 65 536 + SW.
    static let maxResponse = 65_538

    init(handle: SCARDHANDLE, reader: String, protocolInUse: UInt) {
        self.handle = handle
        self.reader = reader
        self.protocolInUse = protocolInUse
    }

    deinit { disconnect() }

    public var protocolName: String { protocolInUse == UInt(SCARD_PROTOCOL_T1) ? "T=1" : "T=0" }

    /// SCardTransmit. When the card leaves during the exchange pcscd answers SCARD_S_SUCCESS with
    /// no bytes (seen with vpcd), then SCARD_E_NOT_TRANSACTED, then SCARD_W_REMOVED_CARD: all three
    /// are `.cardRemoved` here.
    public func transceive(_ command: [UInt8]) throws -> [UInt8] {
        guard connected else { throw PCSCError(.cardRemoved, "SCardTransmit on \"\(reader)\": the card was disconnected") }
        var response = [UInt8](repeating: 0, count: Self.maxResponse)
        var length = DWORD(response.count)
        // What SCARD_PCI_T0 / SCARD_PCI_T1 point to.
        var pci = SCARD_IO_REQUEST(dwProtocol: DWORD(protocolInUse), cbPciLength: DWORD(MemoryLayout<SCARD_IO_REQUEST>.size))
        let rc = SCardTransmit(handle, &pci, command, DWORD(command.count), nil, &response, &length)
        try PCSCLite.check(rc, "SCardTransmit on \"\(reader)\"")
        let n = Int(min(length, DWORD(response.count)))
        guard n >= 2 else {
            throw PCSCError(.cardRemoved, "SCardTransmit on \"\(reader)\": \(n)-byte answer, no status word: the card left the reader")
        }
        return Array(response.prefix(n))
    }

    /// SCardDisconnect, leaving the card powered; idempotent.
    public func disconnect() {
        if connected { _ = SCardDisconnect(handle, DWORD(SCARD_LEAVE_CARD)); connected = false }
    }
}
