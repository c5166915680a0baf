import Foundation
import OfflineUnlock

/// How far one transaction may go before the lock cuts it off with `transaction_limit`: a phone
/// answering every command with `61 00` would otherwise keep the lock asking GET RESPONSE for as
/// long as it likes. The loop that drives a `ReaderSession` (`LockReader.runTransaction`) checks
/// these before each command it sends; the session itself knows nothing of them.
///
/// The defaults leave a real tap far inside every bound — a standard transaction with step-up
/// and two documents is about a dozen commands, a few GET RESPONSE parts and 3 KiB, in well under
/// a second over libnfc — and still end a hostile one quickly.
public struct TransactionLimits: Equatable, Sendable, Codable {
    /// Command APDUs the reader sends (including GET RESPONSE and chained parts).
    public var maxCommands: Int = 64
    /// Response parts fetched with GET RESPONSE after a `61xx`, in the whole transaction.
    public var maxResponseParts: Int = 32
    /// Bytes received from the peer, in the whole transaction.
    public var maxBytes: Int = 64 * 1024
    /// Wall time from the first command, seconds.
    public var maxDuration: TimeInterval = 10

    public init() {}
    public init(maxCommands: Int, maxResponseParts: Int, maxBytes: Int, maxDuration: TimeInterval) {
        self.maxCommands = maxCommands; self.maxResponseParts = maxResponseParts
        self.maxBytes = maxBytes; self.maxDuration = maxDuration
    }

    /// What each bound may be set to in a lock configuration.
    public enum Bounds {
        public static let maxCommands: ClosedRange<Int> = 8...4096
        public static let maxResponseParts: ClosedRange<Int> = 1...4096
        public static let maxBytes: ClosedRange<Int> = 1024...(16 * 1024 * 1024)
        public static let maxDuration: ClosedRange<TimeInterval> = 1...300
    }

    /// What a transaction has used so far.
    public struct Usage: Equatable, Sendable {
        public var commands = 0
        public var responseParts = 0
        public var bytes = 0
        public var started: UInt64
        public init(started: UInt64) { self.started = started }

        /// Records one response from the peer.
        public mutating func received(_ response: [UInt8]) {
            bytes += response.count
            if response.count >= 2, response[response.count - 2] == 0x61 { responseParts += 1 }
        }
    }

    /// nil while `usage` is within every bound at `now` (uptime nanoseconds); else what was exceeded.
    public func exceeded(by usage: Usage, now: UInt64) -> String? {
        if usage.commands >= maxCommands { return "\(usage.commands) commands sent, the limit is \(maxCommands)" }
        if usage.responseParts > maxResponseParts { return "\(usage.responseParts) response parts (61xx), the limit is \(maxResponseParts)" }
        if usage.bytes > maxBytes { return "\(usage.bytes) bytes received, the limit is \(maxBytes)" }
        let elapsed = Double(now &- usage.started) / 1e9
        if elapsed > maxDuration { return String(format: "%.1f s elapsed, the limit is %@", elapsed, DurationText.format(maxDuration)) }
        return nil
    }

    enum CodingKeys: String, CodingKey { case maxCommands, maxResponseParts, maxBytes, maxDuration }

    /// `maxDuration` is text like the policy's durations (`"10s"`); every key optional; each value
    /// within `Bounds`.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func integer(_ k: CodingKeys, _ r: ClosedRange<Int>) throws -> Int? {
            guard let v = try c.decodeIfPresent(Int.self, forKey: k) else { return nil }
            guard r.contains(v) else { throw DecodingError.dataCorruptedError(forKey: k, in: c, debugDescription: "\(v) is out of range \(r.lowerBound)…\(r.upperBound)") }
            return v
        }
        if let v = try integer(.maxCommands, Bounds.maxCommands) { maxCommands = v }
        if let v = try integer(.maxResponseParts, Bounds.maxResponseParts) { maxResponseParts = v }
        if let v = try integer(.maxBytes, Bounds.maxBytes) { maxBytes = v }
        if let s = try c.decodeIfPresent(String.self, forKey: .maxDuration) {
            do throws(DurationText.Refusal) { maxDuration = try DurationText.parse(s, within: Bounds.maxDuration, what: "value") } catch {
                throw DecodingError.dataCorruptedError(forKey: .maxDuration, in: c, debugDescription: error.message)
            }
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(maxCommands, forKey: .maxCommands)
        try c.encode(maxResponseParts, forKey: .maxResponseParts)
        try c.encode(maxBytes, forKey: .maxBytes)
        try c.encode(DurationText.format(maxDuration), forKey: .maxDuration)
    }
}
