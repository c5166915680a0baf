import AccessProtocol
import BLE
import ByteCore
import Codecs
import Foundation
import Lock
import NFC
import VirtualPN532

/// The running lock: one `LockService` behind its radios (NFC through libnfc, BLE through the
/// project's host), each radio's events turned into `LockEvent`s.
public final class LockRunner {
    /// Where NFC comes from: any libnfc connstring, or a virtual PN532 this process serves on a pty.
    public enum NFCSource: Equatable {
        case connstring(String)
        case virtual(link: String?)

        /// `virtual`, `virtual:/tmp/lockbench-reader`, or a libnfc connstring.
        public init(_ text: String) {
            if text == "virtual" { self = .virtual(link: nil) }
            else if text.hasPrefix("virtual:") { self = .virtual(link: String(text.dropFirst("virtual:".count))) }
            else { self = .connstring(text) }
        }
    }

    public let service: LockService
    public private(set) var virtualReader: VirtualReader?
    private var nfcLoop: NFCLockLoop<TransactionOutcome>?
    private var bleLock: BLELock?
    private let emit: (LockEvent) -> Void
    private let nfc: NFCSource?
    private let ble: String?
    private let btsnoop: String?
    /// Called with every finished transaction (after its event), for tests and the demo.
    public var onOutcome: ((TransactionOutcome) -> Void)?
    /// The BLE address (`lock run --address`), over the configuration's `ble.address` and the
    /// address derived from the reader identity.
    public var bleAddress: BLEAddress?

    public init(service: LockService, nfc: NFCSource?, ble: String?, btsnoop: String? = nil,
                emit: @escaping (LockEvent) -> Void) {
        self.service = service
        self.nfc = nfc
        self.ble = ble
        self.btsnoop = btsnoop
        self.emit = emit
    }

    /// Starts every configured radio; throws when one cannot start at all (bad transport spec,
    /// pty unavailable). A reader or controller that goes away later is reopened, not fatal.
    public func start() throws {
        let config = service.configuration
        let verdict = service.certification
        emit(LockEvent(kind: .started, message: "lock \(config.model) firmware \(config.firmware): \(verdict.summary); bolt \(service.lock.boltName); state in \(config.resolve(config.stateDirectory))"))
        for damage in service.lock.unacknowledgedAuditDamage {
            emit(LockEvent(kind: .warning, message: "AUDIT LOG DAMAGED (entry seq \(damage.seq), \(damage.time)): \(damage.detail ?? "") — inspect it, then run `lockbench audit acknowledge --config FILE --note TEXT`"))
        }
        if !service.walletPolling {
            emit(LockEvent(kind: .warning, radio: .nfc, message: "firmware not certified for wallet credentials (\(verdict.detail)): ECP express polling off"))
        }
        if let nfc { try startNFC(nfc) }
        if let ble { try startBLE(ble) }
        if nfc == nil && ble == nil {
            emit(LockEvent(kind: .warning, message: "no radio configured: give --nfc or --ble (or nfc/ble in the configuration)"))
        }
    }

    /// Stops the radios, then secures the bolt (after any transaction in progress) and writes
    /// the state, so a stop inside the relock window does not leave the door open.
    public func stop() {
        nfcLoop?.stop()
        bleLock?.stop()
        virtualReader?.stop()
        var note = ""
        do {
            if try service.secureForStop() { note = " (it was unsecured: secured on stop)" }
        } catch {
            emit(LockEvent(kind: .warning, message: "cannot record the bolt secured on stop: \(error)"))
        }
        service.flush()
        emit(LockEvent(kind: .stopped, message: "lock stopped; bolt \(service.lock.boltName)" + note))
    }

    // MARK: NFC

    private func startNFC(_ source: NFCSource) throws {
        let connstring: String
        switch source {
        case .connstring(let c): connstring = c
        case .virtual(let link):
            let reader = try VirtualReader(card: nil, link: link)
            virtualReader = reader
            connstring = reader.connstring
            emit(LockEvent(kind: .radio, radio: .nfc, message: "virtual PN532 reader at \(connstring)"))
        }
        let loop = NFCLockLoop<TransactionOutcome>(configuration: .init(connstring: connstring, ecpPolling: service.walletPolling)) {
            [service] link, _ in service.transact(over: link, interface: .nfc)
        }
        loop.onEvent = { [weak self] event in self?.nfcEvent(event) }
        nfcLoop = loop
        loop.start()
    }

    private func nfcEvent(_ event: NFCLockLoop<TransactionOutcome>.Event) {
        switch event {
        case .transactionCompleted(_, let outcome, _):
            emit(LockEvent(outcome: outcome))
            onOutcome?(outcome)
        case .readerLost, .transactionFailed, .cardIgnored:
            emit(LockEvent(kind: .warning, radio: .nfc, message: event.description))
        case .stopped:
            break
        default:
            emit(LockEvent(kind: .radio, radio: .nfc, message: event.description))
        }
    }

    // MARK: BLE

    private func startBLE(_ spec: String) throws {
        var config = BLELock.Configuration(transport: try TransportSpec(parsing: spec))
        config.btsnoop = btsnoop
        let ids = try service.configuration.readerIdentity()
        let settings = service.configuration.ble ?? LockConfiguration.BLE()
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
        let lock = try BLELock(configuration: config) { [weak self] session in
            guard let self else { return }
            let outcome = self.service.transact(over: session, interface: .ble)
            session.completionPayload = outcome.granted ? [0x01] : [0x00]
            self.emit(LockEvent(outcome: outcome))
            self.onOutcome?(outcome)
        }
        lock.onEvent = { [weak self] event in
            self?.emit(LockEvent(kind: event.isProblem ? .warning : .radio, radio: .ble, message: event.text))
        }
        bleLock = lock
        lock.start()
        emit(LockEvent(kind: .radio, radio: .ble, message: "BLE on \(spec): advertising FFF2" + (btsnoop.map { "; HCI capture in \($0)" } ?? "")))
    }
}

extension BLELockEvent {
    var isProblem: Bool { if case .controllerLost = self { return true } else { return false } }
    var text: String {
        switch self {
        case .ready(let a): return "controller ready, advertising as \(a)"
        case .connected(let a): return "phone connected: \(a)"
        case .transactionFinished(let a, let n): return "transaction with \(a) finished after \(n) APDUs"
        case .disconnected(let a, let r): return "phone disconnected: \(a) (reason 0x\(String(r, radix: 16)))"
        case .dropped(let a, let why): return "dropped idle link \(a): \(why)"
        case .controllerLost: return "controller lost; reconnecting"
        }
    }
}
