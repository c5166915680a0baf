import ByteCore
import Foundation
import Synchronization

/// The RF field of the virtual reader: at most one card in it, and, for target mode, at most one
/// external reader tapping the chip. Cards come and go from any thread while the chip runs on
/// the reader's I/O thread; every change pokes the I/O thread through `onChange`.
final class VirtualField: Sendable {
    private struct Contents {
        var card: VirtualCard?
        var generation: UInt64 = 0
        var externalReader: ExternalReader?
    }
    private let contents = Mutex(Contents())
    private let onChange: @Sendable () -> Void
    /// The serial queue every call into a card's responder runs on (respond and reset alike).
    let cardQueue = DispatchQueue(label: "lockbench.virtual-pn532.card")

    init(onChange: @escaping @Sendable () -> Void) { self.onChange = onChange }

    /// The card in the field, and a counter bumped on every insert/remove so the chip notices a
    /// card that left and came back (a fresh power-up: not halted, not activated).
    var snapshot: (card: VirtualCard?, generation: UInt64) {
        contents.withLock { ($0.card, $0.generation) }
    }

    func place(_ card: VirtualCard?) {
        let old = contents.withLock { c in
            let old = c.card
            c.card = card
            c.generation &+= 1
            return old
        }
        if let old, old !== card { cardQueue.async { old.responder.reset() } }
        onChange()
    }

    var externalReader: ExternalReader? { contents.withLock { $0.externalReader } }

    func setExternalReader(_ reader: ExternalReader?) {
        contents.withLock { $0.externalReader = reader }
        onChange()
    }
}

/// Target mode: an external reader (a phone's or a door's) tapping the PN532 while libnfc runs it
/// as a card (`TgInitAsTarget`, `TgGetData`, `TgSetData`). Its `transceive` sends a C-APDU to
/// the emulated card and waits for the R-APDU, so the reader side of the protocol can run over it.
public final class ExternalReader: APDUTransceiver, Sendable {
    private struct Exchange: Sendable {
        var commands: [[UInt8]] = []
        var response: [UInt8]?
        var left = false
    }
    private let exchange = Monitor(Exchange())
    private let timeout: TimeInterval
    private let onCommand: @Sendable () -> Void

    init(timeout: TimeInterval, onCommand: @escaping @Sendable () -> Void) {
        self.timeout = timeout
        self.onCommand = onCommand
    }

    public func transceive(_ command: [UInt8]) throws -> [UInt8] {
        try exchange.withLock { e in
            guard !e.left else { throw PN532Error(.notRunning, "the external reader has left the field") }
            e.response = nil
            e.commands.append(command)
        }
        onCommand()
        let deadline = Date().addingTimeInterval(timeout)
        return try exchange.wait(until: deadline, for: { $0.response != nil || $0.left }) { e, _ in
            guard let r = e.response else {
                throw PN532Error(e.left ? .notRunning : .timeout, e.left ? "the emulated card was released" : "the emulated card did not answer in \(timeout) s")
            }
            e.response = nil
            return r
        }
    }

    /// Next C-APDU for TgGetData, if one is waiting.
    func takeCommand() -> [UInt8]? {
        exchange.withLock { $0.commands.isEmpty ? nil : $0.commands.removeFirst() }
    }

    /// The R-APDU from TgSetData.
    func deliver(_ r: [UInt8]) {
        exchange.withLock { $0.response = r }
    }

    var hasLeft: Bool { exchange.withLock { $0.left } }

    func leave() {
        exchange.withLock { $0.left = true }
    }
}
