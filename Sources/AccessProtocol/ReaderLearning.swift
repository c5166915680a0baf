import ByteCore
import Foundation

/// What one finished session taught the reader: the device ephemeral key (against replays), and
/// for its credential a FAST key learnt in an authenticated standard transaction, or a FAST use (recency). Small and Codable, so
/// a lock can journal it instead of rewriting the reader's whole memory; applying it again to a
/// memory that already holds it changes nothing but recency.
public struct ReaderLearning: Codable, Equatable, Sendable {
    public var deviceEphemeralKey: [UInt8]?
    public var credentialPublicKey: [UInt8]?
    /// Kpersistent learnt in a standard transaction whose device signature verified.
    public var persistentKey: [UInt8]?
    /// The credential used FAST (its cache entry becomes the most recent).
    public var usedFast: Bool
    /// The lock refused the credential's document as removed by its issuer: its Kpersistent goes
    /// (`DenyReason.dropsPersistentKey`).
    public var forgetsPersistentKey = false

    public init(deviceEphemeralKey: [UInt8]?, credentialPublicKey: [UInt8]?, persistentKey: [UInt8]?, usedFast: Bool) {
        self.deviceEphemeralKey = deviceEphemeralKey; self.credentialPublicKey = credentialPublicKey
        self.persistentKey = persistentKey; self.usedFast = usedFast
    }

    public init(_ result: TransactionResult) {
        deviceEphemeralKey = result.deviceEphemeralKey
        credentialPublicKey = result.credentialPublicKey
        persistentKey = result.learnedPersistentKey
        usedFast = result.fast
        forgetsPersistentKey = result.forgetPersistentKey
    }

    /// Whether applying it would change anything.
    public var isEmpty: Bool { deviceEphemeralKey == nil && (credentialPublicKey == nil || (persistentKey == nil && !usedFast && !forgetsPersistentKey)) }

    public func apply(to fastCache: inout FastCache, _ replayGuard: inout ReplayGuard) {
        if let eph = deviceEphemeralKey, !replayGuard.contains(eph) { replayGuard.insert(eph) }
        guard let key = credentialPublicKey else { return }
        if forgetsPersistentKey {
            fastCache.remove(key)
        } else if let p = persistentKey {
            fastCache.store(p, for: key)
        } else if usedFast {
            fastCache.touch(key)
        }
    }

    enum CodingKeys: String, CodingKey { case deviceEphemeralKey, credentialPublicKey, persistentKey, usedFast, forgetsPersistentKey }

    // Hex on disk (it rides in an audit line), bytes in memory.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func bytes(_ k: CodingKeys) throws -> [UInt8]? {
            guard let text = try c.decodeIfPresent(String.self, forKey: k) else { return nil }
            guard let b = Hex.decode(text) else { throw DecodingError.dataCorruptedError(forKey: k, in: c, debugDescription: "not hex") }
            return b
        }
        deviceEphemeralKey = try bytes(.deviceEphemeralKey)
        credentialPublicKey = try bytes(.credentialPublicKey)
        persistentKey = try bytes(.persistentKey)
        usedFast = try c.decodeIfPresent(Bool.self, forKey: .usedFast) ?? false
        forgetsPersistentKey = try c.decodeIfPresent(Bool.self, forKey: .forgetsPersistentKey) ?? false
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(deviceEphemeralKey.map { Hex.encode($0) }, forKey: .deviceEphemeralKey)
        try c.encodeIfPresent(credentialPublicKey.map { Hex.encode($0) }, forKey: .credentialPublicKey)
        try c.encodeIfPresent(persistentKey.map { Hex.encode($0) }, forKey: .persistentKey)
        if usedFast { try c.encode(true, forKey: .usedFast) }
        if forgetsPersistentKey { try c.encode(true, forKey: .forgetsPersistentKey) }
    }
}
