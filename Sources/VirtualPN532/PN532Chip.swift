import ByteCore
import Foundation

/// PN532 command codes (PN532 User Manual §7; libnfc `chips/pn53x-internal.h`).
enum PN532Command {
    static let diagnose: UInt8 = 0x00
    static let getFirmwareVersion: UInt8 = 0x02
    static let getGeneralStatus: UInt8 = 0x04
    static let readRegister: UInt8 = 0x06
    static let writeRegister: UInt8 = 0x08
    static let readGPIO: UInt8 = 0x0C
    static let writeGPIO: UInt8 = 0x0E
    static let setSerialBaudRate: UInt8 = 0x10
    static let setParameters: UInt8 = 0x12
    static let samConfiguration: UInt8 = 0x14
    static let powerDown: UInt8 = 0x16
    static let rfConfiguration: UInt8 = 0x32
    static let inDataExchange: UInt8 = 0x40
    static let inCommunicateThru: UInt8 = 0x42
    static let inDeselect: UInt8 = 0x44
    static let inJumpForPSL: UInt8 = 0x46
    static let inListPassiveTarget: UInt8 = 0x4A
    static let inPSL: UInt8 = 0x4E
    static let inATR: UInt8 = 0x50
    static let inRelease: UInt8 = 0x52
    static let inSelect: UInt8 = 0x54
    static let inJumpForDEP: UInt8 = 0x56
    static let inAutoPoll: UInt8 = 0x60
    static let tgGetData: UInt8 = 0x86
    static let tgGetInitiatorCommand: UInt8 = 0x88
    static let tgGetTargetStatus: UInt8 = 0x8A
    static let tgInitAsTarget: UInt8 = 0x8C
    static let tgSetData: UInt8 = 0x8E
    static let tgResponseToInitiator: UInt8 = 0x90
    static let tgSetGeneralBytes: UInt8 = 0x92
    static let tgSetMetaData: UInt8 = 0x94
}

/// PN532 status byte values (User Manual §7.1). None has bit 7 set: libnfc 1.8.0 calls
/// `abort()` when a status byte does.
enum PN532Status {
    static let ok: UInt8 = 0x00
    /// The target did not answer in time: also what a card that left the field produces.
    static let timeout: UInt8 = 0x01
    /// ISO-DEP "more information": the rest follows on the next InDataExchange.
    static let moreInformation: UInt8 = 0x40
    static let invalidParameter: UInt8 = 0x10
    static let wrongContext: UInt8 = 0x27
    static let targetReleased: UInt8 = 0x29
}

/// Chip logic over the virtual field: answers each command like a PN532 v1.6 does, including the
/// ones that wait (a card to appear, a card to answer, an external reader). Made and run on the
/// reader's I/O thread only, so not Sendable; the card's responder runs on `cardQueue` (called
/// from the I/O thread with `sync` when it `answersAtOnce`) and hands its answer back through
/// `ExchangeResults`.
final class PN532Chip {
    enum Outcome {
        /// Reply data (after `D5 CC+1`).
        case reply([UInt8])
        /// The application-level error frame (syntax error, unknown command).
        case errorFrame
        /// Nothing yet: the command waits; `resume` answers it later, a new command or an ACK cancels it.
        case pending(Pending)

        /// The frame the chip writes for this outcome of command `code` (a reply `D5 code+1 …`
        /// or the error frame); nil while pending.
        func frame(answering code: UInt8) -> [UInt8]? {
            switch self {
            case .reply(let data): return PN532Wire.reply(to: code, data)
            case .errorFrame: return PN532Wire.errorFrame
            case .pending: return nil
            }
        }
    }

    /// A command that waits. The reader keeps the code it answers (the one on the wire: 0x86 and
    /// 0x88 share a handler).
    struct Pending {
        enum Kind: Equatable {
            case waitForCard(autoPollTypes: [UInt8]?)
            case exchange(id: UInt64, generation: UInt64)
            case targetInit
            case targetGetData
        }
        let kind: Kind
        let deadline: Date?
    }

