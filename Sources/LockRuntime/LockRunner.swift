import AccessProtocol
import BLE
import ByteCore
import Codecs
import Foundation
import Synchronization
import Lock
import NFC
import OfflineUnlock
import ReaderSeam
import SocketTransport
import VirtualPN532

/// The running lock: one `LockService` behind its readers — NFC (libnfc or PC/SC), BLE, a
/// credential on TCP — each a `CardReader` under the same `ReaderLoop`, whose one event
/// vocabulary becomes the lock's `LockEvent`s.
public final class LockRunner: Sendable {
    public let service: LockService
    /// Called from the radios' threads and the lock's (its warnings): hence Sendable.
    private let emit: @Sendable (LockEvent) -> Void
    private let nfc: NFCSource?
    private let ble: String?
    private let socket: SocketReader.Configuration?
    private let btsnoop: String?
    /// What `start` started, for `stop`.
    private struct Started {
        var virtualReader: VirtualReader?
        var loops: [any ReaderLoopControl] = []
        var bleLock: BLELock?
    }
    private let launched = Mutex(Started())
    /// What the command sets before `start` (read by the radios' threads after).
    private struct Settings {
        var onOutcome: (@Sendable (TransactionOutcome) -> Void)?
        var bleAddress: BLEAddress?
        var waitForReader = false
        var showRetries = false
        var startGrace: @Sendable (RadioInterface) -> TimeInterval = { _ in 0 }
        var onReaderUnavailable: (@Sendable (RadioInterface, Error) -> Void)?
    }
    private let settings = Mutex(Settings())
    public var virtualReader: VirtualReader? { launched.withLock { $0.virtualReader } }
    /// Called with every finished transaction (after its event), for tests and the demo.
    public var onOutcome: (@Sendable (TransactionOutcome) -> Void)? {
        get { settings.withLock { $0.onOutcome } }
        set { settings.withLock { $0.onOutcome = newValue } }
    }
    /// The BLE address (`lock run --address`), over the configuration's `ble.address` and the
    /// address derived from the reader identity.
    public var bleAddress: BLEAddress? {
        get { settings.withLock { $0.bleAddress } }
        set { settings.withLock { $0.bleAddress = newValue } }
    }
    /// `lock run --wait-for-reader`: a reader that is not there yet is waited for (said once),
    /// not a reason to stop.
    public var waitForReader: Bool {
        get { settings.withLock { $0.waitForReader } }
        set { settings.withLock { $0.waitForReader = newValue } }
    }
    /// With `waitForReader`: print each reopen attempt (a person watching a terminal), not only the first.
    public var showRetries: Bool {
        get { settings.withLock { $0.showRetries } }
        set { settings.withLock { $0.showRetries = newValue } }
    }
    /// How long a radio that never opened may keep failing before it is given up on: 0 for a
    /// reader that is either plugged in or not (USB, hci0); a few seconds for one another process
    /// is still creating (a pty link, a virtual controller's TCP port). `.infinity`: never.
    public var startGrace: @Sendable (RadioInterface) -> TimeInterval {
        get { settings.withLock { $0.startGrace } }
        set { settings.withLock { $0.startGrace = newValue } }
    }
    /// Called (once) when a radio that never opened is given up on: the command stops the lock and
    /// exits with the reason.
    public var onReaderUnavailable: (@Sendable (RadioInterface, Error) -> Void)? {
        get { settings.withLock { $0.onReaderUnavailable } }
        set { settings.withLock { $0.onReaderUnavailable = newValue } }
    }
    /// Which radios opened, since when the others fail, and whether the runner gave up on one.
    private struct Opening {
        var opened: Set<RadioInterface> = []
        var failingSince: [RadioInterface: Date] = [:]
        var gaveUp = false
    }
    private let opening = Mutex(Opening())

    public init(service: LockService, nfc: NFCSource?, ble: String?, socket: SocketReader.Configuration? = nil,
                btsnoop: String? = nil, emit: @escaping @Sendable (LockEvent) -> Void) {
        self.service = service
        self.nfc = nfc
        self.ble = ble
        self.socket = socket
        self.btsnoop = btsnoop
        self.emit = emit
    }

