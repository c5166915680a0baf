import Foundation

/// The order an issuer signs in. A lock learns that a phone carries something newer than it holds
/// only from the phone's `91`/`92` — the signed times of its documents, whole seconds
/// (docs/protocol.md §9) — so two documents of one chain signed in the same second would look
/// alike and the second would never reach a lock that holds the first. An issuer therefore signs
/// each document of a chain (an issuer's revocation lists; the access documents of one grant on
/// one credential) strictly after the previous one: in a burst of changes the signed time runs
/// ahead of the clock by one second per change, and the serial (lists) or validityIteration
/// (documents) still decides which is newer when the documents themselves arrive.
public enum SigningOrder {
    /// The signed time for the next document of a chain: `now` in whole seconds, or one second
    /// after `previous` when that is not earlier.
    public static func signedTime(now: Date, after previous: Date?) -> Date {
        let now = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        guard let previous else { return now }
        let next = Date(timeIntervalSince1970: previous.timeIntervalSince1970.rounded(.down) + 1)
        return max(now, next)
    }
}
