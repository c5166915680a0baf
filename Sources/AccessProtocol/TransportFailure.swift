/// Why the link ended a transaction before the lock decided. Found by the loop that drives a
/// `ReaderSession` over an `APDUTransceiver` (`LockReader.drive`); nothing reaches the credential,
/// so these reasons have no reader status. `rawValue` is the stable wire code.
public enum TransportFailure: String, Codable, Sendable, CaseIterable {
    /// The transceiver failed: the card left the field, the phone hung up, the link timed out.
    case linkLost = "link_lost"
    /// The transaction went past a bound of the reader's `TransactionLimits` (commands, response
    /// parts, bytes or time): a peer that never finishes is cut off.
    case transactionLimit = "transaction_limit"
}
