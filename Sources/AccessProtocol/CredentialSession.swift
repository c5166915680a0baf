import ByteCore
import OfflineUnlock
import Synchronization

/// The phone side as radios host it: an `APDUResponder` (and, over BLE, a `MessageResponder`)
/// that any radio thread may call. The state machine (`CredentialStateMachine`) is a value held
/// in a `Mutex`: each command, reset or look at its results runs alone on it.
public final class CredentialSession: MessageResponder, Sendable {
    /// Which secure channel an EXCHANGE arrived on.
    public enum ExchangeChannel: String, Sendable { case expedited, stepUp = "step-up" }

    public let configuration: CredentialConfiguration
    public let publicKey: [UInt8]
    private let machine: Mutex<CredentialStateMachine>

    public init(configuration: CredentialConfiguration, fastCache: FastCache? = nil,
                random: RandomSource = SystemRandom(), signer: MessageSigner? = nil) {
        let machine = CredentialStateMachine(configuration: configuration, fastCache: fastCache, random: random, signer: signer)
        self.configuration = configuration
        self.publicKey = machine.publicKey
        self.machine = Mutex(machine)
    }

    private func read<T: Sendable>(_ body: (inout CredentialStateMachine) -> T) -> T {
        machine.withLock { body(&$0) }
    }

    // MARK: - APDUResponder, MessageResponder

    /// Pure computation on what it holds: a virtual reader may answer through it on its own thread.
    public var answersAtOnce: Bool { true }
    public func respond(to bytes: [UInt8]) -> [UInt8] { read { $0.respond(to: bytes) } }
    public func reset() { read { $0.reset() } }
    /// While the reader works on the last answer: after an AUTH0 answered without a FAST
    /// cryptogram (so AUTH1 comes next) from a trusted reader, AUTH1's ECDH, keys and signature
    /// now rather than then; after AUTH1, Kpersistent.
    public func answerSent() { read { $0.answerSent() } }
    public func openingMessage(transportVersions: (supported: [UInt16], selected: UInt16)?) -> ChannelMessage? {
        read { $0.openingMessage(transportVersions: transportVersions) }
    }
    public func received(_ message: ChannelMessage) -> Bool { read { $0.received(message) } }
    public var readerReportedUnsecured: Bool? { read { $0.readerReportedUnsecured } }
    public var hasFollowUp: Bool { read { $0.hasFollowUp } }
    public func followUp() -> ChannelMessage? { read { $0.followUp() } }
    /// In the RKE flow, once the completed notification opened: the RKE request `02 04`
    /// (`00 01 <action>`) sealed under BleSKDevice, once per transaction; nil otherwise.
    public func remoteRequest() -> ChannelMessage? { read { $0.remoteRequest() } }
    /// `message` sealed under this transaction's BleSKDevice at the phone's next counter; nil
    /// before BleSK exists.
    public func sealForReader(_ message: ChannelMessage) -> ChannelMessage? { read { $0.sealForReader(message) } }

    // MARK: - What the transactions left (for tests, logs and the CLI)

    /// Kpersistent per reader id (32 bytes), learnt in standard transactions, kept across them.
    public var fastCache: FastCache { read { $0.fastCache } }
    /// What the last transaction ended with: the reader status from EXCHANGE, or the CONTROL
    /// FLOW S2 byte.
    public var lastReaderStatus: UInt16? { read { $0.lastReaderStatus } }
    public var lastControlFlow: ControlFlow? { read { $0.lastControlFlow } }
    /// The reader identifier (group ‖ sub) the last AUTH0 named: which door this was.
    public var lastReaderID: [UInt8]? { read { $0.lastReaderID } }
    public var transactions: Int { read { $0.transactions } }
    /// The lock's completed notification of the last BLE transaction, as opened; or why it did not open.
    public var lastCompleted: AccessProtocolCompleted? { read { $0.lastCompleted } }
    public var lastCompletedProblem: String? { read { $0.lastCompletedProblem } }
    /// The last event (`02 00`) the lock sent.
    public var lastEvent: BLEEvent? { read { $0.lastEvent } }
    /// The RKE flow (`ble phone --rke`): open with `02 06`, and after the lock's completed
    /// notification send the RKE request with this action (sealed under BleSKDevice).
    public var remoteAction: RemoteAction? {
        get { read { $0.remoteAction } }
        set { read { $0.remoteAction = newValue } }
    }
    /// The lock's "reader status changed" after the RKE request, as opened; or why it did not open.
    public var lastStatusChanged: ReaderStatusChanged? { read { $0.lastStatusChanged } }
    public var lastStatusChangedProblem: String? { read { $0.lastStatusChangedProblem } }
    /// The RKE request went out in this transaction.
    public var sentRemoteRequest: Bool { read { $0.sentRemoteRequest } }
    /// The mailbox operations of the last EXCHANGE, and which channel it arrived on.
    public var lastMailboxOperations: [MailboxOperation] { read { $0.lastMailboxOperations } }
    public var lastExchangeChannel: ExchangeChannel? { read { $0.lastExchangeChannel } }
    /// The DeviceRequest of the last ENVELOPE that opened (what the reader asked for).
    public var lastDeviceRequest: DeviceRequest? { read { $0.lastDeviceRequest } }
}
