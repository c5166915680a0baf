import ByteCore
import Foundation
import Synchronization

/// The lock's reader loop, the same for every radio: wait for a card → run one transaction over
/// it → wait until it leaves → re-arm. A card pulled mid-transaction is reported and the loop
/// goes on; a reader that fails or cannot be opened is reopened with exponential backoff, every
/// attempt reported. Events arrive on the loop's thread; SIGINT/SIGTERM handling belongs to the
/// caller, which calls `stop()`.
///
///     let loop = ReaderLoop(reader: LibNFCReader(connstring: "acr122_usb")) { card in
///         service.transact(over: card.link, interface: .nfc)        // → the lock's outcome
///     }
///     loop.onEvent = { print($0) }
///     loop.start() … loop.stop()
public final class ReaderLoop<Reader: CardReader, Outcome: Sendable>: Sendable {
    public struct Configuration: Sendable {
        /// Longest single wait inside the reader (for a card, for its removal): bounds `stop()`.
        public var waitSlice: TimeInterval
        /// Pause after a wait that found no card.
        public var pollInterval: TimeInterval
        /// Pause between removal checks while a card stays.
        public var presenceInterval: TimeInterval
        /// Reopen backoff: first delay, growth factor, ceiling.
        public var reopenDelay: TimeInterval
        public var reopenFactor: Double
        public var reopenMaxDelay: TimeInterval
        /// Cards served at once: 1 for a reader with one field (NFC, PC/SC); more for a radio that
        /// connects several phones (BLE), each then served on a thread of its own.
        public var maxConcurrent: Int

        public init(waitSlice: TimeInterval = 0.25, pollInterval: TimeInterval = 0.01, presenceInterval: TimeInterval = 0.05,
                    reopenDelay: TimeInterval = 0.1, reopenFactor: Double = 2, reopenMaxDelay: TimeInterval = 5,
                    maxConcurrent: Int = 1) {
            self.waitSlice = waitSlice
            self.pollInterval = pollInterval
            self.presenceInterval = presenceInterval
            self.reopenDelay = reopenDelay
            self.reopenFactor = reopenFactor
            self.reopenMaxDelay = reopenMaxDelay
            self.maxConcurrent = max(1, maxConcurrent)
        }
    }

    public typealias Event = ReaderEvent<Outcome>

    public let reader: Reader
    public let configuration: Configuration
    /// Called on the loop's thread (and a card's worker thread) with every event.
    public var onEvent: (@Sendable (Event) -> Void)? {
        get { eventHandler.withLock { $0 } }
        set { eventHandler.withLock { $0 = newValue } }
    }
    private let eventHandler = Mutex<(@Sendable (Event) -> Void)?>(nil)
    private let transaction: @Sendable (Reader.Card) throws -> Outcome
    private let granted: @Sendable (Outcome) -> Bool?
    private struct State {
        var running = false
        var stopping = false
        /// Set by the loop's thread as it ends.
        var finished = false
        /// Cards being served on worker threads.
        var inFlight = 0
        /// The first reader failure a worker hit, for the loop's thread to act on.
        var workerFailure: Error?
    }
    private let state = Monitor(State())

    /// `granted` tells the reader how a transaction ended (BLE sends it to the phone); by default
    /// the reader is told nothing about the decision.
    public init(reader: Reader, configuration: Configuration = .init(),
                granted: @escaping @Sendable (Outcome) -> Bool? = { _ in nil },
                transaction: @escaping @Sendable (Reader.Card) throws -> Outcome) {
        self.reader = reader
        self.configuration = configuration
        self.granted = granted
        self.transaction = transaction
    }

    /// Runs the loop on a thread of its own.
    public func start() {
        let starting = state.withLock { s -> Bool in
            guard !s.running else { return false }
            s = State(running: true)
            return true
        }
        guard starting else { return }
        reader.onNotice = { [weak self] text, problem in self?.emit(.notice(text, isProblem: problem)) }
        let thread = Thread { [self] in
            self.run()
            self.state.withLock { $0.finished = true }
        }
        thread.name = "reader-loop"
        thread.start()
    }

