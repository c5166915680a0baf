import AccessProtocol
import ByteCore
import Codecs
import Crypto
import Foundation
import Synchronization
import OfflineUnlock

/// An emulated lock: the engine, the bolt, the clock, persisted state and the audit log. Every
/// transaction reaches it through `apply` (the reader's `resolver` for a presentation).
///
/// For each decision, before `apply` returns (i.e. before the protocol acknowledges the
/// transaction): the engine decides, the bolt moves, and ONE journal record — the audit entry,
/// carrying the state change the decision caused (`StateDelta`) — is appended with one write and
/// one fsync. If it cannot be written whole the decision is undone and becomes a deny
/// `storage_failure` (see `commit`). Every `snapshotInterval` records (and on a clean stop) the
/// whole state is written to `state.json` in the background, compacting the journal: recovery is
/// that snapshot plus the deltas of the entries after the head it records.
public final class EmulatedLock: Sendable {
    public let configuration: LockConfiguration
    public let clock: VirtualClock
    public let engine: OfflineUnlockEngine
    public let audit: AuditLog
    public let readerSigningKey: P256.Signing.PrivateKey
    /// Held for the lock's lifetime: one process owns a state directory at a time.
    private let ownership: StateDirectoryLock
    /// What the reader learnt after the snapshot, from the journal: `LockService` applies it to
    /// the reader memory of the snapshot (`fastCache`) when it opens.
    public let recoveredReaderLearning: [ReaderLearning]
    /// Everything a decision or a control changes, one at a time: every path in takes this mutex.
    private let guarded: Mutex<Guarded>

    /// The reader's memory as the lock keeps it: the blob, or — staged after each tap — a closure
    /// that encodes it, called only when a snapshot is written (in the background): encoding the
    /// reader's FAST cache and replay memory after every tap cost more than the decision.
    public enum StagedReaderMemory: Sendable {
        case blob(Data?)
        case deferred(@Sendable () -> Data?)

        var data: Data? {
            switch self {
            case .blob(let d): return d
            case .deferred(let encode): return encode()
            }
        }
    }

    /// Journal records between snapshots: bounds what recovery replays.
    public var snapshotInterval: Int {
        get { guarded.withLock { $0.snapshotInterval } }
        set { guarded.withLock { $0.snapshotInterval = newValue } }
    }
    /// Called after every decision with the audit entry (for live output), with the lock's mutex
    /// held: it must not call back into the lock.
    public var onAudit: (@Sendable (AuditEntry) -> Void)? {
        get { guarded.withLock { $0.onAudit } }
        set { guarded.withLock { $0.onAudit = newValue } }
    }
    /// Called with what an operator must hear now that is not a decision (a snapshot that cannot
    /// be written): `lock run` prints it as a warning, in text and `--json`.
    public var onWarning: (@Sendable (String) -> Void)? {
        get { guarded.withLock { $0.onWarning } }
        set { guarded.withLock { $0.onWarning = newValue } }
    }

    /// Why the lock grants nothing: a snapshot its promises need (at start; after a revocation
    /// list or clock-trust change, or a high-water-mark move past the leeway) could not be
    /// written. Cleared when one is written.
    public var snapshotBlock: LockError? { guarded.withLock { $0.snapshotBlock } }

    /// Failures of background snapshots, for the next decision to report (set on the snapshot
    /// queue, so under its own lock: the queue must never wait for the lock's mutex).
    private final class BackgroundFailures: Sendable {
        private let failures = Mutex<[(error: LockError, required: Bool)]>([])
        func add(_ error: LockError, required: Bool) { failures.withLock { $0.append((error, required)) } }
        func take() -> [(error: LockError, required: Bool)] { failures.withLock { all in defer { all = [] }; return all } }
    }

