import ByteCore
import Foundation
import ReaderSeam

/// A libnfc reader as the lock's `CardReader`: polls for an ISO 14443-A card
/// (`nfc_initiator_select_passive_target`, no infinite select), hands its ISO-DEP link to the
/// transaction, presence-checks until it leaves. With `ecpPolling` on, every poll is preceded by
/// the ECP access frame through InCommunicateThru, so iPhones present a Wallet access pass in
/// express mode; the loop's `started` line says whether it is on.
///
/// Safe because it wraps a C handle (libnfc's context and device) that one thread drives at a
/// time: the reader loop's (it opens, polls, hands the card's link — the same device — to the
/// transaction it runs itself, presence-checks and closes), or a conformance run's. The loop
/// serves one card at a time on this reader (`maxConcurrent` 1); `onNotice` is never called.
public final class LibNFCReader: CardReader, @unchecked Sendable {
    public struct Configuration: Sendable {
        public var connstring: String
        /// Send `ecpFrame` before each poll.
        public var ecpPolling: Bool
        public var ecpFrame: ECPFrame
        /// Per-APDU timeout (ms) of the link handed to the transaction.
        public var apduTimeout: Int32

        public init(connstring: String, ecpPolling: Bool = false, ecpFrame: ECPFrame = .accessDefault, apduTimeout: Int32 = 1000) {
            self.connstring = connstring
            self.ecpPolling = ecpPolling
            self.ecpFrame = ecpFrame
            self.apduTimeout = apduTimeout
        }
    }

    /// A card libnfc selected.
    public struct Card: PresentedCard {
        public let target: TargetInfo
        public let link: APDUTransceiver
        public var identity: String { target.uid.hex }
        public var description: String { target.description }
        public var ignoredReason: String? {
            target.isISODEP ? nil : "SAK \([target.sak].hex): not ISO/IEC 14443-4, no APDUs"
        }
    }

    public var onNotice: (@Sendable (String, Bool) -> Void)?
    public let configuration: Configuration
    private var context: NFCContext?
    private var device: NFCDevice?

    public init(configuration: Configuration) { self.configuration = configuration }

    public convenience init(connstring: String, ecpPolling: Bool = false) {
        self.init(configuration: .init(connstring: connstring, ecpPolling: ecpPolling))
    }

    public var spec: String { configuration.connstring }

    public var startNote: String {
        configuration.ecpPolling
            ? "ECP polling on: sending the access frame \(configuration.ecpFrame.bytes.hex) before each poll"
            : "ECP polling off"
    }

    public func open() throws -> String {
        close()
        let context = try NFCContext()
        let device = try context.open(configuration.connstring)
        do { try device.initiatorInit() } catch { device.close(); throw error }
        self.context = context
        self.device = device
        return device.name
    }

    public func close() {
        device?.close()
        device = nil
        context = nil
    }

    private func opened() throws(NFCError) -> NFCDevice {
        guard let device else { throw NFCError(.closed, "the reader \(configuration.connstring) is not open") }
        return device
    }

    /// One poll (libnfc's select returns at once when the field is empty); the loop paces polls.
    public func waitForCard(timeout: TimeInterval) throws -> Card? {
        let device = try opened()
        if configuration.ecpPolling { _ = try device.transceiveRaw(configuration.ecpFrame.bytes) }
        guard let target = try device.selectISO14443A() else { return nil }
        return Card(target: target, link: device.link(target, timeout: configuration.apduTimeout))
    }

    public func waitForRemoval(_ card: Card, timeout: TimeInterval) throws -> Bool {
        try !opened().isTargetPresent()
    }

    /// Deselects the card and turns the field off and on (`NP_ACTIVATE_FIELD`): the phone ends
    /// its transaction and is selected again by the next poll.
    public func cycleField(_ card: Card) throws -> Bool {
        let device = try opened()
        try? device.deselect()
        try device.cycleField()
        return true
    }

    /// Bytes no longer reach the reader (unplugged, pty closed): reopen it.
    public func isReaderFailure(_ error: Error) -> Bool {
        guard let e = error as? NFCError else { return false }
        return e.code == .io || e.code == .closed
    }
}
