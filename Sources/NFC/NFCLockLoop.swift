import ByteCore
import Foundation

/// The lock's NFC loop, engine-agnostic: poll for an ISO-DEP card → run one transaction over it
/// (a closure given the card as an `APDUTransceiver`) → wait until the card leaves → re-arm.
///
/// It survives a card pulled mid-transaction (the transaction's error is reported, the loop goes
/// on) and a reader that disappears (it reopens the connstring with exponential backoff,
/// reporting every attempt). With `ecpPolling` on, every poll is preceded by the ECP access
/// frame through InCommunicateThru, so iPhones present a Wallet access pass in express mode; the
/// `.started` event says whether it is on. SIGINT/SIGTERM handling belongs to the caller, which
/// calls `stop()`.
///
///     let loop = NFCLockLoop(configuration: .init(connstring: reader.connstring, ecpPolling: true)) { link, target in
///         try readerSession.run(over: link)          // → the lock's Outcome
///     }
///     loop.onEvent = { print($0) }
///     loop.start() … loop.stop()
public final class NFCLockLoop<Outcome> {
    public struct Configuration {
        public var connstring: String
        /// Send `ecpFrame` before each poll.
        public var ecpPolling: Bool
        public var ecpFrame: ECPFrame
        /// Pause between polls that found no card.
        public var pollInterval: TimeInterval
        /// Pause between presence checks while a card stays in the field.
        public var presenceInterval: TimeInterval
        /// Per-APDU timeout (ms) of the transceiver handed to the transaction.
        public var apduTimeout: Int32
        /// Reopen backoff: first delay, growth factor, ceiling.
        public var reopenDelay: TimeInterval
        public var reopenFactor: Double
        public var reopenMaxDelay: TimeInterval

        public init(connstring: String, ecpPolling: Bool = false, ecpFrame: ECPFrame = .accessDefault,
                    pollInterval: TimeInterval = 0.01, presenceInterval: TimeInterval = 0.05,
                    apduTimeout: Int32 = 1000, reopenDelay: TimeInterval = 0.1, reopenFactor: Double = 2,
                    reopenMaxDelay: TimeInterval = 5) {
            self.connstring = connstring
            self.ecpPolling = ecpPolling
            self.ecpFrame = ecpFrame
            self.pollInterval = pollInterval
            self.presenceInterval = presenceInterval
            self.apduTimeout = apduTimeout
            self.reopenDelay = reopenDelay
            self.reopenFactor = reopenFactor
            self.reopenMaxDelay = reopenMaxDelay
        }
    }

    /// What happened, in order, for the lock to log and act on.
    public enum Event: CustomStringConvertible {
        /// The loop started; `ecpFrame` is nil when ECP polling is off.
        case started(connstring: String, ecpFrame: ECPFrame?)
        case readerOpened(connstring: String, name: String)
        case cardArrived(TargetInfo)
        /// A card that speaks no ISO-DEP (no APDUs): ignored until it leaves.
        case cardIgnored(TargetInfo, reason: String)
        case transactionCompleted(TargetInfo, Outcome, duration: TimeInterval)
        /// The transaction threw (typically `NFCError.targetLost`: the card was pulled mid-transaction).
        case transactionFailed(TargetInfo, Error, duration: TimeInterval)
        case cardRemoved(TargetInfo)
        /// The reader failed (unplugged, pty closed) or could not be opened; a reopen follows after `retryIn`.
        case readerLost(NFCError, attempt: Int, retryIn: TimeInterval)
        case stopped

        public var description: String {
            switch self {
            case .started(let c, let ecp):
                return "NFC loop on \(c); " + (ecp.map { "ECP polling on: sending the access frame \($0.bytes.hex) before each poll" } ?? "ECP polling off")
            case .readerOpened(let c, let name): return "reader \(name) opened (\(c))"
            case .cardArrived(let t): return "card arrived: \(t)"
            case .cardIgnored(let t, let why): return "card ignored (\(why)): \(t)"
            case .transactionCompleted(let t, let o, let d): return "transaction with \(t.uid.hex) completed in \(Int(d * 1000)) ms: \(o)"
            case .transactionFailed(let t, let e, let d): return "transaction with \(t.uid.hex) failed after \(Int(d * 1000)) ms: \(e)"
            case .cardRemoved(let t): return "card removed: \(t.uid.hex)"
            case .readerLost(let e, let n, let wait): return "reader lost (\(e.code.rawValue): \(e.reason)); reopen attempt \(n) in \(String(format: "%.1f", wait)) s"
            case .stopped: return "NFC loop stopped"
            }
        }
    }