    private enum CardState: Equatable {
        case idle
        case active(isoDEP: Bool)
        case halted
    }

    /// Firmware: IC 0x32 (PN532), version 1.6, supports ISO14443A, ISO14443B and ISO18092.
    static let firmwareVersion: [UInt8] = [0x32, 0x01, 0x06, 0x07]
    /// R-APDU bytes one InDataExchange reply can carry (265-byte frame − TFI − CC − status).
    static let maxExchangeData = 262

    private let field: VirtualField
    private var cardQueue: DispatchQueue { field.cardQueue }
    private let wake: @Sendable () -> Void
    private let log: @Sendable (String) -> Void

    private var registers: [UInt16: UInt8] = [:]
    private(set) var parameters: UInt8 = 0x00
    private(set) var fieldOn = false
    private var maxRetriesPassive: UInt8 = 0xFF
    private var cardGeneration: UInt64 = .max
    private var cardState: CardState = .idle
    private var blockNumber: UInt8 = 0
    private var chainRemainder: [UInt8]? = nil
    private var nextExchangeID: UInt64 = 0
    private let results = ExchangeResults()
    /// How long the I/O thread waits for a card's answer before sending the ACK alone and
    /// answering when the card does. A card that answers within it is answered in the same write
    /// as the ACK, without waking the I/O thread again: per APDU one thread hand-off and one host
    /// wake-up fewer, which a loaded machine makes costly. Nothing arrives meanwhile that the chip
    /// could act on: the host is waiting for this ACK.
    static let quickAnswerWait: TimeInterval = 0.020
    private var targetActivated = false
    private var lastError: UInt8 = 0
    /// Session boundaries for the single-client rule: SAMConfiguration opens, PowerDown closes.
    private let onSession: (Bool) -> Void
    /// Every frame the host sends through InCommunicateThru.
    private let onRawFrame: ([UInt8]) -> Void

    init(field: VirtualField, wake: @escaping @Sendable () -> Void, log: @escaping @Sendable (String) -> Void,
         onSession: @escaping (Bool) -> Void, onRawFrame: @escaping ([UInt8]) -> Void) {
        self.field = field
        self.wake = wake
        self.log = log
        self.onSession = onSession
        self.onRawFrame = onRawFrame
    }

    // MARK: Dispatch

    private typealias Handler = @Sendable (PN532Chip, [UInt8]) -> Outcome

