import ByteCore
import Foundation

/// The seam every radio implements on the lock's side: wait for a card or phone, exchange APDUs
/// with it, learn that it left. libnfc, PC/SC, BLE's channel and the TCP socket transport are
/// each one `CardReader`; `ReaderLoop` drives any of them the same way, so a new reader kind is
/// one type here, not a copy of a loop.
///
/// Every call that waits is bounded by its `timeout` (the loop passes short slices), so a loop
/// can always stop; nothing here needs a thread of its own. A reader is `Sendable`: the loop
/// that holds it is stopped from another thread than the one driving it.
public protocol CardReader: AnyObject, Sendable {
    associatedtype Card: PresentedCard, SendableMetatype

    /// What the reader is, as the user named it (`pcsc:Virtual PCD 00 00`, `pn532_uart:/tmp/r`).
    var spec: String { get }
    /// One clause for the loop's `started` line: what the reader does besides waiting (ECP polling…).
    var startNote: String { get }
    /// Opens (or reopens after a loss) the reader; returns its name as the driver reports it.
    func open() throws -> String
    /// Releases the reader; `open()` may follow.
    func close()
    /// A card or phone that arrived within `timeout`, nil when none did. Throws when the reader is gone.
    func waitForCard(timeout: TimeInterval) throws -> Card?
    /// True once `card` has left (waits at most `timeout`). Throws when the reader is gone.
    func waitForRemoval(_ card: Card, timeout: TimeInterval) throws -> Bool
    /// Tells the card how its transaction ended (BLE's `completed` notification); nil = it failed.
    func finish(_ card: Card, granted: Bool?)
    /// True when a transaction's error means the reader (not the card) failed: the loop reopens it.
    func isReaderFailure(_ error: Error) -> Bool
    /// Turns the RF field off and on: `card` (a phone left in the field) ends its transaction and
    /// the next `waitForCard` selects it afresh, as a new tap. False for a reader with no field
    /// to cycle (the socket, BLE): then wait for the card to leave instead.
    func cycleField(_ card: Card) throws -> Bool
    /// Set by the loop: what the radio notices outside a card's life (a BLE central that connects
    /// and is dropped idle…), as (text, is a problem). Readers with nothing to say never call it.
    var onNotice: (@Sendable (String, Bool) -> Void)? { get set }
}

extension CardReader {
    public var startNote: String { "" }
    public func finish(_ card: Card, granted: Bool?) {}
    public func isReaderFailure(_ error: Error) -> Bool { false }
    public func cycleField(_ card: Card) throws -> Bool { false }
}

/// A card or phone in front of a reader.
public protocol PresentedCard: CustomStringConvertible {
    /// The card's APDU channel for one transaction.
    var link: APDUTransceiver { get }
    /// Short identity for log lines: UID, ATR or address, in hex or as the radio writes it.
    var identity: String { get }
    /// Why no transaction can run with this card (it speaks no APDUs), nil to transact.
    var ignoredReason: String? { get }
}

extension PresentedCard {
    public var ignoredReason: String? { nil }
}
