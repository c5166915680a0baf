import ByteCore
import Foundation

/// The RF field of the virtual reader: at most one card in it, and, for target mode, at most one
/// external reader tapping the chip. Thread-safe: cards come and go from any thread while the
/// chip runs on the reader's I/O thread; every change pokes the I/O thread through `onChange`.
final class VirtualField {
    private let lock = NSLock()
    private var _card: VirtualCard?
    private var _generation: UInt64 = 0
    private var _externalReader: ExternalReader?
    var onChange: (() -> Void)?
    /// The serial queue every call into a card's responder runs on (respond and reset alike).
    let cardQueue = DispatchQueue(label: "lockbench.virtual-pn532.card")

    /// The card in the field, and a counter bumped on every insert/remove so the chip notices a
    /// card that left and came back (a fresh power-up: not halted, not activated).
    var snapshot: (card: VirtualCard?, generation: UInt64) {
        lock.lock(); defer { lock.unlock() }
        return (_card, _generation)
    }

    func place(_ card: VirtualCard?) {
        lock.lock()
        let old = _card
        _card = card
        _generation &+= 1
        lock.unlock()
        if let old, old !== card { cardQueue.async { old.responder.reset() } }
        onChange?()
    }

    var externalReader: ExternalReader? {
        lock.lock(); defer { lock.unlock() }
        return _externalReader
    }

    func setExternalReader(_ reader: ExternalReader?) {
        lock.lock(); _externalReader = reader; lock.unlock()
        onChange?()
    }
}

/// Target mode: an external reader (a phone's or a door's) tapping the PN532 while libnfc runs it
/// as a card (`TgInitAsTarget`, `TgGetData`, `TgSetData`). Its `transceive` sends a C-APDU to
/// the emulated card and waits for the R-APDU, so the reader side of the protocol can run over it.
public final class ExternalReader: APDUTransceiver {
    private let condition = NSCondition()
    private var commands: [[UInt8]] = []
    private var response: [UInt8]?
    private var left = false
    private let timeout: TimeInterval
    var onCommand: (() -> Void)?

    init(timeout: TimeInterval) { self.timeout = timeout }

    public func transceive(_ command: [UInt8]) throws -> [UInt8] {
        condition.lock()
        defer { condition.unlock() }
        guard !left else { throw PN532Error(.notRunning, "the external reader has left the field") }
        response = nil
        commands.append(command)
        condition.unlock()
        onCommand?()
        condition.lock()
        let deadline = Date().addingTimeInterval(timeout)
        while response == nil && !left {
            if !condition.wait(until: deadline) { break }
        }
        guard let r = response else {
            throw PN532Error(left ? .notRunning : .timeout, left ? "the emulated card was released" : "the emulated card did not answer in \(timeout) s")
        }
        response = nil
        return r
    }

    /// Next C-APDU for TgGetData, if one is waiting.
    func takeCommand() -> [UInt8]? {
        condition.lock(); defer { condition.unlock() }
        return commands.isEmpty ? nil : commands.removeFirst()
    }

    /// The R-APDU from TgSetData.
    func deliver(_ r: [UInt8]) {
        condition.lock(); response = r; condition.broadcast(); condition.unlock()
    }

    var hasLeft: Bool { condition.lock(); defer { condition.unlock() }; return left }

    func leave() {
        condition.lock(); left = true; condition.broadcast(); condition.unlock()
    }
}