    /// What the lock's mutex guards — the bolt, what the journal's next record starts from, the
    /// snapshot schedule — with the (Sendable) parts of the lock its paths use.
    private struct Guarded {
        let configuration: LockConfiguration
        let clock: VirtualClock
        let engine: OfflineUnlockEngine
        let audit: AuditLog
        let store: StateStore
        /// The rollback anchor's file and the audit key that signs it (`anchorFile`), if configured.
        let anchor: (path: String, key: [UInt8])?
        /// Writes snapshots in order, off the decision's path.
        let snapshots: DispatchQueue
        let backgroundFailures: BackgroundFailures
        var bolt: LockStateMachine
        /// The high-water mark the last snapshot holds: one that moved further than the leeway past it
        /// is snapshotted at once, so no cut of journal records moves it back by more (issue 20 §4).
        var snapshotHighWaterMark: Date?
        /// The bolt and clock mode as of the last record: the next record's delta starts there. (The
        /// engine tracks its own changes: no copy of its state is kept here, so a decision mutates the
        /// engine's cache in place instead of copying it.)
        var recorded: (bolt: LockStateMachine.State, clock: VirtualClock.Mode)
        /// The reader's memory (an opaque blob, or how to encode it), for the next snapshot.
        var readerMemory = StagedReaderMemory.blob(nil)
        /// Journal records since the last snapshot; at `snapshotInterval` a snapshot is written.
        var recordsSinceSnapshot = 0
        /// What the reader learnt since the last record, for the next record (bounded).
        var pendingReaderLearning: [ReaderLearning] = []
        var snapshotInterval = 64
        var onAudit: (@Sendable (AuditEntry) -> Void)?
        var onWarning: (@Sendable (String) -> Void)?
        var snapshotBlock: LockError?
        /// A required snapshot was queued and may not have landed yet: the next decision waits for it.
        var requiredSnapshotQueued = false

        /// `EmulatedLock.apply`, with the mutex held.
        mutating func apply(_ input: LockInput) -> LockOutcome {
            let before = bolt
            let now = clock.now()
            bolt.handle(.tick, at: now)
            checkSnapshots(at: now)
            switch input {
            case .refused(let refusal, let tid, let interface):
                return commit(.deny(refusal), credential: nil, transaction: tid.bytes,
                              interface: interface, at: now, restoring: before)
            case .presentation(let p):
                if let block = snapshotBlock {
                    let refusal = Refusal(.lock(LockReason.storageFailure), detail: EmulatedLock.blockDetail(block))
                    return commit(.deny(refusal), credential: credentialID(for: p), transaction: p.transactionID, interface: p.interface, at: now,
                                  restoring: before)
                }
                if case .jammed = bolt.state(at: now) {
                    let refusal = Refusal(.lock(LockReason.jammed), detail: "the bolt is jammed: the lock cannot open until the jam is cleared")
                    return commit(.deny(refusal), credential: credentialID(for: p), transaction: p.transactionID, interface: p.interface, at: now,
                                  restoring: before)
                }
                let decision = engine.decide(p)
                // An RKE transaction's grant authorises the request that follows (`remote`): the
                // bolt moves on that, not here.
                if decision.isGrant && !p.remoteAction { bolt.handle(.grant, at: now) }
                return commit(TransactionDecision(decision), credential: credentialID(for: p), transaction: p.transactionID,
                              interface: p.interface, at: now, revocationChanges: engine.takeRevocationChanges(), restoring: before)
            }
        }

        /// `EmulatedLock.remote`, with the mutex held.
        mutating func remote(_ action: RemoteAction, for p: Presentation) -> UInt16 {
            let before = bolt
            let now = clock.now()
            bolt.handle(.tick, at: now)
            checkSnapshots(at: now)
            let detail: String
            if case .jammed = bolt.state(at: now) {
                detail = "not moved: the bolt is jammed"
            } else if let block = snapshotBlock {
                detail = "not moved: \(EmulatedLock.blockDetail(block))"
            } else {
                switch (action, bolt.state(at: now)) {
                case (.secure, .unsecured): bolt.handle(.secureNow, at: now)
                case (.secure, _): break
                case (.unsecure, _): bolt.handle(.grant, at: now)
                }
                detail = bolt.name(at: now)
            }
            var entry = AuditEntry(seq: 0, time: now, remoteAction: action, credential: credentialID(for: p), transport: p.interface,
                                   transaction: p.transactionID, detail: detail)
            let changes = engine.takeChanges()
            let after = (bolt: bolt.state, clock: clock.mode)
            var delta = StateDelta(changes: changes, bolt: (recorded.bolt, after.bolt), clock: (recorded.clock, after.clock))
            if !pendingReaderLearning.isEmpty { delta.reader = pendingReaderLearning }
            if !delta.isEmpty { entry.state = delta }
            let entries: [AuditEntry]
            do { entries = try audit.append([entry]) } catch {
                engine.undo(changes)
                bolt = before
                report(error, required: false, at: now)
                return bolt.readerStatus(at: now)
            }
            recorded = after
            pendingReaderLearning = []
            recordsSinceSnapshot += 1
            entries.forEach { onAudit?($0) }
            return bolt.readerStatus(at: now)
        }

        /// `EmulatedLock.recordRemoteRefusal`, with the mutex held.
        mutating func recordRemoteRefusal(_ why: String, credential: String?, transaction: TransactionID, interface: RadioInterface) {
            var entry = AuditEntry(seq: 0, time: clock.now(), event: AuditEntry.remoteActionRefusedEvent, detail: why)
            entry.credential = credential
            entry.transport = interface.rawValue
            entry.transaction = transaction.hex
            if let appended = try? audit.append([entry]) { appended.forEach { onAudit?($0) } }
        }

