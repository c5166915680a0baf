import ByteCore
import Synchronization

/// The plain ISO-DEP card `lockbench nfc virtual-reader` places in the field when no credential
/// is plugged in: enough for libnfc tools and for checking a reader end to end.
/// - SELECT by AID (00 A4 04 00 Lc AID) → 9000
/// - ECHO (80 EE 00 00 Lc data) → data ‖ 9000
/// - anything else → 6D00 (INS not supported); shorter than 4 bytes → 6700 (wrong length)
public final class SimpleCard: APDUResponder {
    private let selected = Mutex<[UInt8]?>(nil)
    public var selectedAID: [UInt8]? { selected.withLock { $0 } }

    public init() {}

    public func respond(to command: [UInt8]) -> [UInt8] {
        guard command.count >= 4 else { return [0x67, 0x00] }
        switch (command[0], command[1], command[2]) {
        case (0x00, 0xA4, 0x04):
            guard command.count >= 5, command.count >= 5 + Int(command[4]) else { return [0x67, 0x00] }
            let aid = Array(command[5..<(5 + Int(command[4]))])
            selected.withLock { $0 = aid }
            return [0x90, 0x00]
        case (0x80, 0xEE, _):
            return Array(command.dropFirst(5)) + [0x90, 0x00]
        default:
            return [0x6D, 0x00]
        }
    }

    public func reset() { selected.withLock { $0 = nil } }

    public var answersAtOnce: Bool { true }
}
