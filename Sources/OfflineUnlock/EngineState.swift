import ByteCore
import Foundation

/// Everything the engine remembers between transactions and across restarts. The lock persists it
/// (atomically) after every decision; it is plain Codable data.
public struct EngineState: Equatable, Sendable, Codable {
    public var clock: TrustedClock
    /// The revocation list of each issuer (by kid, hex), with the signed time of the last document applied.
    public var revocationLists = RevocationLists()
    /// Revocation list changes since the lock last took them (in memory only).
    var pendingRevocationChanges = PendingRevocationChanges()
    /// Verified access documents by credential key (hex of the 65-byte key): the bytes as received.
    /// Setting it (rather than a decision changing it) makes the changes untracked.
    public var cachedDocuments: [String: [UInt8]] {
        get { documents }
        set { documents = newValue; changeLog.changes.untracked = true }
    }
    private(set) var documents: [String: [UInt8]] = [:]
    /// Most recent transaction ids (hex), oldest first.
    public var recentTransactionIDs: [String] {
        get { recent.order }
        set { recent = RecentTransactionIDs(newValue); changeLog.changes.untracked = true }
    }
    /// The same ids, indexed: the replay check of every decision looks one up in a window of
    /// `LockPolicy.replayWindow` (1024) instead of scanning it.
    private(set) var recent = RecentTransactionIDs()
    /// Highest protocol version each credential key (hex) has used.
    public var highestVersion: [String: UInt16] {
        get { versions }
        set { versions = newValue; changeLog.changes.untracked = true }
    }
    private(set) var versions: [String: UInt16] = [:]
    /// The highest access-document validity iteration each issuer (kid, hex) has shown this lock:
    /// its "AccessIteration" (Aliro 0.9.4 §7.2.3; docs/protocol.md §9 "Validity iterations").
    public var accessIterations: [String: Int] {
        get { iterations }
        set { iterations = newValue; changeLog.changes.untracked = true }
    }
    private(set) var iterations: [String: Int] = [:]
    /// `cachedDocuments` decoded and verified, in memory only (not encoded, not compared).
    var verified = VerifiedDocuments()
    /// What decisions changed since the lock last took the changes (in memory only).
    private var changeLog = ChangeLog()

    public init(clock: TrustedClock) { self.clock = clock }

    // MARK: Changes, as decisions make them

    /// A decision begins: the clock and revocation lists as they are now, unless an earlier
    /// decision since the last take already noted them.
    mutating func noteDecision() {
        // An engine whose changes nobody takes (no lock behind it) stops tracking them after a
        // while instead of growing; a lock that takes them then writes a whole snapshot.
        if changeLog.changes.decisions >= Self.changeLogBound {
            changeLog.changes = EngineChanges()
            changeLog.changes.untracked = true
        }
        changeLog.changes.decisions += 1
        if changeLog.changes.clock == nil { changeLog.changes.clock = EngineChanges.Change(before: clock) }
        if changeLog.changes.revocationLists == nil { changeLog.changes.revocationLists = EngineChanges.Change(before: revocationLists) }
    }

    mutating func setDocument(_ bytes: [UInt8]?, for key: String) {
        let before = bytes.map { documents.updateValue($0, forKey: key) } ?? documents.removeValue(forKey: key)
        changeLog.changes.document(key, from: before, to: bytes)
    }

    mutating func setVersion(_ version: UInt16, for key: String) {
        let before = versions.updateValue(version, forKey: key)
        if before != version { changeLog.changes.version(key, from: before, to: version) }
    }

    mutating func setAccessIteration(_ iteration: Int, for issuer: String) {
        let before = iterations.updateValue(iteration, forKey: issuer)
        if before != iteration { changeLog.changes.iteration(issuer, from: before, to: iteration) }
    }

    mutating func rememberTransaction(_ id: String, window: Int) {
        changeLog.changes.droppedTransactions += recent.append(id, keepingLast: window)
        changeLog.changes.appendedTransactions.append(id)
    }

    /// Decisions whose changes are kept untaken at most (the lock takes them after each one).
    static let changeLogBound = 1024

    /// Replaced or edited from outside the engine's decisions.
    mutating func markUntracked() { changeLog.changes.untracked = true }

    /// The changes since the last call, with the clock and revocation lists as they are now; the
    /// log starts afresh. The lock takes them after each decision (for its record) and after each
    /// snapshot (which holds them all).
    public mutating func takeChanges() -> EngineChanges {
        var c = changeLog.changes
        changeLog.changes = EngineChanges()
        c.clock?.after = clock
        c.revocationLists?.after = revocationLists
        return c
    }

