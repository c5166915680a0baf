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
///      lock saw before — within a bound: see `evidence`. A document whose MSO asks for time
///      verification (key 7 true) is never evidence: it asks the lock to have verified its time
///      already (NFC_RDR_NEG_STEPUP_AD_TIME_VERIFICATION_REQUIRED expects its refusal by a
///      lock without verified time).
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

    /// Signed time from a verified document (its MSO validity: signed, validFrom, validUntil). Returns true when it restored trust. It does only when all hold, with
    /// HWM the high-water mark and L the policy's maximum document lifetime:
    /// - HWM < signed ≤ HWM + L — the issuer vouched for a moment after anything the lock saw, and
    ///   not further ahead than a document may live (a future-dated document is no evidence);
    /// - signed − leeway ≤ now ≤ HWM + L + leeway — the lock's clock is not behind that moment, and
    ///   not further ahead of the mark than one document lifetime;
    /// - now ≤ validUntil + leeway — the document itself is still valid at the lock's time.
    /// Trust then resumes at `now`, so one document moves the high-water mark by at most L + leeway.
    /// A lock that was without power for longer than L needs an operator (`clock set`).
    /// A document with `timeVerificationRequired` (MSO key 7) is no evidence: false, nothing changes.
    @discardableResult
    public mutating func evidence(_ document: IssuedDocument, now: Date, leeway: TimeInterval, maxLifetime: TimeInterval) -> Bool {
        guard !trusted, !document.timeVerificationRequired else { return false }
        let validity = document.validity
        let signed = validity.signed
        if let hwm = highWaterMark {
            guard signed > hwm, signed <= hwm.addingTimeInterval(maxLifetime),
                  now <= hwm.addingTimeInterval(maxLifetime + leeway) else { return false }
        }
        guard now >= signed.addingTimeInterval(-leeway), now <= validity.validUntil.addingTimeInterval(leeway) else { return false }
        trusted = true
        highWaterMark = max(highWaterMark ?? now, now)
        return true
    }
}
