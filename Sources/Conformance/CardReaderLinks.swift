import ByteCore
import Foundation
import ReaderSeam

/// A phone under test reached through a `CardReader` (the seam under the lock's loop), one link
/// per transaction (`conformance credential --nfc`, `--connect`): each `open` takes the next
/// card that speaks APDUs; its `close` tells the card the transaction ended (`finish`) and lets
/// it go — by cycling the field where the reader has one (a phone left on an NFC reader is
/// tapped afresh), else by waiting until it left.
public final class CardReaderLinks<Reader: CardReader> {
    public let reader: Reader
    /// Seconds to wait for a card in each `open`.
    public var waitForCard: TimeInterval
    /// Seconds to wait for a card to leave where the field cannot be cycled.
    public var waitForRemoval: TimeInterval = 2
    /// Pause between polls of a reader whose `waitForCard` returns at once.
    public var pollInterval: TimeInterval = 0.05

    /// Opens the reader; throws when it cannot be opened.
    public init(_ reader: Reader, waitForCard: TimeInterval = 10) throws {
        self.reader = reader
        self.waitForCard = max(0, min(waitForCard, 3600))
        _ = try reader.open()
    }

    /// The next card's link, and how to end its transaction.
    public func open() throws -> (link: APDUTransceiver, close: () -> Void) {
        let deadline = Date(timeIntervalSinceNow: waitForCard)
        while true {
            let left = deadline.timeIntervalSinceNow
            if let card = try reader.waitForCard(timeout: max(0, min(left, 0.25))), card.ignoredReason == nil {
                return (card.link, { [reader, waitForRemoval] in
                    reader.finish(card, granted: nil)
                    if (try? reader.cycleField(card)) != true { _ = try? reader.waitForRemoval(card, timeout: waitForRemoval) }
                })
            }
            guard Date() < deadline else {
                throw CardReaderLinksError("no phone speaking APDUs came to \(reader.spec) within \(Int(waitForCard)) s")
            }
            Thread.sleep(forTimeInterval: pollInterval)
        }
    }

    public func close() { reader.close() }
}

/// A reader that produced no phone in time.
public struct CardReaderLinksError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
