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
    public var recentTransactionIDs: [String] = []
    /// Highest protocol version each credential key (hex) has used.
    public var highestVersion: [String: UInt16] = [:]

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