    /// Ends the loop: the current transaction finishes (or fails), the reader is closed, `.stopped`
    /// is the last event. Blocks until then; safe from any thread, idempotent.
    public func stop() {
        let stopping = state.withLock { s -> Bool in
            guard s.running, !s.stopping else { return false }
            s.stopping = true
            return true
        }
        guard stopping else { return }
        // The loop's waits are bounded by `waitSlice`: it sees `stopping` within one.
        state.wait(until: nil, for: \.finished) { s, _ in s.running = false }
    }

    /// Blocks until `stop()` completes (for a CLI whose signal handler calls `stop()`).
    public func waitUntilStopped() {
        state.wait(until: nil, for: \.finished) { _, _ in }
    }

    private var isStopping: Bool { state.withLockQuietly { $0.stopping } }

    /// Sleeps up to `seconds`, waking early on `stop()`; false when stopping.
    private func pause(_ seconds: TimeInterval) -> Bool {
        state.wait(until: Date().addingTimeInterval(seconds), for: \.stopping) { s, _ in !s.stopping }
    }

    private func emit(_ event: Event) { eventHandler.withLock { $0 }?(event) }

    private func run() {
        let c = configuration
        emit(.started(reader: reader.spec, note: reader.startNote))
        var delay = c.reopenDelay
        var attempt = 0
        while !isStopping {
            let failure: Error
            do {
                let name = try reader.open()
                emit(.readerOpened(reader: reader.spec, name: name))
                delay = c.reopenDelay
                attempt = 0
                defer { reader.close() }
                try serve()
                break  // stopped
            } catch {
                failure = error
            }
            if isStopping { break }
            attempt += 1
            emit(.readerLost(failure, attempt: attempt, retryIn: delay))
            if !pause(delay) { break }
            delay = min(delay * c.reopenFactor, c.reopenMaxDelay)
        }
        emit(.stopped)
    }

    /// Serves cards until stopped (returns) or the reader fails (throws).
    private func serve() throws {
        let c = configuration
        defer { waitForWorkers() }
        while !isStopping {
            if let failure = takeWorkerFailure() { throw failure }
            guard let card = try reader.waitForCard(timeout: c.waitSlice) else {
                if !pause(c.pollInterval) { return }
                continue
            }
            emit(.cardArrived(card))
            if c.maxConcurrent == 1 {
                try handle(card)
                continue
            }
            state.withLockQuietly { $0.inFlight += 1 }
            // The card goes to exactly one worker and this thread does not touch it again.
            nonisolated(unsafe) let handed = card
            let worker = Thread { [self] in
                var failure: Error?
                do { try self.handle(handed) } catch { failure = error }
                state.withLock { s in
                    s.workerFailure = s.workerFailure ?? failure
                    s.inFlight -= 1
                }
            }
            worker.name = "reader-loop-card"
            worker.start()
            // At the limit: wait (bounded by stop) for a card to be done.
            state.wait(until: nil, for: { $0.inFlight < c.maxConcurrent || $0.stopping }) { _, _ in }
        }
    }

    /// One card: its transaction, then waiting until it leaves. Throws when the reader failed.
    private func handle(_ card: Reader.Card) throws {
        let c = configuration
        if let why = card.ignoredReason {
            emit(.cardIgnored(card, reason: why))
        } else {
            let started = Date()
            do {
                let outcome = try transaction(card)
                reader.finish(card, granted: granted(outcome))
                emit(.transactionCompleted(card, outcome, duration: Date().timeIntervalSince(started)))
            } catch {
                reader.finish(card, granted: nil)
                emit(.transactionFailed(card, error, duration: Date().timeIntervalSince(started)))
                if reader.isReaderFailure(error) { throw error }
            }
        }
        // The card stays until the holder takes it away: wait, then re-arm.
        while !(try reader.waitForRemoval(card, timeout: c.waitSlice)) {
            if !pause(c.presenceInterval) { return }
        }
        emit(.cardRemoved(card))
    }

    private func takeWorkerFailure() -> Error? {
        state.withLockQuietly { s in
            defer { s.workerFailure = nil }
            return s.workerFailure
        }
    }

    /// Cards still being served finish (their waits are bounded) before the reader closes.
    private func waitForWorkers() {
        state.wait(until: nil, for: { $0.inFlight == 0 }) { _, _ in }
    }
}

/// Start and stop of any loop, whatever its reader and outcome (for a runtime holding several).
public protocol ReaderLoopControl: AnyObject, Sendable {
    func start()
    func stop()
}

extension ReaderLoop: ReaderLoopControl {}