        /// What a lock control may change in memory, to put back when it cannot be saved.
        struct Snapshot {
            var engine: EngineState; var bolt: LockStateMachine
            var recorded: (bolt: LockStateMachine.State, clock: VirtualClock.Mode); var readerMemory: StagedReaderMemory
        }
        var snapshot: Snapshot { Snapshot(engine: engine.state, bolt: bolt, recorded: recorded, readerMemory: readerMemory) }

        mutating func restore(_ s: Snapshot) {
            engine.state = s.engine
            bolt = s.bolt
            recorded = s.recorded
            readerMemory = s.readerMemory
        }

        /// Makes the outcome durable — its audit entries (one write, one fsync) and the state it leads
        /// to — and only then returns it to be acknowledged. When either cannot be written, nothing of
        /// it stays: the audit entries are rolled back (the log never shows an outcome that did not
        /// happen), the engine's changes are undone and the bolt goes back to `before`, and the answer
        /// is the lock's own refusal `storage_failure` (`storageFailure`).
        mutating func commit(_ decision: TransactionDecision, credential: String?, transaction: [UInt8],
                            interface: RadioInterface, at now: Date, revocationChanges: [RevocationChange] = [],
                            restoring before: LockStateMachine) -> LockOutcome {
            var drafts = revocationChanges.map { AuditEntry(seq: 0, time: now, revocationChange: $0, transport: interface, transaction: transaction) }
                + [AuditEntry(seq: 0, time: now, credential: credential, transport: interface, decision: decision, transaction: transaction)]
            // The state change rides in the decision's own entry: one record, one write, one fsync.
            // It is what the engine says its decisions touched: its cost does not grow with the cache.
            let changes = engine.takeChanges()
            let after = (bolt: bolt.state, clock: clock.mode)
            var delta = StateDelta(changes: changes, bolt: (recorded.bolt, after.bolt), clock: (recorded.clock, after.clock))
            if !pendingReaderLearning.isEmpty { delta.reader = pendingReaderLearning }
            if !delta.isEmpty { drafts[drafts.count - 1].state = delta }
            let entries: [AuditEntry]
            do { entries = try audit.append(drafts) } catch {
                return storageFailure(error, credential: credential, transaction: transaction, interface: interface, at: now,
                                      undoing: changes, restoring: before)
            }
            recorded = after
            pendingReaderLearning = []
            recordsSinceSnapshot += 1
            let hwm = engine.trustedClock.highWaterMark
            let required = delta.revocationLists != nil || delta.revocationListsRemoved != nil
                || delta.trustedClock.map({ $0.trusted != changes.clock?.before?.trusted }) == true
                || hwm.map { mark in snapshotHighWaterMark.map { mark > $0.addingTimeInterval(configuration.policy.clockLeeway) } ?? true } == true
            if snapshotBlock != nil {
                // Blocked: the snapshot is retried before each decision (`checkSnapshots`), not queued
                // again after each refusal.
            } else if changes.untracked {
                // The engine's state was edited from outside since the last snapshot (never by the
                // lock's own paths, which snapshot at once): a record cannot say what changed.
                do { try persist() } catch { report(error, required: false, at: now) }
            } else if required || recordsSinceSnapshot >= snapshotInterval {
                // A revocation list, clock-trust or high-water-mark change is snapshotted at once
                // (after the answer): whole records cut from the journal's end are not detectable,
                // the snapshot's head is. Such a snapshot is required: until it is written the lock
                // grants nothing.
                compactInBackground(required: required)
            }
            entries.forEach { onAudit?($0) }
            return LockOutcome(decision: decision, bolt: bolt.state(at: now), readerStatus: status(decision, at: now),
                               audit: entries.last)
        }

        /// The decision could not be recorded: undo it, refuse with the lock's own reason
        /// `storage_failure` (the detail starts with "storage failure:"), and record that refusal if the disk still takes it — it changes no
        /// state, so its entry is kept even if the state file cannot follow (the log may run ahead of
        /// the head the state records, never behind it).
        mutating func storageFailure(_ error: LockError, credential: String?, transaction: [UInt8], interface: RadioInterface,
                                    at now: Date, undoing changes: EngineChanges, restoring before: LockStateMachine) -> LockOutcome {
            engine.undo(changes)
            bolt = before
            let detail = "storage failure: the lock could not record the transaction durably, so it did not act on it: \(error.reason)"
            let decision = TransactionDecision.deny(Refusal(.lock(LockReason.storageFailure), detail: detail))
            let entry = try? audit.append([AuditEntry(seq: 0, time: now, credential: credential, transport: interface, decision: decision,
                                                      transaction: transaction)]).first
            if let entry { onAudit?(entry) }
            return LockOutcome(decision: decision, bolt: bolt.state(at: now),
                               readerStatus: LockReason.storageFailure.readerStatus(bolt: bolt.readerStatus(at: now)), audit: entry)
        }

