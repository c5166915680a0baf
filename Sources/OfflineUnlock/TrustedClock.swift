import Foundation

/// Whether the lock may believe its own clock, and the highest time it has ever trusted.
///
/// - **Rollback:** a time more than the leeway below the high-water mark is `clock_rollback`.
/// - **Untrusted:** after a power loss the lock keeps its high-water mark but does not trust its
///   clock (`clock_untrusted`) until trusted time arrives, either
///   1. an operator sets the clock (`operatorSet`: CLI `lockbench lock clock set`, or the config), or
///   2. a verified document (trusted issuer, good signature) whose signed time is above the
///      high-water mark and not ahead of the lock's clock by more than the leeway — evidence that
///      the clock is at least as late as a moment the issuer vouched for, and past anything the
///      lock saw before.
/// - Pure: every method takes the time as an argument.
public struct TrustedClock: Equatable, Sendable, Codable {
    public private(set) var highWaterMark: Date?
    public private(set) var trusted: Bool

    public init(trustedAt now: Date) { highWaterMark = now; trusted = true }
    public init(highWaterMark: Date?, trusted: Bool) { self.highWaterMark = highWaterMark; self.trusted = trusted }

    /// nil when `now` may be used for decisions; otherwise why not.
    public func check(_ now: Date, leeway: TimeInterval) -> DenyReason? {
        if let hwm = highWaterMark, now < hwm.addingTimeInterval(-leeway) { return .clockRollback }
        return trusted ? nil : .clockUntrusted
    }

    /// Records a trusted time the lock acted on (raises the high-water mark; never lowers it).
    public mutating func observe(_ now: Date) {
        guard trusted else { return }
        highWaterMark = max(highWaterMark ?? now, now)
    }

    /// Power was lost: keep the high-water mark, stop trusting the clock.
    public mutating func powerLoss() { trusted = false }

    /// An operator set the clock: trusted, and the high-water mark follows (even backwards:
    /// the operator is how a clock set too far ahead is repaired).
    public mutating func operatorSet(_ now: Date) { trusted = true; highWaterMark = now }

    /// Signed time from a verified document. Returns true when it restored trust.
    @discardableResult
    public mutating func evidence(signed: Date, now: Date, leeway: TimeInterval) -> Bool {
        guard !trusted else { return false }
        if let hwm = highWaterMark, signed <= hwm { return false }
        guard now >= signed.addingTimeInterval(-leeway) else { return false }
        trusted = true
        highWaterMark = max(highWaterMark ?? now, now)
        return true
    }
}
