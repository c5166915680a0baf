import ByteCore
import CLibNFC
#if canImport(Glibc)
import Glibc
#endif

/// The single boundary to libnfc: every `nfc_*` call of the project lives in this file. Each
/// wrapper maps libnfc's return codes (`NFC_E…`, named in `NFCError.from`) to `NFCError`.
public enum LibNFC {
    /// The libnfc version loaded at run time (`nfc_version()`), e.g. "1.8.0".
    public static var version: String { String(cString: nfc_version()) }

    /// Maps a negative libnfc return value to an error; `context` says what was being done.
    static func error(_ code: Int32, _ context: String, file: String = #fileID, line: Int = #line) -> NFCError {
        switch code {
        case NFC_ETIMEOUT: return NFCError(.timeout, "\(context): the card did not answer in time (NFC_ETIMEOUT)", libnfcCode: code, file: file, line: line)
        case NFC_ETGRELEASED: return NFCError(.targetLost, "\(context): the card left the field (NFC_ETGRELEASED)", libnfcCode: code, file: file, line: line)
        case NFC_ERFTRANS: return NFCError(.targetLost, "\(context): RF transmission failed; the card left the field or did not answer (NFC_ERFTRANS)", libnfcCode: code, file: file, line: line)
        case NFC_EIO: return NFCError(.io, "\(context): input/output error talking to the reader (NFC_EIO); was it unplugged, or its virtual pty closed?", libnfcCode: code, file: file, line: line)
        case NFC_EOPABORTED: return NFCError(.aborted, "\(context): aborted (NFC_EOPABORTED)", libnfcCode: code, file: file, line: line)
        case NFC_EINVARG: return NFCError(.invalidArgument, "\(context): invalid argument (NFC_EINVARG)", libnfcCode: code, file: file, line: line)
        case NFC_EDEVNOTSUPP, NFC_ENOTIMPL: return NFCError(.notSupported, "\(context): not supported by this reader (\(code == NFC_ENOTIMPL ? "NFC_ENOTIMPL" : "NFC_EDEVNOTSUPP"))", libnfcCode: code, file: file, line: line)
        case NFC_ENOTSUCHDEV: return NFCError(.noDevice, "\(context): no such device (NFC_ENOTSUCHDEV)", libnfcCode: code, file: file, line: line)
        case NFC_EOVFLOW: return NFCError(.chip, "\(context): the answer did not fit the buffer (NFC_EOVFLOW)", libnfcCode: code, file: file, line: line)
        case NFC_ECHIP: return NFCError(.chip, "\(context): the reader chip reported an error (NFC_ECHIP)", libnfcCode: code, file: file, line: line)
        default: return NFCError(.chip, "\(context): libnfc error \(code)", libnfcCode: code, file: file, line: line)
        }
    }
}

/// One libnfc context (`nfc_init` … `nfc_exit`): reads /etc/nfc/libnfc.conf and LIBNFC_* once.
public final class NFCContext {
    let pointer: OpaquePointer

    public init() throws(NFCError) {
        var context: OpaquePointer? = nil
        nfc_init(&context)
        guard let context else {
            throw NFCError(.contextUnavailable, "nfc_init failed: out of memory, or an unreadable /etc/nfc/libnfc.conf")
        }
        pointer = context
    }

    deinit { nfc_exit(pointer) }

