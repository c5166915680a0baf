import ByteCore
import Foundation
import Synchronization

/// A double at the APDU seam (not of libnfc): a small ISO 7816-4 card.
/// - SELECT (00 A4 04 00 …) → 9000 (and remembers it was selected)
/// - ECHO (80 EE 00 00 Lc data) → data ‖ 9000
/// - BIG (80 B0 hi lo) → a (hi·256+lo)-byte response delivered with 61xx chaining in pieces of
///   at most 256 bytes; GET RESPONSE (00 C0 00 00 Le) returns the next piece
/// - RAW (80 B1 hi lo) → the whole (hi·256+lo)-byte response at once (for MI chaining tests)
/// - SLOW (80 5E 00 00 ms) → sleeps `ms`·10 ms, then 9000
/// - anything else → 6D00
final class TestCard: APDUResponder {
    private struct State {
        var pending: [UInt8] = []
        var resets = 0
        var commands: [[UInt8]] = []
        var selected = false
    }
    private let state = Mutex(State())
    var resets: Int { state.withLock { $0.resets } }
    var commands: [[UInt8]] { state.withLock { $0.commands } }
    var selected: Bool {
        get { state.withLock { $0.selected } }
        set { state.withLock { $0.selected = newValue } }
    }

    static func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) } }

    func respond(to command: [UInt8]) -> [UInt8] {
        state.withLock { $0.commands.append(command) }
        guard command.count >= 4 else { return [0x67, 0x00] }
        switch (command[0], command[1]) {
        case (0x00, 0xA4):
            selected = true
            return [0x90, 0x00]
        case (0x80, 0xEE):
            return Array(command.dropFirst(5)) + [0x90, 0x00]
        case (0x80, 0xB0):
            let pattern = Self.pattern(Int(command[2]) << 8 | Int(command[3]))
            state.withLock { $0.pending = pattern }
            return nextPiece(max: 256)
        case (0x00, 0xC0):
            let le = command.count > 4 ? Int(command[4]) : 256
            return nextPiece(max: le == 0 ? 256 : le)
        case (0x80, 0xB1):
            return Self.pattern(Int(command[2]) << 8 | Int(command[3])) + [0x90, 0x00]
        case (0x80, 0x5E):
            usleep(useconds_t(command.count > 4 ? Int(command[4]) * 10_000 : 0))
            return [0x90, 0x00]
        default:
            return [0x6D, 0x00]
        }
    }

    private func nextPiece(max: Int) -> [UInt8] {
        state.withLock { s in
            let piece = Array(s.pending.prefix(max))
            s.pending.removeFirst(piece.count)
            if s.pending.isEmpty { return piece + [0x90, 0x00] }
            return piece + [0x61, UInt8(min(s.pending.count, 256) & 0xFF)]
        }
    }

    func reset() {
        state.withLock { s in
            s.resets += 1
            s.selected = false
            s.pending = []
        }
    }
}