    /// Puts back what `changes` (as taken) changed: a decision the lock could not record.
    public mutating func undo(_ c: EngineChanges) {
        for (key, change) in c.documents {
            documents[key] = change.before
            verified.remove(key)
        }
        for (key, change) in c.versions { versions[key] = change.before }
        for (issuer, change) in c.iterations { iterations[issuer] = change.before }
        recent.undo(appended: c.appendedTransactions, dropped: c.droppedTransactions)
        if let before = c.clock?.before { clock = before }
        if let before = c.revocationLists?.before { revocationLists = before }
        pendingRevocationChanges = PendingRevocationChanges()
    }

    enum CodingKeys: String, CodingKey {
        case clock, revocationLists, cachedDocuments, recentTransactionIDs, highestVersion, accessIterations
        // Before lists were per issuer: one list for the whole lock (read, never written).
        case revocationSerial, revocationIssued, revocations
    }

    /// The revocation list changes decisions made since the last call (the lock audits each one).
    public mutating func takeRevocationChanges() -> [RevocationChange] {
        defer { pendingRevocationChanges.changes = [] }
        return pendingRevocationChanges.changes
    }

    // Cached documents are stored as base64 (not JSON arrays of numbers): the state file is
    // rewritten after every transaction.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        clock = try c.decode(TrustedClock.self, forKey: .clock)
        revocationLists = try c.decodeIfPresent(RevocationLists.self, forKey: .revocationLists) ?? RevocationLists()
        // A state file from before per-issuer lists: its one list, issuer unknown, revokes everywhere.
        if let legacy = try c.decodeIfPresent([RevocationEntry].self, forKey: .revocations), !legacy.isEmpty {
            let issued = try c.decodeIfPresent(Date.self, forKey: .revocationIssued) ?? .distantPast
            revocationLists = RevocationLists(revocationLists.lists.merging(
                [RevocationLists.legacyIssuer: IssuerRevocationList(issued: issued, entries: legacy)]) { a, _ in a })
        }
        // Early state files held the bytes as arrays of numbers: still read them.
        if let legacy = try? c.decodeIfPresent([String: [UInt8]].self, forKey: .cachedDocuments) {
            documents = legacy
        } else {
            documents = try (c.decodeIfPresent([String: Data].self, forKey: .cachedDocuments) ?? [:]).mapValues { Array($0) }
        }
        recent = RecentTransactionIDs(try c.decodeIfPresent([String].self, forKey: .recentTransactionIDs) ?? [])
        versions = try c.decodeIfPresent([String: UInt16].self, forKey: .highestVersion) ?? [:]
        // State files from before validity iterations were remembered hold none.
        iterations = try c.decodeIfPresent([String: Int].self, forKey: .accessIterations) ?? [:]
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(clock, forKey: .clock)
        try c.encode(revocationLists, forKey: .revocationLists)
        try c.encode(documents.mapValues { Data($0) }, forKey: .cachedDocuments)
        try c.encode(recent.order, forKey: .recentTransactionIDs)
        try c.encode(versions, forKey: .highestVersion)
        if !iterations.isEmpty { try c.encode(iterations, forKey: .accessIterations) }
    }
}

/// Transaction ids in arrival order, with how often each occurs (for lookups in constant time).
struct RecentTransactionIDs: Equatable, Sendable {
    private(set) var order: [String] = []
    private var counts: [String: Int] = [:]

    init(_ ids: [String] = []) {
        order = ids
        for id in ids { counts[id, default: 0] += 1 }
    }

    func contains(_ id: String) -> Bool { counts[id] != nil }

    /// Appends `id`, then drops the oldest ids beyond the last `window`; returns those dropped.
    @discardableResult
    mutating func append(_ id: String, keepingLast window: Int) -> [String] {
        order.append(id)
        counts[id, default: 0] += 1
        let excess = order.count - window
        guard excess > 0 else { return [] }
        let dropped = Array(order.prefix(excess))
        for old in dropped { forget(old) }
        order.removeFirst(excess)
        return dropped
    }

    /// Takes back `appended` (the newest ids) and puts `dropped` back in front.
    mutating func undo(appended: [String], dropped: [String]) {
        let n = min(appended.count, order.count)
        for id in order.suffix(n) { forget(id) }
        order.removeLast(n)
        order.insert(contentsOf: dropped, at: 0)
        for id in dropped { counts[id, default: 0] += 1 }
    }

    private mutating func forget(_ id: String) {
        let n = counts[id, default: 1] - 1
        counts[id] = n > 0 ? n : nil
    }

    /// The order alone is the value; the counts follow from it.
    static func == (a: RecentTransactionIDs, b: RecentTransactionIDs) -> Bool { a.order == b.order }
}