    /// Starts every configured reader; throws when one cannot start at all (bad transport spec,
    /// pty unavailable). A reader or controller that goes away later is reopened, not fatal.
    public func start() throws {
        let config = service.configuration
        let verdict = service.certification
        var started = LockEvent(kind: .started, message: "lock \(config.model) firmware \(config.firmware): \(verdict.summary); bolt \(service.lock.boltName); state in \(config.resolve(config.stateDirectory))")
        let clock: String
        switch service.lock.clock.mode {
        case .running(let offset): clock = offset == 0 ? "wall clock" : "wall clock \(offset > 0 ? "+" : "−") \(Int(abs(offset))) s"
        case .frozen(let at): clock = "frozen at \(RFC3339.format(at))"
        }
        started.lock = .init(model: config.model, firmware: config.firmware, certification: verdict.summary, bolt: service.lock.boltName,
                             clockTrusted: service.lock.engine.state.clock.trusted, clock: clock)
        started.audit = .init(service.lock.audit)
        emit(started)
        if let note = Self.clockNote(service.lock.clock.mode, trusted: service.lock.engine.state.clock.trusted) {
            emit(LockEvent(kind: .warning, message: note))
        }
        if let block = service.lock.snapshotBlock {
            emit(LockEvent(kind: .warning, message: "READ-ONLY, DENYING EVERY TAP: \(EmulatedLock.blockDetail(block))"))
        }
        service.lock.onWarning = { [emit] message in emit(LockEvent(kind: .warning, message: message)) }
        for damage in service.lock.unacknowledgedAuditDamage {
            emit(LockEvent(kind: .warning, message: "AUDIT LOG DAMAGED (entry seq \(damage.seq), \(damage.time)): \(damage.detail ?? "") — inspect it, then run `lockbench audit acknowledge --config FILE --note TEXT`"))
        }
        if !service.walletPolling {
            emit(LockEvent(kind: .warning, radio: .nfc, message: "firmware not certified for wallet credentials (\(verdict.detail)): ECP express polling off"))
        }
        if let nfc {
            var virtualConnstring: String?
            if case .virtual(let link) = nfc {
                let reader = try VirtualReader(card: nil, link: link)
                launched.withLock { $0.virtualReader = reader }
                virtualConnstring = reader.connstring
                emit(LockEvent(kind: .radio, radio: .nfc, message: "virtual PN532 reader at \(reader.connstring)"))
            }
            startNFC(nfc, connstring: virtualConnstring)
        }
        if let ble { try startBLE(ble) }
        if let socket { run(SocketReader(configuration: socket), radio: .socket) }
        if nfc == nil && ble == nil && socket == nil {
            emit(LockEvent(kind: .warning, message: "no radio configured: give --nfc, --ble or --socket (or nfc/ble in the configuration)"))
        }
    }

    /// What to say at start when the lock's clock is not wall time (nil when it is): decisions
    /// are stamped on the lock's clock, radio events on the wall clock, and a `clock advance` or
    /// `clock set` of an earlier run is still in force (it is kept in the lock's state).
    public static func clockNote(_ mode: VirtualClock.Mode, trusted: Bool, wall: Date = Date()) -> String? {
        let trust = trusted ? "trusted" : "untrusted"
        switch mode {
        case .frozen(let at):
            return "the lock's clock is virtual and stands at \(RFC3339.format(at)) (\(trust)): only `clock set` and `clock advance` move it; decisions are stamped on it (lock clock), radio events on the wall clock"
        case .running(let offset) where abs(offset) >= 1:
            let shift = DurationText.format(abs(offset)) + (offset > 0 ? " ahead of" : " behind")
            return "the lock's clock runs \(shift) the wall clock (\(trust); a `clock set` or `clock advance` kept in its state from an earlier run, now \(RFC3339.format(wall.addingTimeInterval(offset)))): decisions are stamped on it (lock clock), radio events on the wall clock"
        case .running:
            return nil
        }
    }

    /// Stops the radios, then secures the bolt (after any transaction in progress) and writes
    /// the state, so a stop inside the relock window does not leave the door open.
    public func stop() {
        let running = launched.withLock { $0 }
        for loop in running.loops { loop.stop() }
        running.bleLock?.stop()
        running.virtualReader?.stop()
        var note = ""
        do {
            if try service.secureForStop() { note = " (it was unsecured: secured on stop)" }
        } catch {
            emit(LockEvent(kind: .warning, message: "cannot record the bolt secured on stop: \(error)"))
        }
        service.flush()
        emit(LockEvent(kind: .stopped, message: "lock stopped; bolt \(service.lock.boltName)" + note))
    }