    /// Command code → minimum parameter length and handler. Shorter → the error frame, as the
    /// chip answers a syntax error; an unknown code → the error frame too.
    private static let table: [UInt8: (minLength: Int, handler: Handler)] = [
        PN532Command.diagnose: (1, { $0.diagnose($1) }),
        PN532Command.getFirmwareVersion: (0, { _, _ in .reply(firmwareVersion) }),
        PN532Command.getGeneralStatus: (0, { $0.generalStatus($1) }),
        PN532Command.readRegister: (2, { $0.readRegister($1) }),
        PN532Command.writeRegister: (3, { $0.writeRegister($1) }),
        PN532Command.readGPIO: (0, { _, _ in .reply([0xFF, 0xFF, 0x00]) }),
        PN532Command.writeGPIO: (2, { _, _ in .reply([]) }),
        PN532Command.setSerialBaudRate: (1, { _, _ in .reply([]) }),
        PN532Command.setParameters: (1, { $0.setParameters($1) }),
        PN532Command.samConfiguration: (1, { $0.samConfiguration($1) }),
        PN532Command.powerDown: (1, { $0.powerDown($1) }),
        PN532Command.rfConfiguration: (1, { $0.rfConfiguration($1) }),
        PN532Command.inDataExchange: (1, { $0.inDataExchange($1) }),
        PN532Command.inCommunicateThru: (0, { $0.inCommunicateThru($1) }),
        PN532Command.inDeselect: (1, { $0.inDeselect($1) }),
        PN532Command.inRelease: (1, { $0.inRelease($1) }),
        PN532Command.inSelect: (1, { $0.inSelect($1) }),
        PN532Command.inListPassiveTarget: (2, { $0.inListPassiveTarget($1) }),
        PN532Command.inAutoPoll: (3, { $0.inAutoPoll($1) }),
        PN532Command.inPSL: (3, { _, _ in .reply([PN532Status.ok]) }),
        PN532Command.inATR: (2, { _, _ in .reply([PN532Status.timeout]) }),
        PN532Command.inJumpForDEP: (3, { _, _ in .reply([PN532Status.timeout]) }),
        PN532Command.inJumpForPSL: (3, { _, _ in .reply([PN532Status.timeout]) }),
        PN532Command.tgInitAsTarget: (37, { $0.tgInitAsTarget($1) }),
        PN532Command.tgGetData: (0, { $0.tgGetData($1) }),
        PN532Command.tgGetInitiatorCommand: (0, { $0.tgGetData($1) }),
        PN532Command.tgSetData: (0, { $0.tgSetData($1) }),
        PN532Command.tgResponseToInitiator: (0, { $0.tgSetData($1) }),
        PN532Command.tgSetGeneralBytes: (0, { _, _ in .reply([PN532Status.ok]) }),
        PN532Command.tgSetMetaData: (0, { _, _ in .reply([PN532Status.ok]) }),
        PN532Command.tgGetTargetStatus: (0, { $0.tgGetTargetStatus($1) }),
    ]

    func handle(code: UInt8, data: [UInt8]) -> Outcome {
        guard let entry = Self.table[code] else {
            log("unknown command 0x\([code].hex): error frame")
            return .errorFrame
        }
        guard data.count >= entry.minLength else {
            log("command 0x\([code].hex) too short (\(data.count) < \(entry.minLength) bytes): error frame")
            return .errorFrame
        }
        return entry.handler(self, data)
    }

    /// Re-examines a waiting command after the field changed, a card answered, or time passed.
    func resume(_ pending: Pending, now: Date) -> Outcome? {
        switch pending.kind {
        case .waitForCard(let types):
            if let found = activateCard(autoPollTypes: types) { return .reply(found) }
            if let deadline = pending.deadline, now >= deadline { return .reply([0x00]) }
            return nil
        case .exchange(let id, let generation):
            let result = results.take(id)
            guard field.snapshot.generation == generation, currentCard() != nil, case .active = cardState else {
                cancel(pending)
                return .reply([PN532Status.timeout])  // the card left mid-transaction
            }
            guard let result else { return nil }
            return .reply(exchangeReply(result))
        case .targetInit:
            guard let reader = field.externalReader, !reader.hasLeft else { return nil }
            targetActivated = true
            // Mode 0x08: ISO/IEC 14443-4 PICC at 106 kbps, passive; then the initiator's first
            // command, RATS (E0 80).
            return .reply([0x08, 0xE0, 0x80])
        case .targetGetData:
            guard let reader = field.externalReader, !reader.hasLeft else {
                targetActivated = false
                return .reply([PN532Status.targetReleased])
            }
            guard let command = reader.takeCommand() else { return nil }
            return .reply([PN532Status.ok] + command)
        }
    }

    /// A new command or a host ACK ended the wait: drop its answer, whatever comes later.
    func cancel(_ pending: Pending) {
        if case .exchange(let id, _) = pending.kind {
            results.cancel(id)
        }
    }

    // MARK: Card state

    /// The card in the field and its state; a card that left or came back starts from idle.
    private func currentCard() -> VirtualCard? {
        let (card, generation) = field.snapshot
        if generation != cardGeneration {
            cardGeneration = generation
            cardState = .idle
            chainRemainder = nil
        }
        return card
    }

