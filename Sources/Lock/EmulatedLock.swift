import AccessProtocol
import ByteCore
import Crypto
import Foundation
import OfflineUnlock

/// An emulated lock: the engine, the bolt, the clock, persisted state and the audit log. Every
/// transaction reaches it through `apply` (the reader's `resolver` for a presentation).
///
/// For each decision, before `apply` returns (i.e. before the protocol acknowledges the
/// transaction): the engine decides, the bolt moves, the audit entry is appended and fsynced,
/// and the state file is replaced atomically.
public final class EmulatedLock: @unchecked Sendable {
    public let configuration: LockConfiguration
    public let clock: VirtualClock
    public let engine: OfflineUnlockEngine
    public let audit: AuditLog
    public let readerSigningKey: P256.Signing.PrivateKey
    private let store: StateStore
    /// Held for the lock's lifetime: one process owns a state directory at a time.
    private let ownership: StateDirectoryLock
    private var persisted: PersistedLockState
    private var bolt: LockStateMachine
    private let mutex = NSLock()
    /// Called after every decision with the audit entry (for live output).
    public var onAudit: ((AuditEntry) -> Void)?

    /// Opens the lock described by `configuration`, restoring its state directory if present.
    public init(configuration: LockConfiguration) throws(LockError) {
        self.configuration = configuration
        let dir = configuration.stateDirectoryPath
        do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
            throw LockError(.io, "cannot create state directory \(dir): \(error)")
        }
        ownership = try StateDirectoryLock(directory: dir)
        store = StateStore(directory: dir)
        readerSigningKey = try configuration.readerSigningKey()
        let core = DecisionCore(reader: try configuration.readerIdentity(), policy: configuration.policy,
                                trust: try configuration.trustStore())
        let state: PersistedLockState
        if let saved = try store.load() {
            state = saved
        } else {
            let mode = try configuration.initialClock()
            let start = VirtualClock(mode).now()
            state = PersistedLockState(engine: EngineState(clock: TrustedClock(trustedAt: start)), clock: mode)
        }
        persisted = state
        clock = VirtualClock(state.clock)
        bolt = LockStateMachine(relockTime: configuration.policy.relockTime, state: state.bolt)
        audit = try AuditLog(directory: dir, expectedHead: state.auditHead)
        let clock = self.clock
        engine = OfflineUnlockEngine(core: core, state: state.engine, now: { clock.now() })
    }

    // MARK: The reader's questions

    /// Does the lock need this credential's documents? A read of the engine's state.
    public func wantsStepUp(credentialPublicKey: [UInt8]) -> Bool {
        engine.wantsStepUp(credentialPublicKey: credentialPublicKey)
    }

    /// The lock's decision on a presentation, as it acted on it (`apply(.presentation)`).
    public func decide(_ presentation: Presentation) -> TransactionDecision {
        apply(.presentation(presentation)).decision
    }

    /// The one path from a transaction to the lock's action and its record: the engine decides
    /// (unless the bolt is jammed: the lock refuses with its own reason), the bolt moves, the
    /// audit entry is appended and fsynced and the state saved — all before this returns, i.e.
    /// before the credential hears anything. A lock that cannot record does not open.
    public func apply(_ input: LockInput) -> LockOutcome {
        mutex.lock(); defer { mutex.unlock() }
        let now = clock.now()
        bolt.handle(.tick, at: now)
        switch input {
        case .refused(let refusal, let tid, let interface):
            return commit(.deny(refusal), credential: nil, transaction: tid.bytes, interface: interface, at: now)
        case .presentation(let p):
            if case .jammed = bolt.state(at: now) {
                let refusal = Refusal(.lock(LockReason.jammed), detail: "the bolt is jammed: the lock cannot open until the jam is cleared")
                return commit(.deny(refusal), credential: credentialID(for: p), transaction: p.transactionID,
                              interface: p.interface, at: now)
            }
            let decision = engine.decide(p)
            if decision.isGrant { bolt.handle(.grant, at: now) }
            return commit(TransactionDecision(decision), credential: credentialID(for: p), transaction: p.transactionID,
                          interface: p.interface, at: now)
        }
    }

    /// Appends the audit entry (fsync) and saves state; returns the outcome to acknowledge.
    /// A lock that cannot record does not open: the bolt is secured again and the answer becomes
    /// the lock's own refusal `storage_failure` (detail "storage failure: …").
    private func commit(_ decision: TransactionDecision, credential: String?, transaction: [UInt8],
                        interface: RadioInterface, at now: Date) -> LockOutcome {
        do {
            let entry = try audit.append(time: now, credential: credential, transport: interface, decision: decision,
                                         transaction: transaction)
            try persist()
            onAudit?(entry)
            return LockOutcome(decision: decision, bolt: bolt.state(at: now), readerStatus: status(decision, at: now), audit: entry)
        } catch {
            bolt.handle(.secureNow, at: now)
            let refusal = Refusal(.lock(LockReason.storageFailure), detail: "storage failure: cannot record the transaction: \(error)")
            return LockOutcome(decision: .deny(refusal), bolt: bolt.state(at: now),
                               readerStatus: LockReason.storageFailure.readerStatus(bolt: bolt.readerStatus(at: now)), audit: nil)
        }
    }

    /// The EXCHANGE status: a grant reports the bolt's real state after acting; a denial the
    /// status the refusing layer maps its reason to.
    private func status(_ decision: TransactionDecision, at now: Date) -> UInt16 {
        switch decision.reason {
        case nil: return bolt.readerStatus(at: now)
        case .engine(let reason)?: return reason.readerStatus
        case .protocol(let reason)?: return reason.readerStatus
        case .lock(let reason)?: return (reason as? LockReason)?.readerStatus(bolt: bolt.readerStatus(at: now)) ?? ReaderStatus.hardware
        case .transport?: return bolt.readerStatus(at: now)     // nothing reaches the credential
        }
    }

    private func credentialID(for p: Presentation) -> String? {
        engine.cachedDocumentID(credentialPublicKey: p.credentialPublicKey)
    }

    private func persist() throws(LockError) {
        persisted.engine = engine.state
        persisted.bolt = bolt.state
        persisted.clock = clock.mode
        persisted.auditHead = audit.head
        try store.save(persisted)
    }

    private func mutate(_ body: () -> Void) throws(LockError) {
        mutex.lock(); defer { mutex.unlock() }
        body()
        try persist()
    }

    // MARK: Lock controls (CLI, tests)

    /// The bolt as of now.
    public var boltState: LockStateMachine.State { mutex.lock(); defer { mutex.unlock() }; return bolt.state(at: clock.now()) }
    public var boltName: String { mutex.lock(); defer { mutex.unlock() }; return bolt.name(at: clock.now()) }
    /// EXCHANGE reader status for the bolt now.
    public var readerStatus: UInt16 { mutex.lock(); defer { mutex.unlock() }; return bolt.readerStatus(at: clock.now()) }

    /// Relocks when the relock time has passed.
    public func tick() throws(LockError) { try mutate { bolt.handle(.tick, at: clock.now()) } }
    public func jam() throws(LockError) { try mutate { bolt.handle(.jam, at: clock.now()) } }
    public func clearJam() throws(LockError) { try mutate { bolt.handle(.clearJam, at: clock.now()) } }

    /// Sets the clock. `trusted`: an operator set it (the clock becomes trusted and the high-water
    /// mark follows); otherwise only the time moves (a drifting or tampered RTC).
    public func setClock(_ time: Date, trusted: Bool) throws(LockError) {
        try mutate {
            clock.set(time)
            if trusted { var s = engine.state; s.clock.operatorSet(time); engine.state = s }
        }
    }

    public func advanceClock(_ seconds: TimeInterval) throws(LockError) {
        try mutate { clock.advance(seconds) }
    }

    /// Simulates a power loss: the clock is no longer trusted (the high-water mark stays).
    public func powerLoss() throws(LockError) {
        try mutate { var s = engine.state; s.clock.powerLoss(); engine.state = s }
    }

    /// The FAST cache blob the protocol layer keeps with the lock's state.
    public var fastCache: Data? {
        mutex.lock(); defer { mutex.unlock() }
        return persisted.fastCache
    }

    public func setFastCache(_ blob: Data?) throws(LockError) {
        try mutate { persisted.fastCache = blob }
    }

    /// Keeps the reader's memory in the state without writing it: it is written with the next
    /// decision (one fsynced state write per tap instead of two) or by `flush()`. A crash before
    /// then costs at most the newest FAST key: that credential's next tap runs standard.
    public func stageFastCache(_ blob: Data?) {
        mutex.lock(); defer { mutex.unlock() }
        persisted.fastCache = blob
    }

    /// Writes the state now (on a clean stop).
    public func flush() throws(LockError) { try mutate {} }

    /// Secures an unsecured bolt at once and writes the state (a clean stop must not leave the
    /// door open until a relock that would never run). Returns whether the bolt was unsecured.
    @discardableResult
    public func secureNow() throws(LockError) -> Bool {
        mutex.lock(); defer { mutex.unlock() }
        let now = clock.now()
        guard case .unsecured = bolt.state(at: now) else {
            bolt.handle(.tick, at: now)
            try persist()
            return false
        }
        bolt.handle(.secureNow, at: now)
        try persist()
        return true
    }
}
