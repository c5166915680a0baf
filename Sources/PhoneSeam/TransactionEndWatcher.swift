import AccessProtocol
import ByteCore
import Foundation
import Synchronization

/// Passes APDUs to a phone and notes when the lock ended the transaction (an EXCHANGE or a
/// CONTROL FLOW answered): radios where the phone sits in a field (a virtual PN532, vpicc) have
/// no end of stream to tell them, so they watch for it.
public final class TransactionEndWatcher: APDUResponder, Sendable {
    private struct State { var commands = 0; var ended = false }
    // The phone answers on the radio's I/O thread; the watcher only forwards to it.
    nonisolated(unsafe) private let phone: APDUResponder
    private let state = Mutex(State())

    public init(_ phone: APDUResponder) { self.phone = phone }

    public var commands: Int { state.withLock { $0.commands } }
    public var ended: Bool { state.withLock { $0.ended } }

    public func respond(to command: [UInt8]) -> [UInt8] {
        let response = phone.respond(to: command)
        let ends = command.count >= 2 && (command[1] == Instruction.exchange || command[1] == Instruction.controlFlow)
        state.withLock { $0.commands += 1; if ends { $0.ended = true } }
        return response
    }

    public func reset() { phone.reset() }
    public var answersAtOnce: Bool { phone.answersAtOnce }
    public func answerSent() { phone.answerSent() }

    /// Waits until the lock ended the transaction, at most `timeout`; then `settle` more, so the
    /// last answer reaches the lock before the phone leaves. True when it ended.
    public func waitForEnd(timeout: TimeInterval, settle: TimeInterval = 0.2) -> Bool {
        let deadline = Date().addingTimeInterval(max(0, timeout))
        while !ended {
            if Date() >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.01)
        }
        if settle > 0 { Thread.sleep(forTimeInterval: settle) }
        return true
    }

    public var tap: PhoneTap { state.withLock { PhoneTap(commands: $0.commands, ended: $0.ended) } }
}