    private func resetCard() {
        cardState = .idle
        chainRemainder = nil
        if let card = field.snapshot.card {
            cardQueue.async { card.responder.reset() }
        }
    }

    /// Anticollision + select (+ RATS when SetParameters bit 0x10 asks the chip to do it) for
    /// 106 kbps type A. `autoPollTypes` nil: InListPassiveTarget (reply `NbTg Tg data`);
    /// otherwise InAutoPoll (reply `NbTg Type Len Tg data`). Nil when no card answers.
    private func activateCard(autoPollTypes: [UInt8]?) -> [UInt8]? {
        guard let card = currentCard(), cardState != .halted else { return nil }
        fieldOn = true
        var rats = parameters & 0x10 != 0
        var type: UInt8 = 0x00
        if let types = autoPollTypes {
            // 0x20 ISO/IEC 14443-4A, 0x10 MIFARE, 0x00 generic 106 kbps passive.
            guard let t = types.first(where: { $0 == 0x20 || $0 == 0x10 || $0 == 0x00 }) else { return nil }
            type = t
            rats = (t == 0x20) || (t == 0x00 && rats)
        }
        cardState = .active(isoDEP: rats)
        blockNumber = 0
        chainRemainder = nil
        if rats { cardQueue.async { card.responder.reset() } }
        let target = [0x01] + card.targetData(includeATS: rats)
        if autoPollTypes != nil { return [0x01, type, UInt8(target.count)] + target }
        return [0x01] + target
    }

    // MARK: Handlers

    private func diagnose(_ data: [UInt8]) -> Outcome {
        switch data[0] {
        case 0x00: return .reply(data)  // communication test: echo NumTst and the data
        case 0x06:  // attention request / card presence
            if currentCard() != nil, case .active = cardState { return .reply([PN532Status.ok]) }
            return .reply([PN532Status.timeout])
        default: return .reply([0x00])  // ROM, RAM, polling, echo back, antenna: all pass
        }
    }

    private func generalStatus(_ data: [UInt8]) -> Outcome {
        var out: [UInt8] = [lastError, 0x00]
        if currentCard() != nil, case .active = cardState {
            out += [0x01, 0x01, 0x00, 0x00, 0x00]  // one target: Tg 1, 106 kbps both ways, type A
        } else {
            out += [0x00]
        }
        return .reply(out + [0x00])  // SAM status
    }

    private func readRegister(_ data: [UInt8]) -> Outcome {
        guard data.count % 2 == 0 else { return .errorFrame }
        var out: [UInt8] = []
        for i in stride(from: 0, to: data.count, by: 2) {
            let address = UInt16(data[i]) << 8 | UInt16(data[i + 1])
            var value = registers[address] ?? 0x00
            // CIU_Control: RxLastBits (bits 2..0) read 0: every byte is complete.
            if address == 0x633C { value &= ~0x07 }
            out.append(value)
        }
        return .reply(out)
    }

    private func writeRegister(_ data: [UInt8]) -> Outcome {
        guard data.count % 3 == 0 else { return .errorFrame }
        for i in stride(from: 0, to: data.count, by: 3) {
            registers[UInt16(data[i]) << 8 | UInt16(data[i + 1])] = data[i + 2]
        }
        return .reply([])
    }

    private func setParameters(_ data: [UInt8]) -> Outcome {
        parameters = data[0]
        return .reply([])
    }

    private func samConfiguration(_ data: [UInt8]) -> Outcome {
        targetActivated = false
        onSession(true)
        return .reply([])
    }

    private func powerDown(_ data: [UInt8]) -> Outcome {
        fieldOn = false
        resetCard()
        onSession(false)
        return .reply([PN532Status.ok])
    }