    /// Connstrings of the readers libnfc finds (`nfc_list_devices`): configured devices
    /// (LIBNFC_DEVICE, libnfc.conf) and, with autoscan, USB and serial readers.
    public func listDevices(max: Int = 16) -> [String] {
        let size = MemoryLayout<nfc_connstring>.stride
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size * max, alignment: 1)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: size * max)
        let count = nfc_list_devices(pointer, buffer.assumingMemoryBound(to: nfc_connstring.self), max)
        return (0..<Int(count)).map { String(cString: (buffer + $0 * size).assumingMemoryBound(to: CChar.self)) }
    }

    /// Opens a reader (`nfc_open`); nil opens libnfc's default device. A failure is diagnosed
    /// (`NFCEnvironment.diagnoseOpenFailure`) into an error that says what to do.
    public func open(_ connstring: String?) throws(NFCError) -> NFCDevice {
        let device: OpaquePointer?
        if let connstring {
            guard connstring.utf8.count < MemoryLayout<nfc_connstring>.size else {
                throw NFCError(.invalidArgument, "connstring longer than \(MemoryLayout<nfc_connstring>.size - 1) bytes")
            }
            device = nfc_open(pointer, connstring)
        } else {
            device = nfc_open(pointer, nil)
        }
        guard let device else { throw NFCEnvironment.diagnoseOpenFailure(connstring: connstring) }
        return NFCDevice(device, context: self)
    }
}

/// Facts about the card a reader selected: its ISO/IEC 14443-3 identity and ATS.
public struct TargetInfo: Equatable, Sendable, CustomStringConvertible {
    public var uid: [UInt8]
    /// ATQA (SENS_RES), e.g. 0x0044.
    public var atqa: UInt16
    public var sak: UInt8
    /// The ATS without its length byte (libnfc's form), empty when the card is not ISO-DEP.
    public var ats: [UInt8]

    public init(uid: [UInt8], atqa: UInt16, sak: UInt8, ats: [UInt8]) {
        self.uid = uid; self.atqa = atqa; self.sak = sak; self.ats = ats
    }

    /// SAK bit 0x20: the card speaks ISO/IEC 14443-4, so APDUs can be exchanged.
    public var isISODEP: Bool { sak & 0x20 != 0 }

    public var description: String {
        "UID \(uid.hex) ATQA \(atqa.bigEndianBytes.hex) SAK \([sak].hex)" + (ats.isEmpty ? "" : " ATS \(ats.hex)")
    }

    init(_ target: nfc_target) {
        var info = target.nti.nai
        let uidCount = min(Int(info.szUidLen), 10), atsCount = min(Int(info.szAtsLen), 254)
        uid = withUnsafeBytes(of: &info.abtUid) { Array($0.prefix(uidCount)) }
        ats = withUnsafeBytes(of: &info.abtAts) { Array($0.prefix(atsCount)) }
        atqa = UInt16(info.abtAtqa.0) << 8 | UInt16(info.abtAtqa.1)
        sak = info.btSak
    }
}

/// An open reader (`nfc_device`). Not thread-safe: one thread drives it, except `abort()`.
public final class NFCDevice {
    private var pointer: OpaquePointer?
    private let context: NFCContext
    public let connstring: String
    public let name: String
    private var target = nfc_target()
    private var hasTarget = false

    init(_ pointer: OpaquePointer, context: NFCContext) {
        self.pointer = pointer
        self.context = context
        connstring = String(cString: nfc_device_get_connstring(pointer))
        name = String(cString: nfc_device_get_name(pointer))
    }

    deinit { close() }

    private func device(_ what: String) throws(NFCError) -> OpaquePointer {
        guard let pointer else { throw NFCError(.closed, "\(what): the reader \(connstring) is closed") }
        return pointer
    }

    private func check(_ result: Int32, _ what: String) throws(NFCError) -> Int32 {
        guard result >= 0 else { throw LibNFC.error(result, what) }
        return result
    }

    /// `nfc_initiator_init`: field on, reader mode, ISO14443-A at 106 kbps, automatic RATS.
    /// Then `NP_INFINITE_SELECT` off, so a select with no card returns at once instead of waiting.
    public func initiatorInit() throws(NFCError) {
        let d = try device("nfc_initiator_init")
        _ = try check(nfc_initiator_init(d), "nfc_initiator_init")
        _ = try check(nfc_device_set_property_bool(d, NP_INFINITE_SELECT, false), "nfc_device_set_property_bool(NP_INFINITE_SELECT)")
    }

