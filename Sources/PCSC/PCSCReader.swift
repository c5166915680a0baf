import ByteCore
import Foundation
import ReaderSeam

/// A PC/SC reader (through pcscd) as the lock's `CardReader`: the CCID desk readers libnfc does
/// not drive (ACR1252U, HID Omnikey, Identiv uTrust) and vsmartcard's virtual `Virtual PCD`.
/// Waits for a card with SCardGetStatusChange in bounded slices, connects T=0|T=1, hands the card
/// to the transaction, waits for the reader to report it gone (empty, or mute: a virtual card
/// that disconnected).
///
/// Safe because it wraps a C handle (pcsc-lite's context, and each card's handle from it) that
/// one thread drives at a time: the reader loop's (it opens, waits, runs the transaction over
/// the card's handle itself, waits for removal and closes), or a benchmark's. The loop serves
/// one card at a time on this reader (`maxConcurrent` 1); `onNotice` is never called.
public final class PCSCReader: CardReader, @unchecked Sendable {
    /// `pcsc` (the first reader pcscd offers) or `pcsc:READER NAME`.
    public var onNotice: (@Sendable (String, Bool) -> Void)?
    public let readerName: String?
    private var context: PCSCContext?
    private var reader: String?
    /// The state last seen (nil: SCARD_STATE_UNAWARE, so the next wait reports the state at once).
    private var known: PCSCReaderState?

    public init(readerName: String? = nil) {
        self.readerName = readerName.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `pcsc` or `pcsc:NAME` → a reader; nil for another scheme.
    public convenience init?(spec: String) {
        if spec == "pcsc" { self.init() }
        else if spec.hasPrefix("pcsc:") { self.init(readerName: String(spec.dropFirst("pcsc:".count))) }
        else { return nil }
    }

    public var spec: String { readerName.map { "pcsc:\($0)" } ?? "pcsc" }

    public var startNote: String { "PC/SC through pcscd" }

    /// A card on the reader, connected.
    public struct Card: PresentedCard {
        public let atr: [UInt8]
        public let handle: PCSCCardHandle
        public var link: APDUTransceiver { handle }
        public var identity: String { atr.hex }
        public var description: String { "ATR \(atr.hex) on \(handle.reader) (\(handle.protocolName))" }
    }

    public func open() throws -> String {
        close()
        let context = try PCSCContext()
        let readers = try context.readers()
        let name: String
        if let readerName {
            guard readers.contains(readerName) else {
                let offered = readers.isEmpty ? "pcscd offers no reader" : "pcscd offers " + readers.map { "\"\($0)\"" }.joined(separator: ", ")
                throw PCSCError(.unknownReader, "no PC/SC reader named \"\(readerName)\": \(offered); `lockbench pcsc list` shows them")
            }
            name = readerName
        } else {
            guard let first = readers.first else { throw PCSCLite.error(PCSCLite.noReadersCode, "SCardListReaders") }
            name = first
        }
        self.context = context
        reader = name
        known = nil
        return name
    }

    public func close() {
        context?.release()
        context = nil
        reader = nil
    }

    private func opened() throws(PCSCError) -> (PCSCContext, String) {
        guard let context, let reader else { throw PCSCError(.invalidHandle, "the PC/SC reader \(spec) is not open") }
        return (context, reader)
    }

    /// One bounded wait for the reader's state to change; updates `known`.
    private func refresh(timeout: TimeInterval) throws(PCSCError) {
        let (context, reader) = try opened()
        let ms = UInt32(max(0, min(timeout, 60)) * 1000)
        guard let state = try context.waitForChange(of: reader, from: known, timeoutMilliseconds: ms) else { return }
        known = state
        if state.isUnavailable {
            throw PCSCError(.readerUnavailable, "the PC/SC reader \"\(reader)\" is unavailable (unplugged, or its driver failed)")
        }
    }

    public func waitForCard(timeout: TimeInterval) throws -> Card? {
        let (context, reader) = try opened()
        try refresh(timeout: timeout)
        guard let state = known, state.hasUsableCard else { return nil }
        do {
            return Card(atr: state.atr, handle: try context.connect(reader))
        } catch where !error.isReaderFailure {
            return nil  // gone or mute between the state and the connect: wait again
        }
    }

    /// The card left when the reader reports it empty, or mute (a virtual card that disconnected).
    public func waitForRemoval(_ card: Card, timeout: TimeInterval) throws -> Bool {
        card.handle.disconnect()
        if known?.hasUsableCard == true { try refresh(timeout: timeout) }
        return known?.hasUsableCard != true
    }

    public func finish(_ card: Card, granted: Bool?) {
        card.handle.disconnect()
    }

    public func isReaderFailure(_ error: Error) -> Bool {
        (error as? PCSCError)?.isReaderFailure ?? false
    }
}