    private func rfConfiguration(_ data: [UInt8]) -> Outcome {
        switch data[0] {
        case 0x01:  // RF field: bit 0 on/off, bit 1 auto RFCA
            guard data.count >= 2 else { return .errorFrame }
            let on = data[1] & 0x01 != 0
            if !on { _ = currentCard(); resetCard() }
            fieldOn = on
        case 0x05:  // MxRtyATR, MxRtyPSL, MxRtyPassiveActivation
            guard data.count >= 4 else { return .errorFrame }
            maxRetriesPassive = data[3]
        default:  // timings (02), MaxRtyCOM (04), analog settings (0A–0D): accepted, no effect
            break
        }
        return .reply([])
    }

    private func inListPassiveTarget(_ data: [UInt8]) -> Outcome {
        let maxTargets = data[0], modulation = data[1]
        guard maxTargets >= 1, maxTargets <= 2 else { return .reply([0x00]) }
        // Only 106 kbps type A (BrTy 00) has a card in this field; FeliCa (01, 02),
        // type B (03) and Jewel (04) find nothing.
        guard modulation == 0x00 else { return .reply([0x00]) }
        if data.count > 2 {
            // A UID to select, in cascade form (libnfc's iso14443_cascade_uid puts the cascade
            // tag 0x88 before each incomplete level): 88 u0 u1 u2 u3 u4 u5 u6 for 7 bytes.
            var wanted = Array(data[2...])
            if wanted.count == 8, wanted[0] == 0x88 { wanted.removeFirst() }
            if wanted.count == 12, wanted[0] == 0x88, wanted[4] == 0x88 { wanted = Array(wanted[1..<4] + wanted[5...]) }
            if let card = currentCard(), !card.uid.starts(with: wanted) { return .reply([0x00]) }
        }
        if let found = activateCard(autoPollTypes: nil) { return .reply(found) }
        if maxRetriesPassive == 0xFF {
            return .pending(Pending(kind: .waitForCard(autoPollTypes: nil), deadline: nil))
        }
        return .reply([0x00])
    }

    private func inAutoPoll(_ data: [UInt8]) -> Outcome {
        let pollNr = data[0], period = max(data[1], 1)
        let types = Array(data[2...])
        if let found = activateCard(autoPollTypes: types) { return .reply(found) }
        let deadline: Date? = pollNr == 0xFF ? nil
            : Date().addingTimeInterval(Double(pollNr) * Double(period) * 0.150 * Double(max(types.count, 1)))
        return .pending(Pending(kind: .waitForCard(autoPollTypes: types), deadline: deadline))
    }

    private func inDataExchange(_ data: [UInt8]) -> Outcome {
        guard data[0] == 0x01 else { return .reply([PN532Status.wrongContext]) }
        guard let card = currentCard(), case .active(let isoDEP) = cardState, isoDEP else {
            return .reply([PN532Status.timeout])
        }
        if data.count == 1, let rest = chainRemainder {
            chainRemainder = nil
            return .reply(exchangeReply(rest))
        }
        let apdu = Array(data[1...])
        let generation = field.snapshot.generation
        if card.responder.answersAtOnce {
            // Answered here, on the I/O thread, inside the card queue (so still in order with the
            // resets queued on it): per APDU two thread hand-offs fewer, each a cold wake-up.
            let response = cardQueue.sync { card.responder.respond(to: apdu) }
            guard field.snapshot.generation == generation else { return .reply([PN532Status.timeout]) }  // it left meanwhile
            return .reply(exchangeReply(response))
        }
        nextExchangeID &+= 1
        let id = nextExchangeID
        results.begin(id)
        cardQueue.async { [results, wake] in
            let response = card.responder.respond(to: apdu)
            // The I/O thread waiting for it is woken by the delivery itself.
            if !results.deliver(response, for: id) { wake() }
        }
        let pending = Pending(kind: .exchange(id: id, generation: generation), deadline: nil)
        let quick = results.waitForQuickAnswer(id, until: Date().addingTimeInterval(Self.quickAnswerWait))
        results.stopWaiting()
        // Too slow: the ACK goes now, the answer when the card gives it (`resume`). An answer
        // that came after the wait timed out is found here.
        if quick || results.has(id), let outcome = resume(pending, now: Date()) { return outcome }
        return .pending(pending)
    }