    /// Runs `reader` under the reader loop: every card is one transaction of the lock.
    func run<Reader: CardReader>(_ reader: Reader, radio: RadioInterface,
                                 configuration: ReaderLoop<Reader, TransactionOutcome>.Configuration = .init()) {
        let loop = ReaderLoop<Reader, TransactionOutcome>(reader: reader, configuration: configuration, granted: { $0.granted }) {
            [service] card in service.transact(over: card.link, interface: radio)
        }
        loop.onEvent = { [weak self] event in self?.readerEvent(event, radio: radio) }
        launched.withLock { $0.loops.append(loop) }
        loop.start()
    }

    /// The one translation from the readers' events to the lock's.
    private func readerEvent(_ event: ReaderEvent<TransactionOutcome>, radio: RadioInterface) {
        switch event {
        case .transactionCompleted(_, let outcome, _):
            var event = LockEvent(outcome: outcome)
            event.audit = .init(service.lock.audit)
            event.bolt = service.lock.boltName
            emit(event)
            onOutcome?(outcome)
        case .stopped:
            break
        case .readerLost(let failure, let attempt, let retryIn) where !opening.withLock({ $0.opened.contains(radio) }):
            readerNotThere(radio, failure: failure, attempt: attempt, retryIn: retryIn)
        default:
            if case .readerOpened = event { opening.withLock { _ = $0.opened.insert(radio) } }
            var e = LockEvent(kind: event.isProblem ? .warning : .radio, radio: radio, message: event.description)
            e.radioEvent = switch event {
            case .started: .loopStarted
            case .readerOpened: .readerOpened
            case .cardArrived: .cardArrived
            case .cardIgnored: .cardIgnored
            case .cardRemoved: .cardRemoved
            case .transactionFailed: .transactionFailed
            case .readerLost: .readerLost
            case .notice, .transactionCompleted, .stopped: .notice
            }
            emit(e)
        }
    }

    /// A radio that has never opened failed to open: give up (after its grace), or say once that
    /// the lock waits for it and, on a terminal, show each retry.
    private func readerNotThere(_ radio: RadioInterface, failure: Error, attempt: Int, retryIn: TimeInterval) {
        let reason = (failure as? any CodedError)?.reason ?? "\(failure)"
        let giveUp = opening.withLock { o -> Bool in
            let since = o.failingSince[radio] ?? Date()
            o.failingSince[radio] = since
            let giveUp = !waitForReader && !o.gaveUp && Date().timeIntervalSince(since) >= startGrace(radio)
            if giveUp { o.gaveUp = true }
            return giveUp
        }
        if giveUp { onReaderUnavailable?(radio, failure); return }
        guard waitForReader else { return }   // within the grace: quiet
        if attempt == 1 {
            emit(LockEvent(kind: .warning, radio: radio, message: "no \(radio.rawValue) reader yet: \(reason); waiting for it (--wait-for-reader)"))
        } else if showRetries {
            var e = LockEvent(kind: .radio, radio: radio, message: "still waiting for the reader: attempt \(attempt) failed; next in \(String(format: "%.1f", retryIn)) s")
            e.radioEvent = .readerLost
            emit(e)
        }
    }

    // MARK: BLE

    private func startBLE(_ spec: String) throws {
        var config = BLELock.Configuration(transport: try TransportSpec(parsing: spec))
        config.btsnoop = btsnoop
        let ids = try service.configuration.readerIdentity()
        let settings = service.radios.ble ?? RadioSettings.BLE()
        config.advertisement.groupID = ids.groupID
        config.advertisement.subID = ids.subID
        config.address = try bleAddress ?? settings.address.map { text throws(BLEError) in try BLEAddress(staticRandom: text) }
            ?? BLEIdentity.address(groupID: ids.groupID, subID: ids.subID)
        config.idleTimeout = settings.idleTimeout
        config.transactionTimeout = settings.transactionTimeout
        let key = settings.groupResolvingKey.flatMap(Hex.decode) ?? BLEIdentity.groupResolvingKey(groupID: ids.groupID)
        config.tagCipher = { block in BLEIdentity.tag(key: key, block: block) }
        config.tagWindow = settings.tagRotation
        let clock = service.lock.clock
        config.now = { clock.now() }
        let lock = try BLELock(configuration: config)
        launched.withLock { $0.bleLock = lock }
        var advertising = LockEvent(kind: .radio, radio: .ble, message: "BLE on \(spec): advertising FFF2" + (btsnoop.map { "; HCI capture in \($0)" } ?? ""))
        advertising.radioEvent = .advertising
        emit(advertising)
        // Several phones may be connected at once; the lock serializes their decisions.
        run(lock, radio: .ble, configuration: .init(maxConcurrent: 4))
    }
}
