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
}