        /// The EXCHANGE status: a grant reports the bolt's real state after acting; a denial the
        /// status the refusing layer maps its reason to — except a credential that is not this
        /// lock's (`DenyReason.reportsLockState`), told the bolt's state as well.
        func status(_ decision: TransactionDecision, at now: Date) -> UInt16 {
            switch decision.reason {
            case nil: return bolt.readerStatus(at: now)
            case .engine(let reason)?: return reason.reportsLockState ? bolt.readerStatus(at: now) : reason.readerStatus
            case .protocol(let reason)?: return reason.readerStatus
            case .lock(let reason)?: return (reason as? LockReason)?.readerStatus(bolt: bolt.readerStatus(at: now)) ?? ReaderStatus.hardware
            case .transport?: return bolt.readerStatus(at: now)     // nothing reaches the credential
            }
        }

        func credentialID(for p: Presentation) -> String? {
            engine.cachedDocumentID(credentialPublicKey: p.credentialPublicKey)
        }

        /// The state as it is in memory now (engine, bolt, clock, at the journal's head), and the
        /// reader memory to encode into it (`withReaderMemory`).
        func current() -> (state: PersistedLockState, readerMemory: StagedReaderMemory) {
            var s = PersistedLockState(engine: engine.state, clock: clock.mode)
            s.bolt = bolt.state
            s.auditHead = audit.head
            return (s, readerMemory)
        }

        /// Writes a snapshot now and waits for it (lock controls, a clean stop): the state whole,
        /// atomically (temp, fsync, rename, directory fsync), with the journal head it covers.
        mutating func persist() throws(LockError) {
            let state = EmulatedLock.withReaderMemory(current()), store = store, anchor = anchor
            let failure: LockError? = snapshots.sync {
                do throws(LockError) { try EmulatedLock.write(state, store: store, anchor: anchor); return nil } catch { return error }
            }
            if let failure { throw failure }
            snapshotHighWaterMark = state.engine.clock.highWaterMark
            recorded = (state.bolt, state.clock)
            _ = engine.takeChanges()            // the snapshot holds them
            recordsSinceSnapshot = 0
            pendingReaderLearning = []
        }

        /// Compacts the journal off the decision's path: the snapshot is written after the answer,
        /// in order with any other. A crash mid-write leaves the previous snapshot (atomic rename),
        /// and the journal still holds every record after it; a failure is retried after the next
        /// `snapshotInterval` records.
        mutating func compactInBackground(required: Bool) {
            let now = current(), store = store, failures = backgroundFailures, anchor = anchor
            recordsSinceSnapshot = 0
            pendingReaderLearning = []          // the snapshot's reader memory holds it
            snapshotHighWaterMark = now.state.engine.clock.highWaterMark   // (a failure of a required one blocks grants)
            if required { requiredSnapshotQueued = true }
            snapshots.async {
                do throws(LockError) { try EmulatedLock.write(EmulatedLock.withReaderMemory(now), store: store, anchor: anchor) } catch { failures.add(error, required: required) }
            }
        }

        /// Before a decision (with the lock's mutex held): waits for a required snapshot still queued, reports
        /// background snapshots that failed, and — while the lock is blocked — tries to write one
        /// now; the lock grants again once that succeeds.
        mutating func checkSnapshots(at now: Date) {
            if requiredSnapshotQueued {
                snapshots.sync {}
                requiredSnapshotQueued = false
            }
            for failure in backgroundFailures.take() {
                if failure.required { snapshotBlock = failure.error }
                report(failure.error, required: failure.required, at: now)
            }
            guard let block = snapshotBlock else { return }
            do { try persist() } catch { return }
            snapshotBlock = nil
            let detail = "the state snapshot is written again (it had failed: \(block.reason)); the lock grants again"
            _ = try? audit.append([AuditEntry(seq: 0, time: now, event: AuditEntry.snapshotWrittenEvent, detail: detail)])
            onWarning?(detail)
        }