    /// Turns the RF field off and on again (`NP_ACTIVATE_FIELD`): every card in it resets.
    public func cycleField() throws(NFCError) {
        let d = try device("NP_ACTIVATE_FIELD")
        _ = try check(nfc_device_set_property_bool(d, NP_ACTIVATE_FIELD, false), "NP_ACTIVATE_FIELD off")
        _ = try check(nfc_device_set_property_bool(d, NP_ACTIVATE_FIELD, true), "NP_ACTIVATE_FIELD on")
    }

    private static let iso14443A = nfc_modulation(nmt: NMT_ISO14443A, nbr: NBR_106)

    /// One ISO14443-A selection attempt (`nfc_initiator_select_passive_target`): the card in
    /// the field (or the one with `uid`), or nil when there is none.
    public func selectISO14443A(uid: [UInt8]? = nil) throws(NFCError) -> TargetInfo? {
        let d = try device("nfc_initiator_select_passive_target")
        hasTarget = false
        var t = nfc_target()
        let result: Int32
        if let uid {
            result = uid.withUnsafeBufferPointer { nfc_initiator_select_passive_target(d, Self.iso14443A, $0.baseAddress, $0.count, &t) }
        } else {
            result = nfc_initiator_select_passive_target(d, Self.iso14443A, nil, 0, &t)
        }
        guard try check(result, "nfc_initiator_select_passive_target") > 0 else { return nil }
        target = t
        hasTarget = true
        return TargetInfo(t)
    }

    /// Hardware polling for ISO14443-A (`nfc_initiator_poll_target`; InAutoPoll on a PN532):
    /// `count` polls (1–254, 255 = forever) of `period` × 150 ms. Nil when nothing came.
    public func pollISO14443A(count: UInt8 = 1, period: UInt8 = 2) throws(NFCError) -> TargetInfo? {
        let d = try device("nfc_initiator_poll_target")
        hasTarget = false
        var t = nfc_target()
        var modulation = Self.iso14443A
        let result = nfc_initiator_poll_target(d, &modulation, 1, count, period, &t)
        if result == NFC_ECHIP || result == NFC_ETIMEOUT { return nil }  // no target during the polls
        guard try check(result, "nfc_initiator_poll_target") > 0 else { return nil }
        target = t
        hasTarget = true
        return TargetInfo(t)
    }

    /// Every ISO14443-A card answering (`nfc_initiator_list_passive_targets`).
    public func listISO14443A(max: Int = 4) throws(NFCError) -> [TargetInfo] {
        let d = try device("nfc_initiator_list_passive_targets")
        var targets = [nfc_target](repeating: nfc_target(), count: max)
        let n = try check(nfc_initiator_list_passive_targets(d, Self.iso14443A, &targets, max), "nfc_initiator_list_passive_targets")
        return targets.prefix(Int(n)).map(TargetInfo.init)
    }

    /// Exchanges one APDU with the selected card (`nfc_initiator_transceive_bytes` with easy
    /// framing: InDataExchange; the chip does ISO-DEP blocks, chaining and waiting-time
    /// extensions). `timeout` in ms; 0 waits forever, -1 uses libnfc's default.
    public func transceive(_ command: [UInt8], timeout: Int32 = 1000) throws(NFCError) -> [UInt8] {
        let d = try device("nfc_initiator_transceive_bytes")
        guard command.count <= 262 else {
            throw NFCError(.invalidArgument, "a command APDU through libnfc is at most 262 bytes, not \(command.count): use command chaining")
        }
        var response = [UInt8](repeating: 0, count: 264)
        let n = command.withUnsafeBufferPointer { c in
            response.withUnsafeMutableBufferPointer { r in
                nfc_initiator_transceive_bytes(d, c.baseAddress, c.count, r.baseAddress, r.count, timeout)
            }
        }
        return Array(response.prefix(Int(try check(n, "nfc_initiator_transceive_bytes"))))
    }

