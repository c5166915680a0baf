import ByteCore
import Foundation

/// Everything the engine remembers between transactions and across restarts. The lock persists it
/// (atomically) after every decision; it is plain Codable data.
public struct EngineState: Equatable, Sendable, Codable {
    public var clock: TrustedClock
    /// Serial of the revocation document currently applied (0 = none).
    public var revocationSerial: UInt64 = 0
    /// Signed time of that document.
    public var revocationIssued: Date?
    public var revocations: [RevocationEntry] = []
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
        case clock, revocationSerial, revocationIssued, revocations, cachedDocuments, recentTransactionIDs, highestVersion
    }

    // Cached documents are stored as base64 (not JSON arrays of numbers): the state file is
    // rewritten after every transaction.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        clock = try c.decode(TrustedClock.self, forKey: .clock)
        revocationSerial = try c.decodeIfPresent(UInt64.self, forKey: .revocationSerial) ?? 0
        revocationIssued = try c.decodeIfPresent(Date.self, forKey: .revocationIssued)
        revocations = try c.decodeIfPresent([RevocationEntry].self, forKey: .revocations) ?? []
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
        try c.encode(revocationSerial, forKey: .revocationSerial)
        try c.encodeIfPresent(revocationIssued, forKey: .revocationIssued)
        try c.encode(revocations, forKey: .revocations)
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