    /// The reply to `code` was written: a card that answers at once may now work ahead
    /// (`APDUResponder.answerSent`), on the I/O thread, which has nothing else to do until the
    /// host's next command.
    func replied(to code: UInt8) {
        guard code == PN532Command.inDataExchange, let card = field.snapshot.card, card.responder.answersAtOnce else { return }
        cardQueue.sync { card.responder.answerSent() }
    }

    /// Status ‖ R-APDU, chaining with MI past one frame as the chip does.
    private func exchangeReply(_ response: [UInt8]) -> [UInt8] {
        blockNumber ^= 1
        if response.count > Self.maxExchangeData {
            chainRemainder = Array(response[Self.maxExchangeData...])
            return [PN532Status.moreInformation] + response[..<Self.maxExchangeData]
        }
        return [PN532Status.ok] + response
    }

    private func inCommunicateThru(_ data: [UInt8]) -> Outcome {
        onRawFrame(data)
        guard currentCard() != nil, case .active(let isoDEP) = cardState, isoDEP, let pcb = data.first else {
            // No card, or a frame no ISO-DEP card answers (ECP polling frames, B'/SR/CT/iClass/
            // barcode probes): silence, which the chip reports as a timeout.
            return .reply([PN532Status.timeout])
        }
        switch pcb {
        case _ where pcb & 0xE6 == 0xA2:
            // R-block (101x x01b): R(ACK) A2/A3 or R(NAK) B2/B3, the presence check → the card
            // answers R(ACK) with its current block number.
            return .reply([PN532Status.ok, 0xA2 | (blockNumber & 0x01)])
        case _ where pcb & 0xF7 == 0xC2:  // S(DESELECT) C2/CA
            cardState = .halted
            return .reply([PN532Status.ok, 0xC2])
        default:
            return .reply([PN532Status.timeout])
        }
    }

    private func inDeselect(_ data: [UInt8]) -> Outcome {
        if currentCard() != nil, case .active = cardState { cardState = .halted }
        return .reply([PN532Status.ok])
    }

    private func inRelease(_ data: [UInt8]) -> Outcome {
        if currentCard() != nil, case .active = cardState { cardState = .halted }
        targetActivated = false
        return .reply([PN532Status.ok])
    }

    private func inSelect(_ data: [UInt8]) -> Outcome {
        guard data[0] == 0x01, currentCard() != nil, cardState != .idle else { return .reply([PN532Status.wrongContext]) }
        if cardState == .halted { return .reply([PN532Status.timeout]) }
        return .reply([PN532Status.ok])
    }

    private func tgInitAsTarget(_ data: [UInt8]) -> Outcome {
        targetActivated = false
        let pending = Pending(kind: .targetInit, deadline: nil)
        return resume(pending, now: Date()) ?? .pending(pending)
    }

    private func tgGetData(_ data: [UInt8]) -> Outcome {
        guard targetActivated else { return .reply([PN532Status.wrongContext]) }
        let pending = Pending(kind: .targetGetData, deadline: nil)
        return resume(pending, now: Date()) ?? .pending(pending)
    }

    private func tgSetData(_ data: [UInt8]) -> Outcome {
        guard targetActivated, let reader = field.externalReader, !reader.hasLeft else {
            targetActivated = false
            return .reply([PN532Status.targetReleased])
        }
        reader.deliver(data)
        return .reply([PN532Status.ok])
    }

    private func tgGetTargetStatus(_ data: [UInt8]) -> Outcome {
        .reply([targetActivated ? 0x01 : 0x00, 0x00])
    }
}