    /// Sends a raw frame through InCommunicateThru (easy framing off; the chip adds the CRC):
    /// for ECP polling frames and other pre-selection frames. Returns the answer, or [] when no
    /// card answered (the chip's timeout status), which is what an ECP frame gets.
    public func transceiveRaw(_ frame: [UInt8], timeout: Int32 = 30) throws(NFCError) -> [UInt8] {
        let d = try device("nfc_initiator_transceive_bytes (raw)")
        _ = try check(nfc_device_set_property_bool(d, NP_EASY_FRAMING, false), "NP_EASY_FRAMING off")
        defer { _ = nfc_device_set_property_bool(d, NP_EASY_FRAMING, true) }
        var response = [UInt8](repeating: 0, count: 264)
        let n = frame.withUnsafeBufferPointer { c in
            response.withUnsafeMutableBufferPointer { r in
                nfc_initiator_transceive_bytes(d, c.baseAddress, c.count, r.baseAddress, r.count, timeout)
            }
        }
        if n == NFC_ERFTRANS || n == NFC_ETIMEOUT { return [] }  // nobody answered
        return Array(response.prefix(Int(try check(n, "InCommunicateThru"))))
    }

    /// Whether the selected card is still in the field (`nfc_initiator_target_is_present`; on a
    /// PN532 a raw R(NAK) `B2`). False once it left; throws when the reader itself failed.
    public func isTargetPresent() throws(NFCError) -> Bool {
        let d = try device("nfc_initiator_target_is_present")
        guard hasTarget else { return false }
        let result = nfc_initiator_target_is_present(d, &target)
        if result == NFC_SUCCESS { return true }
        if result == NFC_ETGRELEASED || result == NFC_ERFTRANS || result == NFC_ETIMEOUT || result == NFC_EINVARG {
            hasTarget = false
            return false
        }
        throw LibNFC.error(result, "nfc_initiator_target_is_present")
    }

    /// Deselects the card (`nfc_initiator_deselect_target`; it goes to HALT).
    public func deselect() throws(NFCError) {
        let d = try device("nfc_initiator_deselect_target")
        hasTarget = false
        _ = try check(nfc_initiator_deselect_target(d), "nfc_initiator_deselect_target")
    }

    /// Releases the card and switches the field off (`nfc_idle`).
    public func idle() throws(NFCError) {
        let d = try device("nfc_idle")
        hasTarget = false
        _ = try check(nfc_idle(d), "nfc_idle")
    }

    /// Aborts a blocking command (`nfc_abort_command`); callable from another thread.
    public func abort() {
        if let pointer { _ = nfc_abort_command(pointer) }
    }

    /// libnfc's description of the reader (`nfc_device_get_information_about`): chip, modulations.
    public func information() throws(NFCError) -> String {
        let d = try device("nfc_device_get_information_about")
        var buffer: UnsafeMutablePointer<CChar>? = nil
        _ = try check(nfc_device_get_information_about(d, &buffer), "nfc_device_get_information_about")
        defer { nfc_free(buffer) }
        return buffer.map { String(cString: $0) } ?? ""
    }

    /// `nfc_close` (which idles the reader first). Safe to call twice.
    public func close() {
        if let pointer { nfc_close(pointer) }
        pointer = nil
        hasTarget = false
    }

    public var isOpen: Bool { pointer != nil }

    /// The selected card as an APDU transceiver for the protocol layer.
    public func link(_ info: TargetInfo, timeout: Int32 = 1000) -> NFCTargetLink {
        NFCTargetLink(device: self, target: info, timeout: timeout)
    }
}

/// The reader side of the APDU seam over libnfc: what the protocol layer's reader session
/// transceives through. Errors are `NFCError` (`.targetLost`, `.timeout`, `.io`).
public final class NFCTargetLink: APDUTransceiver {
    public let device: NFCDevice
    public let target: TargetInfo
    /// Per-APDU timeout in ms.
    public var timeout: Int32

    public init(device: NFCDevice, target: TargetInfo, timeout: Int32 = 1000) {
        self.device = device; self.target = target; self.timeout = timeout
    }

    public func transceive(_ command: [UInt8]) throws -> [UInt8] {
        try device.transceive(command, timeout: timeout)
    }
}