    public let configuration: Configuration
    public var onEvent: ((Event) -> Void)?
    private let transaction: (APDUTransceiver, TargetInfo) throws -> Outcome
    private let condition = NSCondition()
    private var stopping = false
    private var running = false
    private var device: NFCDevice?
    private let done = DispatchSemaphore(value: 0)

    public init(configuration: Configuration, transaction: @escaping (APDUTransceiver, TargetInfo) throws -> Outcome) {
        self.configuration = configuration
        self.transaction = transaction
    }

    /// Runs the loop on a thread of its own.
    public func start() {
        condition.lock()
        guard !running else { condition.unlock(); return }
        running = true
        stopping = false
        condition.unlock()
        let thread = Thread { [self] in
            self.run()
            self.done.signal()
        }
        thread.name = "nfc-lock-loop"
        thread.start()
    }

    /// Ends the loop: the current transaction finishes (or fails), the reader is closed, `.stopped`
    /// is the last event. Blocks until then; safe from any thread, idempotent.
    public func stop() {
        condition.lock()
        guard running, !stopping else { condition.unlock(); return }
        stopping = true
        condition.broadcast()
        condition.unlock()
        done.wait()
        condition.lock(); running = false; condition.unlock()
    }

    /// Blocks until `stop()` completes (for a CLI whose signal handler calls `stop()`).
    public func waitUntilStopped() {
        done.wait()
        done.signal()
    }

    private var isStopping: Bool { condition.lock(); defer { condition.unlock() }; return stopping }

    /// Sleeps up to `seconds`, waking early on `stop()`; false when stopping.
    private func pause(_ seconds: TimeInterval) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(seconds)
        while !stopping && condition.wait(until: deadline) {}
        return !stopping
    }

    private func emit(_ event: Event) { onEvent?(event) }

    private func run() {
        let c = configuration
        emit(.started(connstring: c.connstring, ecpFrame: c.ecpPolling ? c.ecpFrame : nil))
        var delay = c.reopenDelay
        var attempt = 0
        while !isStopping {
            var failure: NFCError
            do {
                let context = try NFCContext()
                let device = try context.open(c.connstring)
                defer { device.close() }
                try device.initiatorInit()
                emit(.readerOpened(connstring: c.connstring, name: device.name))
                delay = c.reopenDelay
                attempt = 0
                try withExtendedLifetime(context) { try serve(device) }
                break  // stopped
            } catch let error as NFCError {
                failure = error
            } catch {
                failure = NFCError(.io, "\(error)")
            }
            if isStopping { break }
            attempt += 1
            emit(.readerLost(failure, attempt: attempt, retryIn: delay))
            if !pause(delay) { break }
            delay = min(delay * c.reopenFactor, c.reopenMaxDelay)
        }
        emit(.stopped)
    }

    /// Polls and serves cards until stopped (returns) or the reader fails (throws).
    private func serve(_ device: NFCDevice) throws(NFCError) {
        let c = configuration
        while !isStopping {
            if c.ecpPolling {
                _ = try device.transceiveRaw(c.ecpFrame.bytes)
            }
            guard let target = try device.selectISO14443A() else {
                if !pause(c.pollInterval) { return }
                continue
            }
            emit(.cardArrived(target))
            if target.isISODEP {
                let started = Date()
                do {
                    let outcome = try transaction(device.link(target, timeout: c.apduTimeout), target)
                    emit(.transactionCompleted(target, outcome, duration: Date().timeIntervalSince(started)))
                } catch {
                    emit(.transactionFailed(target, error, duration: Date().timeIntervalSince(started)))
                    if let e = error as? NFCError, e.code == .io || e.code == .closed { throw e }
                }
            } else {
                emit(.cardIgnored(target, reason: "SAK \([target.sak].hex): not ISO/IEC 14443-4, no APDUs"))
            }
            // The card stays in the field until the holder takes it away: wait, then re-arm.
            while try device.isTargetPresent() {
                if !pause(c.presenceInterval) { return }
            }
            emit(.cardRemoved(target))
        }
    }
}