        /// A snapshot that could not be written, said on the console (`onWarning`) and in the audit
        /// log (when the log still takes an entry): never swallowed.
        mutating func report(_ error: LockError, required: Bool, at now: Date) {
            let detail = required
                ? EmulatedLock.blockDetail(error)
                : "the lock's state snapshot could not be written (\(error.reason)); the journal keeps every record since the last one, so nothing acknowledged is lost, but recovery replays more of it and cut records are not detected past the last snapshot. It is retried after \(snapshotInterval) records"
            let entry = try? audit.append([AuditEntry(seq: 0, time: now, event: AuditEntry.snapshotFailedEvent, detail: detail)]).first
            if let entry { onAudit?(entry) }
            onWarning?("SNAPSHOT FAILED: " + detail)
        }

        /// Waits until every queued snapshot is written or has failed.
        func waitForSnapshots() { snapshots.sync {} }
    }

    /// Opens the lock described by `configuration`, restoring its state directory if present.
    /// `io` is the seam for the lock's writes (tests inject a failing disk).
    public init(configuration: LockConfiguration, io: FileIO = .system) throws(LockError) {
        self.configuration = configuration
        do throws(DurationText.Refusal) { try configuration.policy.validate() } catch { throw LockError(.invalidConfiguration, error.message) }
        let dir = configuration.stateDirectoryPath
        do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
            throw LockError(.io, "cannot create state directory \(dir): \(error)")
        }
        ownership = try StateDirectoryLock(directory: dir)
        let files = FileManager.default
        let hasState = files.fileExists(atPath: dir + "/" + StateStore.fileName), hasLog = files.fileExists(atPath: dir + "/" + AuditLog.fileName)
        let keyExisted = files.fileExists(atPath: configuration.auditKeyPath)
        let history = AuditLog.hasHistory(directory: dir) || hasState
        let key = try AuditLog.openKey(configuration.auditKeyPath, history: history)
        // The key is made at a lock's first start, together with its first snapshot and its log:
        // a key without them means they were deleted. Starting afresh would drop the revocation
        // lists, clock trust and replay memory — every phone its issuer signed for would be let in
        // (issue 20 §3). The key may live on another disk (`auditKeyFile`): deleting the state
        // directory alone does not reset the lock.
        if keyExisted, !hasState || !hasLog {
            let gone = [hasState ? nil : StateStore.fileName, hasLog ? nil : AuditLog.fileName].compactMap { $0 }.joined(separator: " and ")
            throw LockError(.corruptState, "\(gone) missing in \(dir) but the audit key \(configuration.auditKeyPath) shows this lock has a history: its revocation lists, clock trust and replay memory\(hasLog ? "" : " and its audit trail") are gone, and starting afresh would let in every phone its issuer signed for. Restore the files, or start the lock afresh (audited) with `lockbench lock reset --config FILE --reason TEXT`")
        }
        let store = StateStore(directory: dir, auditKey: key, io: io)
        let anchor: (path: String, key: [UInt8])? = configuration.anchorPath.map { ($0, key) }
        let anchored = try anchor.flatMap { a throws(LockError) in try JournalAnchor.load(a.path, auditKey: a.key) }
        readerSigningKey = try configuration.readerSigningKey()
        var core = DecisionCore(reader: try configuration.readerIdentity(), policy: configuration.policy,
                                trust: try configuration.trustStore())
        core.ignoresValidityIteration = configuration.faults.contains(.ignoreValidityIteration)
        core.readsAppendAsOverwrite = configuration.faults.contains(.revocationAppendAsOverwrite)
        var state: PersistedLockState
        var fresh = false
        if let saved = try store.load() {
            state = saved
        } else if AuditLog.hasHistory(directory: dir) {
            // Losing state.json must not be a silent reset: revocations, clock trust, replay
            // memory and the recorded audit head would all be gone.
            throw LockError(.corruptState, "\(store.path) is missing but \(dir)/\(AuditLog.fileName) has entries: this lock's revocation lists, clock trust and replay memory are gone. To start it afresh (audited), run `lockbench lock reset --config FILE`")
        } else {
            let mode = try configuration.initialClock()
            let start = VirtualClock(mode).now()
            state = PersistedLockState(engine: EngineState(clock: TrustedClock(trustedAt: start)), clock: mode)
            fresh = true
        }
        if let anchored, let path = anchor?.path {
            // Checked before the log is opened for writing: a rolled-back directory is not touched.
            let found = AuditLog.scan(try DurableFile.read(dir + "/" + AuditLog.fileName) ?? [], key: key)
            let inChain = anchored.head.seq == 0 || found.macs[anchored.head.seq] == anchored.head.mac
            if let why = anchored.rollback(logHead: found.head, anchorInChain: inChain, path: path) {
                throw LockError(.corruptState, why + ". Put back the newest copy of the state directory; if starting from this one is intended, start afresh (audited) with `lockbench lock reset --config FILE --reason TEXT`")
            }
        }
        let audit = try AuditLog(directory: dir, key: key, expectedHead: state.auditHead, io: io, now: VirtualClock(state.clock).now())
        self.audit = audit
        // Recovery: the snapshot, then every journal record after the head it records.
        for entry in audit.journalTail { entry.state?.apply(to: &state, replayWindow: configuration.policy.replayWindow) }
        state.auditHead = audit.head
        recoveredReaderLearning = audit.journalTail.flatMap { $0.state?.reader ?? [] }
        let clock = VirtualClock(state.clock)
        self.clock = clock
        let engine = OfflineUnlockEngine(core: core, state: state.engine, now: { clock.now() })
        self.engine = engine
        _ = engine.takeChanges()    // the state as recovered is where the next record starts
        var g = Guarded(configuration: configuration, clock: clock, engine: engine, audit: audit, store: store, anchor: anchor,
                        snapshots: DispatchQueue(label: "lockbench.lock.snapshot"), backgroundFailures: BackgroundFailures(),
                        bolt: LockStateMachine(relockTime: configuration.policy.relockTime, state: state.bolt),
                        recorded: (state.bolt, state.clock), readerMemory: .blob(state.fastCache),
                        recordsSinceSnapshot: audit.journalTail.count)
        if fresh {
            // A lock's first snapshot exists before its first record: a journal never lacks its base.
            try g.persist()
        } else {
            // Every start snapshots what it replayed (the recorded head is current again) and proves
            // the state directory takes a snapshot. When it does not (a full disk, a directory where
            // the temporary file goes), the lock still starts and answers — read-only, denying every
            // tap with the reason — instead of not starting at all; it grants again once a snapshot
            // is written (issue 20 §2, §5).
            do { try g.persist() } catch {
                g.snapshotBlock = error
                g.report(error, required: true, at: clock.now())
            }
        }
        guarded = Mutex(g)
    }

    /// Dropping the lock is a clean stop: the state is written whole (best effort; `flush` and
    /// `secureNow` are the stops that report a failure).
    deinit { guarded.withLock { g in _ = try? g.persist() } }

    // MARK: The reader's questions

    /// Does the lock need this credential's documents (given what it says it carries)? A read of
    /// the engine's state.
    public func wantsStepUp(credentialPublicKey: [UInt8], timestamps: SignedTimestamps = .none) -> Bool {
        engine.wantsStepUp(credentialPublicKey: credentialPublicKey, timestamps: timestamps)
    }

    /// The lock's decision on a presentation, as it acted on it (`apply(.presentation)`).
    public func decide(_ presentation: Presentation) -> TransactionDecision {
        apply(.presentation(presentation)).decision
    }

    /// The one path from a transaction to the lock's action and its record: the engine decides
    /// (unless the bolt is jammed: the lock refuses with its own reason), the bolt moves, the
    /// audit entries (revocation list changes the decision made, then the decision) are appended
    /// and fsynced and the state saved — all before this returns, i.e. before the credential hears
    /// anything. What cannot be recorded is not acted on (`commit`).
    public func apply(_ input: LockInput) -> LockOutcome { guarded.withLock { $0.apply(input) } }

    /// A remote keyless entry request after a granted transaction (BLE `02 06` … `02 04`): secure
    /// throws an unsecured bolt at once, unsecure opens it as a grant does (relock timer); a
    /// jammed bolt does not move, nor does any bolt while a snapshot is owed (`snapshotBlock`:
    /// the lock grants nothing then). Recorded as one journal record (`AuditEntry` `rke`, with
    /// the bolt's change) before it returns, i.e. before the phone hears; what cannot be recorded
    /// is undone. Returns the bolt's reader status afterwards (`0100`, `0101`, `0102`).
    public func remote(_ action: RemoteAction, for p: Presentation) -> UInt16 { guarded.withLock { $0.remote(action, for: p) } }

    /// An RKE request the reader refused (malformed, not sealed under this transaction's keys, or
    /// missing): recorded as an `rke_refused` event naming the byte and the rule; nothing moved.
    public func recordRemoteRefusal(_ why: String, credential: String?, transaction: TransactionID, interface: RadioInterface) {
        guarded.withLock { $0.recordRemoteRefusal(why, credential: credential, transaction: transaction, interface: interface) }
    }

    private static func withReaderMemory(_ c: (state: PersistedLockState, readerMemory: StagedReaderMemory)) -> PersistedLockState {
        var s = c.state
        s.fastCache = c.readerMemory.data
        return s
    }

    /// A snapshot: the state, then the anchor with the head the state now records (a crash
    /// between them leaves the anchor behind the state, which a start accepts).
    private static func write(_ state: PersistedLockState, store: StateStore, anchor: (path: String, key: [UInt8])?) throws(LockError) {
        try store.save(state)
        if let anchor { try JournalAnchor(head: state.auditHead).save(to: anchor.path, auditKey: anchor.key, io: store.io) }
    }

    /// Waits until every queued snapshot is written or has failed (tests).
    func waitForSnapshots() { guarded.withLock { $0.waitForSnapshots() } }

    public static func blockDetail(_ error: LockError) -> String {
        "storage failure: the lock's state snapshot cannot be written, and after a revocation list, clock-trust or high-water-mark change (or at start) it must be, so the lock grants nothing until it is: \(error.reason). Free space or repair the state directory (and the anchor's media, with anchorFile); the lock retries at every tap"
    }

    /// Applies `body` and saves; when the save fails, the change is undone in memory too.
    private func mutate(_ body: (inout Guarded) -> Void) throws(LockError) {
        try guarded.withLock { (g: inout Guarded) throws(LockError) in
            let before = g.snapshot
            let clockBefore = g.clock.mode
            body(&g)
            do throws(LockError) { try g.persist() } catch {
                g.restore(before)
                g.clock.reset(to: clockBefore)
                throw error
            }
        }
    }

    // MARK: Lock controls (CLI, tests)

    /// The bolt as of now.
    public var boltState: LockStateMachine.State { guarded.withLock { $0.bolt.state(at: clock.now()) } }
    public var boltName: String { guarded.withLock { $0.bolt.name(at: clock.now()) } }
    /// EXCHANGE reader status for the bolt now.
    public var readerStatus: UInt16 { guarded.withLock { $0.bolt.readerStatus(at: clock.now()) } }

    /// Relocks when the relock time has passed. Nothing is written: a relock follows from the
    /// recorded relock time, so recovery reaches the same bolt; the next record carries it.
    public func tick() throws(LockError) { guarded.withLock { _ = $0.bolt.handle(.tick, at: clock.now()) } }
    public func jam() throws(LockError) { try mutate { $0.bolt.handle(.jam, at: clock.now()) } }
    public func clearJam() throws(LockError) { try mutate { $0.bolt.handle(.clearJam, at: clock.now()) } }

    /// Sets the clock. `trusted`: an operator set it (the clock becomes trusted and the high-water
    /// mark follows); otherwise only the time moves (a drifting or tampered RTC).
    public func setClock(_ time: Date, trusted: Bool) throws(LockError) {
        try Self.checkRepresentable(time)
        try mutate { _ in
            clock.set(time)
            if trusted { var s = engine.state; s.clock.operatorSet(time); engine.state = s }
        }
    }

    /// Moves the time by `seconds`; refused (`invalid_input`, nothing saved) when the result would
    /// not be a representable date (before year 0000, after 9999, not finite).
    public func advanceClock(_ seconds: TimeInterval) throws(LockError) {
        try Self.checkRepresentable(clock.now().addingTimeInterval(seconds))
        try mutate { _ in clock.advance(seconds) }
    }

    static func checkRepresentable(_ time: Date) throws(LockError) {
        guard RFC3339.isRepresentable(time) else {
            throw LockError(.invalidInput, "the clock cannot be moved to \(time.timeIntervalSince1970) s since 1970: times must lie between years 0000 and 9999")
        }
    }

    /// Simulates a power loss: the clock is no longer trusted (the high-water mark stays).
    public func powerLoss() throws(LockError) {
        try mutate { _ in var s = engine.state; s.clock.powerLoss(); engine.state = s }
    }

    /// The FAST cache blob the protocol layer keeps with the lock's state.
    public var fastCache: Data? { guarded.withLock { $0.readerMemory.data } }

    public func setFastCache(_ blob: Data?) throws(LockError) {
        try mutate { $0.readerMemory = .blob(blob) }
    }

    /// Keeps the reader's memory in the state without writing it: it is written with the next
    /// decision (one fsynced state write per tap instead of two) or by `flush()`. A crash before
    /// then costs at most the newest FAST key: that credential's next tap runs standard.
    public func stageFastCache(_ blob: Data?) { guarded.withLock { $0.readerMemory = .blob(blob) } }

    /// Keeps what the reader learnt in a transaction for the journal: it rides in the next record
    /// (a few hundred bytes, not the reader's whole memory), and `memory` — the whole reader
    /// memory, for the next snapshot — is kept without writing. A crash before the next record
    /// costs at most this transaction's FAST key (that credential's next tap runs standard) and
    /// device ephemeral key.
    public func stageReaderLearning(_ learning: ReaderLearning, memory: StagedReaderMemory) {
        guarded.withLock { g in
            g.readerMemory = memory
            guard !learning.isEmpty else { return }
            g.pendingReaderLearning.append(learning)
            // Bounded: without records for this long, the oldest wait for the next snapshot instead.
            if g.pendingReaderLearning.count > 64 { g.pendingReaderLearning.removeFirst() }
        }
    }

    /// Damage found in the audit log (this time or before) that no operator has acknowledged.
    public var unacknowledgedAuditDamage: [AuditEntry] { audit.unacknowledgedDamage }

    /// An operator saw the audit damage: recorded in the log (`audit_acknowledged`, with `note`),
    /// after which it is no longer reported.
    @discardableResult
    public func acknowledgeAuditDamage(note: String) throws(LockError) -> AuditEntry {
        try guarded.withLock { (g: inout Guarded) throws(LockError) -> AuditEntry in
            let damaged = audit.unacknowledgedDamage.map { "seq \($0.seq)" }.joined(separator: ", ")
            let entry = try audit.append([AuditEntry(seq: 0, time: clock.now(), event: AuditEntry.auditAcknowledgedEvent,
                                                     detail: "damage acknowledged (\(damaged.isEmpty ? "none outstanding" : damaged)): \(note)")])[0]
            try g.persist()
            return entry
        }
    }

    /// Starts a lock afresh — trusted clock from the configuration, no revocation lists, no cached
    /// documents, no replay memory — keeping its audit log and writing a `lock_reset` entry to it.
    /// The one way past a missing `state.json` when the log has a history; the old state file, if
    /// any, is kept as `state.json.reset-<time>`.
    @discardableResult
    public static func reset(configuration: LockConfiguration, reason: String) throws(LockError) -> AuditEntry {
        let dir = configuration.stateDirectoryPath
        do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
            throw LockError(.io, "cannot create state directory \(dir): \(error)")
        }
        let ownership = try StateDirectoryLock(directory: dir)
        defer { withExtendedLifetime(ownership) {} }
        let stamp = Int(Date().timeIntervalSince1970)
        let statePath = dir + "/" + StateStore.fileName
        let hadState = FileManager.default.fileExists(atPath: statePath)
        if hadState, rename(statePath, statePath + ".reset-\(stamp)") != 0 { throw LockError(.io, DurableFile.errnoText("rename", statePath)) }
        // Without its key the old log cannot be continued: it is set aside and a new chain begins.
        var note = hadState ? "previous state set aside as state.json.reset-\(stamp)" : "state.json was missing"
        let logPath = dir + "/" + AuditLog.fileName
        if !FileManager.default.fileExists(atPath: configuration.auditKeyPath), AuditLog.hasHistory(directory: dir) {
            guard rename(logPath, logPath + ".reset-\(stamp)") == 0 else { throw LockError(.io, DurableFile.errnoText("rename", logPath)) }
            note += "; the audit key was missing, so the old log was set aside as audit.log.reset-\(stamp) and a new chain begins"
        }
        let key = try AuditLog.openKey(configuration.auditKeyPath, history: AuditLog.hasHistory(directory: dir))
        let store = StateStore(directory: dir, auditKey: key)
        let mode = try configuration.initialClock()
        let start = VirtualClock(mode).now()
        let audit = try AuditLog(directory: dir, key: key)
        let entry = try audit.append([AuditEntry(seq: 0, time: start, event: AuditEntry.lockResetEvent,
                                                 detail: "state started afresh (\(note)): \(reason)")])[0]
        var state = PersistedLockState(engine: EngineState(clock: TrustedClock(trustedAt: start)), clock: mode)
        state.auditHead = audit.head
        try write(state, store: store, anchor: configuration.anchorPath.map { ($0, key) })
        return entry
    }

    /// Writes the state now (on a clean stop).
    public func flush() throws(LockError) {
        do { try mutate { _ in } } catch {
            guarded.withLock { $0.report(error, required: false, at: clock.now()) }
            throw error
        }
    }

    /// Secures an unsecured bolt at once and writes the state (a clean stop must not leave the
    /// door open until a relock that would never run). Returns whether the bolt was unsecured.
    @discardableResult
    public func secureNow() throws(LockError) -> Bool {
        try guarded.withLock { (g: inout Guarded) throws(LockError) -> Bool in
            let now = clock.now()
            guard case .unsecured = g.bolt.state(at: now) else {
                g.bolt.handle(.tick, at: now)
                try g.persist()
                return false
            }
            g.bolt.handle(.secureNow, at: now)
            try g.persist()
            return true
        }
    }
}
