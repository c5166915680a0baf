import ByteCore
import Foundation

/// Everything the engine remembers between transactions and across restarts. The lock persists it
/// (atomically) after every decision; it is plain Codable data.
public struct EngineState: Equatable, Sendable, Codable {
    public var clock: TrustedClock
    /// The revocation list of each issuer (by kid, hex), with its serial.
    public var revocationLists = RevocationLists()
    /// Revocation list changes since the lock last took them (in memory only).
    var pendingRevocationChanges = PendingRevocationChanges()
    /// Verified access documents by credential key (hex of the 65-byte key): the bytes as received.
    public var cachedDocuments: [String: [UInt8]] = [:]
    /// Most recent transaction ids (hex), oldest first.
    public var recentTransactionIDs: [String] {
        get { recent.order }
        set { recent = RecentTransactionIDs(newValue) }
    }
    /// The same ids, indexed: the replay check of every decision looks one up in a window of
    /// `LockPolicy.replayWindow` (1024) instead of scanning it.
    var recent = RecentTransactionIDs()
    /// Highest protocol version each credential key (hex) has used.
    public var highestVersion: [String: UInt16] = [:]
    /// `cachedDocuments` decoded and verified, in memory only (not encoded, not compared).
    var verified = VerifiedDocuments()

    public init(clock: TrustedClock) { self.clock = clock }

    enum CodingKeys: String, CodingKey {
        case clock, revocationLists, cachedDocuments, recentTransactionIDs, highestVersion
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
            let serial = try c.decodeIfPresent(UInt64.self, forKey: .revocationSerial) ?? 0
            let issued = try c.decodeIfPresent(Date.self, forKey: .revocationIssued) ?? .distantPast
            revocationLists = RevocationLists(revocationLists.lists.merging(
                [RevocationLists.legacyIssuer: IssuerRevocationList(serial: serial, issued: issued, entries: legacy)]) { a, _ in a })
        }
        // Early state files held the bytes as arrays of numbers: still read them.
        if let legacy = try? c.decodeIfPresent([String: [UInt8]].self, forKey: .cachedDocuments) {
            cachedDocuments = legacy
        } else {
            cachedDocuments = try (c.decodeIfPresent([String: Data].self, forKey: .cachedDocuments) ?? [:]).mapValues { Array($0) }
        }
        recentTransactionIDs = try c.decodeIfPresent([String].self, forKey: .recentTransactionIDs) ?? []
        highestVersion = try c.decodeIfPresent([String: UInt16].self, forKey: .highestVersion) ?? [:]
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(clock, forKey: .clock)
        try c.encode(revocationLists, forKey: .revocationLists)
        try c.encode(cachedDocuments.mapValues { Data($0) }, forKey: .cachedDocuments)
        try c.encode(recentTransactionIDs, forKey: .recentTransactionIDs)
        try c.encode(highestVersion, forKey: .highestVersion)
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

    /// Appends `id`, then drops the oldest ids beyond the last `window`.
    mutating func append(_ id: String, keepingLast window: Int) {
        order.append(id)
        counts[id, default: 0] += 1
        let excess = order.count - window
        guard excess > 0 else { return }
        for old in order.prefix(excess) {
            let n = counts[old, default: 1] - 1
            counts[old] = n > 0 ? n : nil
        }
        order.removeFirst(excess)
    }

    /// The order alone is the value; the counts follow from it.
    static func == (a: RecentTransactionIDs, b: RecentTransactionIDs) -> Bool { a.order == b.order }
}
