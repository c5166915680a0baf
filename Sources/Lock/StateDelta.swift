import AccessProtocol
import Foundation
import OfflineUnlock

/// What one decision changed in the lock's state, carried in its journal record — the audit entry
/// itself (`AuditEntry.state`), so the decision and its state change are one line, one write, one
/// fsync, under one HMAC chain. Only what changed is written: a tap costs the same whether the lock
/// has met 1 phone or 256. Recovery is the last snapshot (`state.json`) plus the deltas of the
/// entries after the head it records, applied in order (`apply`).
public struct StateDelta: Codable, Equatable, Sendable {
    /// The engine's trusted clock (high-water mark, trust), when it moved.
    public var trustedClock: TrustedClock?
    /// Issuer revocation lists replaced or added (by issuer kid), and those dropped.
    public var revocationLists: [String: IssuerRevocationList]?
    public var revocationListsRemoved: [String]?
    /// Access documents cached (by credential key, hex), and those evicted.
    public var documents: [String: Data]?
    public var documentsRemoved: [String]?
    /// Transaction ids appended to the replay window (it keeps the policy's last `replayWindow`).
    public var transactions: [String]?
    /// The whole replay window, when it changed in a way appending cannot say (a smaller window).
    public var transactionWindow: [String]?
    /// Highest protocol version per credential key that changed.
    public var versions: [String: UInt16]?
    /// AccessIteration per issuer (kid, hex) that changed (Aliro 0.9.4 §7.2.3): an iteration is
    /// acknowledged only once the record holding it is durable, like every other decision.
    public var accessIterations: [String: Int]?
    public var bolt: LockStateMachine.State?
    /// The lock's clock mode (a frozen clock's time, a running clock's offset), when it changed.
    public var clock: VirtualClock.Mode?
    /// What the reader learnt (FAST keys, device ephemeral keys) since the last record: the
    /// reader's memory is opaque to the lock, so recovery hands these back to it to apply in order
    /// (`EmulatedLock.recoveredReaderLearning`).
    public var reader: [ReaderLearning]?

    public var isEmpty: Bool { self == StateDelta() }

    public init() {}

    /// The change from `before` (the state as of the last record) to `after`.
    init(from before: PersistedLockState, to after: PersistedLockState, replayWindow: Int) {
        let b = before.engine, a = after.engine
        if a.clock != b.clock { trustedClock = a.clock }
        if a.revocationLists != b.revocationLists { lists(from: b.revocationLists, to: a.revocationLists) }
        // `!=` first: an untouched cache shares its storage with the last record's, so a decision
        // that cached nothing costs O(1) here, not O(cache).
        var docs = [String: Data]()
        if a.cachedDocuments != b.cachedDocuments {
            for (k, v) in a.cachedDocuments where b.cachedDocuments[k] != v { docs[k] = Data(v) }
        }
        if !docs.isEmpty { documents = docs }
        if a.cachedDocuments.count != b.cachedDocuments.count + docs.count {
            let removed = b.cachedDocuments.keys.filter { a.cachedDocuments[$0] == nil }
            if !removed.isEmpty { documentsRemoved = removed.sorted() }
        }
        let ta = a.recentTransactionIDs, tb = b.recentTransactionIDs
        if ta != tb {
            let appended = ta.isEmpty ? nil : (1...min(ta.count, 8)).lazy.map { Array(ta.suffix($0)) }
                .first { Array((tb + $0).suffix(replayWindow)) == ta }
            if let appended { transactions = appended } else { transactionWindow = ta }
        }
        var v = [String: UInt16]()
        if a.highestVersion != b.highestVersion {
            for (k, n) in a.highestVersion where b.highestVersion[k] != n { v[k] = n }
        }
        if !v.isEmpty { versions = v }
        var it = [String: Int]()
        if a.accessIterations != b.accessIterations {
            for (k, n) in a.accessIterations where b.accessIterations[k] != n { it[k] = n }
        }
        if !it.isEmpty { accessIterations = it }
        if after.bolt != before.bolt { bolt = after.bolt }
        if after.clock != before.clock { clock = after.clock }
    }

    /// The change the engine's decisions made (`EngineChanges`, as taken after them), and the
    /// lock's bolt and clock mode from `before` (as of the last record) to `after`. Costs what
    /// changed, not the size of the state: only the keys the decisions touched are looked at.
    init(changes c: EngineChanges, bolt: (before: LockStateMachine.State, after: LockStateMachine.State),
         clock: (before: VirtualClock.Mode, after: VirtualClock.Mode)) {
        if let t = c.clock, t.isChange { trustedClock = t.after }
        if let l = c.revocationLists, l.isChange, let before = l.before, let after = l.after { lists(from: before, to: after) }
        var docs = [String: Data](), removed = [String]()
        for (key, change) in c.documents where change.isChange {
            if let bytes = change.after { docs[key] = Data(bytes) } else { removed.append(key) }
        }
        if !docs.isEmpty { documents = docs }
        if !removed.isEmpty { documentsRemoved = removed.sorted() }
        if !c.appendedTransactions.isEmpty { transactions = c.appendedTransactions }
        var v = [String: UInt16]()
        for (key, change) in c.versions where change.isChange { if let n = change.after { v[key] = n } }
        if !v.isEmpty { versions = v }
        var it = [String: Int]()
        for (issuer, change) in c.iterations where change.isChange { if let n = change.after { it[issuer] = n } }
        if !it.isEmpty { accessIterations = it }
        if bolt.after != bolt.before { self.bolt = bolt.after }
        if clock.after != clock.before { self.clock = clock.after }
    }

    private mutating func lists(from before: RevocationLists, to after: RevocationLists) {
        let changed = after.lists.filter { before.lists[$0.key] != $0.value }
        let removed = before.lists.keys.filter { after.lists[$0] == nil }
        if !changed.isEmpty { revocationLists = changed }
        if !removed.isEmpty { revocationListsRemoved = removed.sorted() }
    }

    /// Replays this change onto `state` (recovery).
    func apply(to state: inout PersistedLockState, replayWindow: Int) {
        var e = state.engine
        if let trustedClock { e.clock = trustedClock }
        if revocationLists != nil || revocationListsRemoved != nil {
            var lists = e.revocationLists.lists
            for (k, v) in revocationLists ?? [:] { lists[k] = v }
            for k in revocationListsRemoved ?? [] { lists[k] = nil }
            e.revocationLists = RevocationLists(lists)
        }
        for (k, v) in documents ?? [:] { e.cachedDocuments[k] = Array(v) }
        for k in documentsRemoved ?? [] { e.cachedDocuments[k] = nil }
        if let transactionWindow { e.recentTransactionIDs = transactionWindow }
        if let transactions { e.recentTransactionIDs = Array((e.recentTransactionIDs + transactions).suffix(replayWindow)) }
        for (k, n) in versions ?? [:] { e.highestVersion[k] = n }
        for (k, n) in accessIterations ?? [:] { e.accessIterations[k] = n }
        state.engine = e
        if let bolt { state.bolt = bolt }
        if let clock { state.clock = clock }
    }
}
