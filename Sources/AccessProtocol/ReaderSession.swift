import ByteCore
import Codecs
import Crypto
import Foundation
import OfflineUnlock

/// The lock's identity on the radio: a P-256 signing key and its 32-byte reader id.
public struct ReaderSigningIdentity {
    public var signingKey: P256.Signing.PrivateKey {
        didSet { publicKey = signingKey.publicBytes }
    }
    /// 16 bytes.
    public var groupID: [UInt8]
    /// 16 bytes.
    public var subID: [UInt8]
    /// The reader's public key `04‖X‖Y`; LockBench uses it as the reader group key. Computed once
    /// (encoding a point costs a field inversion).
    public private(set) var publicKey: [UInt8]

    public init(signingKey: P256.Signing.PrivateKey, groupID: [UInt8], subID: [UInt8]) {
        precondition(groupID.count == 16 && subID.count == 16, "group id and sub id are 16 bytes each")
        self.signingKey = signingKey
        self.groupID = groupID
        self.subID = subID
        self.publicKey = signingKey.publicBytes
    }

    /// Group id ‖ sub id.
    public var readerID: [UInt8] { groupID + subID }
}

/// Signs a message with ECDSA P-256 / SHA-256 and returns raw r ‖ s. The default signs with
/// swift-crypto (random k); test vectors inject recorded signatures.
public typealias MessageSigner = ([UInt8]) -> [UInt8]

/// When the reader sends the step-up SELECT (`A000000909ACCE5502`) before ENVELOPE.
public enum StepUpSelectMode: String, Sendable, Codable, CaseIterable {
    /// Only when the AUTH1 answer's signaling bitmap sets bit 2 (the public reference device
    /// leaves it clear and answers the SELECT `6D00`).
    case whenAsked = "when-asked"
    /// Every time (for credentials built to expect it whatever their bitmap says).
    case always
}

/// The channel of the closing EXCHANGE after a step-up.
public enum StepUpExchangeChannel: String, Sendable, Codable, CaseIterable {
    /// StepUpSKReader / StepUpSKDevice, counters continuing after ENVELOPE: what the public
    /// reference device accepts (it refuses the expedited one with `6988`).
    case stepUp = "step-up"
    /// ExpeditedSKReader / ExpeditedSKDevice, for credentials built the other way.
    case expedited
}

/// How a reader runs transactions.
public struct ReaderConfiguration {
    public var identity: ReaderSigningIdentity
    /// Versions the reader speaks, most preferred first.
    public var supportedVersions: [UInt16]
    public var interface: RadioInterface
    /// AUTH0 policy byte (01 user-device setting, 02 secure action, 03 force user authentication).
    public var policy: UInt8
    /// Ask for a FAST cryptogram in AUTH0.
    public var useFast: Bool
    /// Largest data field per command APDU (chaining above it); 255 fits libnfc's 262 bytes.
    public var commandChunk: Int
    /// The reader status sent in EXCHANGE after a grant (0101 unsecured: the door opened).
    public var grantStatus: UInt16
    public var stepUpSelect: StepUpSelectMode
    public var stepUpExchange: StepUpExchangeChannel
    /// Mailbox operations sent in every closing EXCHANGE that reports a decision.
    public var mailbox: [MailboxOperation]
    /// Misbehaviour on purpose (conformance self-tests); none by default.
    public var faults: ReaderFaults = []
    /// Step up at every tap whose phone announces a document, not only when the decider wants
    /// documents (lock configuration `"protocol": {"stepUpEveryTap": true}`).
    public var stepUpEveryTap = false
    /// The reader certificate shown to phones in standard transactions; nil: none (the phone
    /// trusts the reader's own key).
    public var certificate: ReaderCertificatePresentation? = nil

    public init(identity: ReaderSigningIdentity, supportedVersions: [UInt16] = [ProtocolVersion.v1_0],
                interface: RadioInterface = .nfc, policy: UInt8 = 0x01, useFast: Bool = true,
                commandChunk: Int = CommandAPDU.maxShortData, grantStatus: UInt16 = ReaderStatus.unsecured,
                stepUpSelect: StepUpSelectMode = .whenAsked, stepUpExchange: StepUpExchangeChannel = .stepUp,
                mailbox: [MailboxOperation] = []) {
        self.identity = identity
        self.supportedVersions = supportedVersions
        self.interface = interface
        self.policy = policy
        self.useFast = useFast
        self.commandChunk = commandChunk
        self.grantStatus = grantStatus
        self.stepUpSelect = stepUpSelect
        self.stepUpExchange = stepUpExchange
        self.mailbox = mailbox
    }

    /// `5E` on NFC and the socket transport (NFC-shaped APDUs), `C3` on BLE.
    public var interfaceByte: UInt8 { interface == .ble ? 0xC3 : 0x5E }
}

/// The result of one transaction, as the pure state machine knows it.
public struct TransactionResult: Sendable, Equatable {
    public var decision: TransactionDecision
    public var transactionID: [UInt8]
    public var credentialPublicKey: [UInt8]?
    public var version: UInt16?
    public var fast: Bool
    public var stepUp: Bool
    /// The credential acknowledged the closing EXCHANGE / CONTROL FLOW with 9000.
    public var acknowledged: Bool
    /// A Kpersistent to cache for this credential (after a granted standard transaction).
    public var learnedPersistentKey: [UInt8]?
    /// The reader forgets this credential's Kpersistent (a document its issuer removed).
    public var forgetPersistentKey = false
    /// The device ephemeral key to remember against replays.
    public var deviceEphemeralKey: [UInt8]?
    /// Every APDU on the wire, in order (commands and responses), for transcripts and logs.
    public var transcript: [TranscriptEntry]
    /// The lock answered `decide` (the decision is the lock's; otherwise the protocol or the
    /// transport ended the transaction before any decision).
    public var decided: Bool = false
    /// The link failed after the decision: the lock decided and acted, but the credential never
    /// heard the answer (`acknowledged` is false). The transport's error.
    public var linkLostAfterDecision: String? = nil
    /// The reader status the credential was told: in the closing EXCHANGE (NFC, socket) or, over
    /// BLE, in the completed notification (nil: CONTROL FLOW, a failure event, or nothing sent).
    public var readerStatus: UInt16? = nil
    /// Over BLE, a transaction opened with `02 06`: the phone's RKE request after the completed
    /// notification, what the lock did, or why it refused the request (nil: no RKE transaction,
    /// or one that was not granted).
    public var remote: RemoteActionRecord? = nil
    /// Over BLE: the message that ended the transaction (the completed notification or the
    /// failure event, as sent: sealed once BleSK exists); nil on other radios.
    public var closingMessage: ChannelMessage? = nil
    /// The mailbox operations the closing EXCHANGE carried, the data each read returned, and the
    /// status the credential gave them (nil when no operation was sent or no answer opened).
    public var mailboxOperations: [MailboxOperation] = []
    public var mailboxReads: [[UInt8]] = []
    public var mailboxStatus: UInt16? = nil
    /// The secure-channel payloads this reader sealed or opened, each against the transcript
    /// entry that carried it: what the lock itself saw in the clear, for its own viewers.
    public var opened: [OpenedPayload] = []
}

/// A payload the reader sealed (a command's) or opened (an answer's), as plaintext.
public struct OpenedPayload: Sendable, Equatable {
    /// The index in the transcript of the APDU that carried it (a chained command's first part,
    /// the last part of a chained answer).
    public var entry: Int
    /// What it is: the command whose payload or answer it was (AUTH0 for a FAST cryptogram,
    /// AUTH1, ENVELOPE, EXCHANGE), whatever APDU carried its last bytes.
    public var label: String
    public var plaintext: [UInt8]
}

/// The RKE part of a BLE transaction: the action asked and the status the lock reported in
/// "reader status changed", or the refusal naming the byte and the rule.
public struct RemoteActionRecord: Sendable, Equatable {
    public var action: RemoteAction?
    public var readerStatus: AccessProtocolCompleted.ReaderStatusInformation?
    public var refusal: String?

    public init(action: RemoteAction? = nil, readerStatus: AccessProtocolCompleted.ReaderStatusInformation? = nil, refusal: String? = nil) {
        self.action = action
        self.readerStatus = readerStatus
        self.refusal = refusal
    }
}

public struct TranscriptEntry: Sendable, Equatable {
    public enum Direction: String, Sendable { case command = "C", response = "R" }
    public var direction: Direction
    public var bytes: [UInt8]
    /// What this APDU is ("SELECT", "AUTH0", "GET RESPONSE", …).
    public var label: String
}

/// What the reader state machine wants done next.
public enum ReaderAction: Sendable, Equatable {
    /// Send this command APDU and feed the response to `received(_:at:)`.
    case transmit([UInt8])
    /// The credential is authenticated (and its documents are in): the lock decides and acts,
    /// then answers with `decided(_:)`. Nothing has been told to the credential yet.
    case decide(Presentation)
    /// Send this message on the channel (BLE: the completed notification or a failure event);
    /// no answer comes: then call `notified()`.
    case notify(ChannelMessage)
    /// BLE, a granted RKE transaction: wait for the phone's next message (its RKE request, `02 04`)
    /// and feed it to `receivedMessage(_:)`, or `messageMissed(_:)` when none came in time.
    case receive
    /// The phone's RKE request opened and parsed: the lock acts on the bolt for the credential of
    /// `Presentation` (granted), then answers `acted(_:)` with the status to report.
    case act(RemoteAction, Presentation)
    /// The transaction is over.
    case complete(TransactionResult)
}

/// What a BLE transaction starts from instead of SELECT: the phone's "initiate access protocol"
/// and the transport's version negotiation (GATT), which the BLE keys bind.
public struct BLEOpening: Sendable {
    public var initiate: InitiateAccessProtocol
    public var transportVersions: (supported: [UInt16], selected: UInt16)?
    /// The phone opened with `02 06` (initiate access protocol RKE): the transaction is for a
    /// remote keyless entry request, sent after the completed notification.
    public var remoteAction: Bool

    public init(initiate: InitiateAccessProtocol, transportVersions: (supported: [UInt16], selected: UInt16)?, remoteAction: Bool = false) {
        self.initiate = initiate
        self.transportVersions = transportVersions
        self.remoteAction = remoteAction
    }
}

/// The lock's answer to `decide`: what it decided (a denial names its layer: the engine's
/// reason, or the lock's own such as `jammed`) and the reader status the closing EXCHANGE
/// carries (for a grant, the bolt's real state after acting; for a denial, the status of the
/// layer that refused).
public struct Resolution: Sendable, Equatable {
    public var decision: TransactionDecision
    public var readerStatus: UInt16

    public init(decision: TransactionDecision, readerStatus: UInt16) {
        self.decision = decision
        self.readerStatus = readerStatus
    }

    /// An engine's decision with no lock behind it (tests, benchmarks): a grant reports
    /// `grantStatus`, a denial the engine reason's own status.
    public init(engine decision: Decision, grantStatus: UInt16 = ReaderStatus.unsecured) {
        switch decision {
        case .grant: self.init(decision: TransactionDecision(decision), readerStatus: grantStatus)
        case .deny(let reason, _): self.init(decision: TransactionDecision(decision), readerStatus: reason.readerStatus)
        }
    }
}

/// The lock side of one transaction, as a pure value: no I/O and no clock; time comes in as an
/// argument and every step returns the next action. It drives
/// SELECT → AUTH0 → (FAST: EXCHANGE) | AUTH1 → [SELECT step-up, ENVELOPE] → EXCHANGE,
/// or CONTROL FLOW when the transaction fails before a secure channel exists.
///
/// Over BLE (`start(at:initiated:)`, the official ble_reader cases): the phone's initiate replaces
/// SELECT, so AUTH0 goes first; the outcome goes in the completed notification, never in
/// EXCHANGE: AUTH0 → AUTH1 → EXCHANGE (no `97`; the mailbox operations) → [ENVELOPE] →
/// completed (RD-BLE-STDTXN-2.0, BLEUWB_RDR_STEPUP_PHASE: EXCHANGE before ENVELOPE); FAST:
/// AUTH0 → completed (RD-BLE-FSTTXN-1.0); a failure is the `02 00` GENERAL_ERROR event instead
/// of CONTROL FLOW or a failing EXCHANGE.
public struct ReaderSession {
    private enum Step {
        case start
        case select
        case auth0(TranscriptContextPartial)
        case loadCert(TranscriptContext)
        case auth1(TranscriptContext)
        case stepUpSelect
        case envelope
        case deciding
        case exchange
        case controlFlow
        case notifying
        case awaitingRemote
        case remoteActing
        case done
    }

    /// The part of the transcript known before the AUTH0 response.
    private struct TranscriptContextPartial {
        var version: UInt16
        var fci: [UInt8]
        var readerEphemeral: P256.KeyAgreement.PrivateKey
        var readerEphemeralPublic: [UInt8]
        var transactionID: [UInt8]
        var flags: UInt8
    }

    public let configuration: ReaderConfiguration
    /// Does the lock need this credential's documents (given what the credential says it
    /// carries)? A read of the lock's state, no effect.
    private let wantsStepUp: ([UInt8], SignedTimestamps) -> Bool
    private let random: RandomSource
    private let signer: MessageSigner
    private var fastCache: FastCache
    private let replayGuard: ReplayGuard

    private var step: Step = .start
    /// The AUTH1 answer asked for the step-up SELECT (bitmap bit 2).
    private var stepUpSelectAsked = false
    /// The channel the closing EXCHANGE went out on (its answer opens under it).
    private var closing: SecureChannel?
    // Link layer: the rest of a command chain, and the response chain being assembled.
    private var pendingParts: [CommandAPDU] = []
    private var assembler = ResponseAssembler()
    private var currentLabel = ""
    private var lastLabel = ""

    // What the transaction has learnt so far.
    private var result: TransactionResult
    private var context: TranscriptContext?
    private var channel: SecureChannel?
    private var stepUpChannel: SecureChannel?
    private var stepUpSK: [UInt8]?
    private var startedAt: Date?
    /// Made before the card arrived (`PreparedEphemeralKey`); nil: made at SELECT's answer.
    private var preparedEphemeralKey: PreparedEphemeralKey?
    /// Set when the transaction runs over BLE (started from the phone's initiate).
    private var ble: BLEOpening?
    /// BleSK of this transaction once the keys exist (after AUTH1, or a FAST cryptogram).
    private var bleSK: [UInt8]?
    /// Over BLE, what follows the EXCHANGE: the presentation to decide on, and whether the
    /// documents are needed first (step-up).
    private var afterExchange: (presentation: Presentation, stepUp: Bool)?
    /// The BLE secure messaging of this transaction (its counters run across the lock's
    /// notifications and the phone's RKE request).
    private var bleMessaging: BLESecureMessaging?
    /// RKE: the presentation the lock granted, for the request that follows.
    private var remotePresentation: Presentation?
    /// RKE: the request was handled (acted on or refused); the next notification ends the transaction.
    private var remoteHandled = false

    /// A transaction opened for a remote keyless entry request.
    private var remoteTransaction: Bool { ble?.remoteAction == true }

    /// AUTH0's policy: `02` USER_DEVICE_SECURE_ACTION for an RKE transaction (what the tool's
    /// reader sends in every blerke_ud case), else the configured one.
    private var policy: UInt8 { remoteTransaction ? AuthenticationPolicy.userDeviceSecureAction.rawValue : configuration.policy }

    public init(configuration: ReaderConfiguration, wantsStepUp: @escaping ([UInt8], SignedTimestamps) -> Bool, fastCache: FastCache = FastCache(),
                replayGuard: ReplayGuard = ReplayGuard(), random: RandomSource = SystemRandom(), signer: MessageSigner? = nil,
                ephemeralKey: PreparedEphemeralKey? = nil) {
        self.configuration = configuration
        self.preparedEphemeralKey = ephemeralKey
        self.wantsStepUp = wantsStepUp
        self.fastCache = fastCache
        self.replayGuard = replayGuard
        self.random = random
        let key = configuration.identity.signingKey
        self.signer = signer ?? { Primitives.sign($0, with: key) }
        self.result = TransactionResult(decision: .deny(Refusal(.protocol(.malformedInput), detail: "transaction did not run")),
                                        transactionID: [], credentialPublicKey: nil, version: nil, fast: false,
                                        stepUp: false, acknowledged: false, learnedPersistentKey: nil,
                                        deviceEphemeralKey: nil, transcript: [])
    }

    public var isComplete: Bool { if case .done = step { return true } else { return false } }

    /// The first action: SELECT the access applet.
    public mutating func start(at time: Date) -> ReaderAction {
        startedAt = time
        step = .select
        return send(Commands.select(AID.expedited), "SELECT")
    }

    /// The first action over BLE: the phone's initiate stands for SELECT's answer, so AUTH0 goes
    /// first (RD-BLE-AUTH0-1.0, RD-BLE-STDTXN-2.0), binding the initiate's `A5` and interface `C3`.
    public mutating func start(at time: Date, initiated opening: BLEOpening) -> ReaderAction {
        startedAt = time
        ble = opening
        // The reference reader refuses another application type (`reader.py`: "User send unknown application type").
        guard opening.initiate.applicationType == [0x00, 0x00] else {
            return fail(.malformedInput, "initiate access protocol: application type \(opening.initiate.applicationType.hex) (80), not 0000")
        }
        return sendAuth0(offered: opening.initiate.versions, fci: opening.initiate.proprietaryTLV)
    }

    /// Over BLE, after the `.notify` message went out (`delivered`) or could not: the
    /// transaction is over. A decision the phone never heard stands, as with `abort`.
    public mutating func notified(delivered: Bool) -> ReaderAction {
        step = .done
        // RKE: a granted transaction waits for the phone's request (BLERKE_RDR_SECURE step 9).
        if delivered, remoteTransaction, !remoteHandled, result.decided, result.decision.isGrant, remotePresentation != nil,
           result.closingMessage?.id == ChannelMessage.Notification.accessProtocolCompleted, !configuration.faults.contains(.ignoreRKE) {
            result.acknowledged = true
            step = .awaitingRemote
            return .receive
        }
        if !delivered {
            result.acknowledged = false
            if result.decided { result.linkLostAfterDecision = "the completed notification could not be sent" }
        } else if result.decided, result.fast || closing == nil {
            result.acknowledged = true      // no EXCHANGE went out: the notification is what the phone heard
        }
        return .complete(result)
    }

    /// RKE: the phone's message after the completed notification. It must be the RKE request
    /// `02 04`, open under BleSKDevice at the phone's next counter, and hold a known action; the
    /// lock then acts (`.act`). Anything else is refused naming the byte and the rule, and the
    /// phone is told with the GENERAL_ERROR event (wrong parameters).
    public mutating func receivedMessage(_ message: ChannelMessage) -> ReaderAction {
        guard case .awaitingRemote = step, let presentation = remotePresentation else { return .complete(result) }
        remoteHandled = true
        guard message.type == ChannelMessage.Kind.notification, message.id == ChannelMessage.Notification.rkeRequest else {
            return refuseRemote("the phone's message after the completed notification is \(message), not the RKE request (02 04): bytes 0-1 must be 02 04")
        }
        let plain: [UInt8]
        do { plain = try openFromPhone(message) } catch {
            return refuseRemote("RKE request \(message) does not open under this transaction's BleSKDevice (unauthenticated): \(error)")
        }
        let request: RKERequest
        do { request = try RKERequest(parsing: plain) } catch {
            return refuseRemote("\(error)")
        }
        result.remote = RemoteActionRecord(action: request.action)
        step = .remoteActing
        return .act(request.action, presentation)
    }

    /// RKE: no request came (`detail` says why); the grant stands, the bolt did not move.
    public mutating func messageMissed(_ detail: String) -> ReaderAction {
        guard case .awaitingRemote = step else { return .complete(result) }
        remoteHandled = true
        result.remote = RemoteActionRecord(refusal: "no RKE request (02 04) after the completed notification: \(detail)")
        step = .done
        return .complete(result)
    }

    /// RKE: the lock acted; "reader status changed" tells the phone the resulting state.
    public mutating func acted(_ status: AccessProtocolCompleted.ReaderStatusInformation) -> ReaderAction {
        guard case .remoteActing = step else { return .complete(result) }
        result.remote?.readerStatus = status
        return notify(ReaderStatusChanged(readerStatus: status).message)
    }

    private mutating func refuseRemote(_ why: String) -> ReaderAction {
        result.remote = RemoteActionRecord(refusal: why)
        return notify(ChannelMessage(type: ChannelMessage.Kind.notification, id: ChannelMessage.Notification.event,
                                     payload: BLEEvent.generalError(.wrongParameters).encoded()))
    }

    /// The credential did not answer in time. Over BLE the channel is still up, so the phone is
    /// told with the GENERAL_ERROR event (BLEUWB_RDR_NEG_TIMEOUT_BEFORE_AUTH0); elsewhere it is an
    /// `abort`. A decision already taken stands either way.
    public mutating func timedOut(_ detail: String) -> ReaderAction {
        guard ble != nil, !isComplete else { return .complete(abort(detail)) }
        _ = abort(detail)
        return notifyFailure()
    }

    /// Feeds one response APDU (data ‖ SW) from the credential.
    public mutating func received(_ bytes: [UInt8], at time: Date) -> ReaderAction {
        result.transcript.append(TranscriptEntry(direction: .response, bytes: bytes, label: lastLabel))
        if case .done = step { return .complete(result) }
        let response: ResponseAPDU
        do {
            response = try ResponseAPDU(parsing: bytes)
        } catch {
            return fail(.malformedInput, "\(currentLabel) response: \(error)")
        }
        if !pendingParts.isEmpty {
            guard response.status == .success else {
                return fail(.malformedInput, "\(currentLabel): chained command part answered \(response.status)")
            }
            let next = pendingParts.removeFirst()
            return transmitPart(next)
        }
        let whole: ResponseAPDU
        do {
            switch try assembler.feed(response) {
            case .send(let getResponse):
                return transmitPart(getResponse, label: "GET RESPONSE")
            case .complete(let r):
                whole = r
            }
        } catch {
            return fail(.malformedInput, "\(currentLabel): \(error)")
        }
        return handle(whole, at: time)
    }

    /// Aborts the transaction (the transport failed); no further APDU is sent. Before the lock
    /// decided, the transaction is denied for the transport; after, the lock's decision stands
    /// (it has acted and recorded it) and the result says the credential never heard it.
    public mutating func abort(_ detail: String) -> TransactionResult {
        step = .done
        if result.decided {
            result.acknowledged = false
            result.linkLostAfterDecision = detail
        } else {
            result.decision = .deny(Refusal(.transport(.linkLost), detail: "transport: \(detail)"))
            result.learnedPersistentKey = nil
        }
        return result
    }

    /// The lock's answer to `.decide`: the closing EXCHANGE carries its reader status.
    public mutating func decided(_ resolution: Resolution) -> ReaderAction {
        guard case .deciding = step else { return .complete(result) }
        result.decision = resolution.decision
        result.decided = true
        // Kpersistent after any standard transaction whose device signature verified, granted or not:
        // the next tap of that phone runs FAST whatever the decision (NFC_RDR_FAST's phone has no
        // document and a key the reader does not know); the engine still decides every FAST tap.
        if case .deny(let refusal) = resolution.decision, case .engine(let reason) = refusal.reason, reason.dropsPersistentKey {
            result.forgetPersistentKey = true
            result.learnedPersistentKey = nil
        } else if !result.fast, let (ctx, credentialKey) = persistentKeyInputs {
            result.learnedPersistentKey = KeySchedule.persistentKey(k: sharedK, context: ctx, credentialKey: credentialKey)
        } else {
            result.learnedPersistentKey = nil
        }
        // BLE: the EXCHANGE (if any) went before the decision; the outcome is the completed notification.
        guard ble == nil else { return notifyCompleted(resolution.readerStatus) }
        return close(ExchangeCommandPlaintext(readerStatus: resolution.readerStatus, mailbox: configuration.mailbox))
    }

    // MARK: - Steps

    private mutating func handle(_ response: ResponseAPDU, at time: Date) -> ReaderAction {
        switch step {
        case .start, .done, .deciding, .notifying, .awaitingRemote, .remoteActing:
            return .complete(result)
        case .select:
            return selected(response)
        case .auth0(let partial):
            return auth0Answered(response, partial)
        case .loadCert(let ctx):
            guard response.status == .success else { return fail(.malformedInput, "LOAD CERT answered \(response.status)") }
            return sendAuth1(ctx)
        case .auth1(let ctx):
            return auth1Answered(response, ctx)
        case .stepUpSelect:
            // Sent although the bitmap did not ask for it (configured "always"): a credential that
            // does not know the SELECT (the public reference device answers 6D00) still gets ENVELOPE.
            guard response.status == .success || !stepUpSelectAsked else {
                return failOnChannel(.malformedInput, "step-up SELECT answered \(response.status)", status: ReaderStatus.statusWordError)
            }
            return sendEnvelope()
        case .envelope:
            return envelopeAnswered(response)
        case .exchange:
            result.acknowledged = response.status == .success
            if result.acknowledged, var ch = closing {
                // The response must open under the device key and the next device counter.
                if let plain = try? ch.open(response.data) {
                    result.opened.append(OpenedPayload(entry: result.transcript.count - 1, label: "EXCHANGE", plaintext: plain))
                    let reads = result.mailboxOperations.filter(\.isRead).count
                    if let answer = try? ExchangeResponsePlaintext(parsing: plain, reads: reads) {
                        if !result.mailboxOperations.isEmpty {
                            result.mailboxReads = answer.reads
                            result.mailboxStatus = answer.status.rawValue
                        }
                    }
                } else {
                    result.acknowledged = false
                }
                closing = ch
            }
            if let next = afterExchange {
                // BLE: the EXCHANGE is not the decision; a phone that refused it is still decided on.
                afterExchange = nil
                return next.stepUp ? stepUp(next.presentation) : decideAndClose(next.presentation)
            }
            step = .done
            return .complete(result)
        case .controlFlow:
            result.acknowledged = response.status == .success
            step = .done
            return .complete(result)
        }
    }

    private mutating func selected(_ response: ResponseAPDU) -> ReaderAction {
        guard response.status == .success else {
            return fail(.malformedInput, "SELECT answered \(response.status)")
        }
        let fci: SelectResponse
        do {
            fci = try SelectResponse(parsing: response.data)
        } catch {
            return fail(.malformedInput, "SELECT response: \(error)")
        }
        // 84 may be absent (tolerant), but an FCI naming another applet is not the access applet's
        // answer: stop with CONTROL FLOW (RD-NFC-SELECT-1.2).
        guard fci.aid.isEmpty || fci.aid == AID.expedited else {
            return fail(.malformedInput, "SELECT answer names AID \(fci.aid.hex) in 84, not the access AID \(AID.expedited.hex)")
        }
        return sendAuth0(offered: fci.versions, fci: fci.proprietaryTLV)
    }

    /// AUTH0 for the best common version, binding `fci` (the `A5` of SELECT's answer or of the
    /// BLE initiate). Over BLE FAST is asked only with a Kpersistent cached: a reader meeting a
    /// phone for the first time runs a standard transaction (RD-BLE-AUTH0-1.0, -1.1, FSTTXN-1.0).
    private mutating func sendAuth0(offered versions: [UInt16], fci: [UInt8]) -> ReaderAction {
        guard let version = configuration.supportedVersions.first(where: { versions.contains($0) }) else {
            return fail(.unsupportedVersion,
                        "credential offers \(versions.map(versionText)), reader speaks \(configuration.supportedVersions.map(versionText))",
                        s2: ControlFlow.protocolVersionNotSupported)
        }
        result.version = version
        let prepared = preparedEphemeralKey ?? PreparedEphemeralKey(random: random)
        preparedEphemeralKey = nil
        let eph = prepared.key, ephPublic = prepared.publicBytes
        let tid = random.bytes(16)
        result.transactionID = tid
        // FAST only once there is a Kpersistent to try: a reader that has met no phone asks for a
        // standard transaction, as every official reader case's first AUTH0 requires (NFC and BLE).
        // Never for RKE: every round of BLERKE_RDR_NEG_FAST expects AUTH1 after AUTH0.
        let fast = configuration.useFast && fastCache.count > 0 && (!remoteTransaction || configuration.faults.contains(.fastRKE))
        let flags: UInt8 = fast ? Auth0Command.flagFast : 0
        let cmd = Auth0Command(flags: flags, policy: policy, version: version,
                               readerEphemeralKey: ephPublic, transactionID: tid,
                               readerID: configuration.identity.readerID)
        step = .auth0(TranscriptContextPartial(version: version, fci: fci, readerEphemeral: eph,
                                               readerEphemeralPublic: ephPublic, transactionID: tid, flags: flags))
        return send(cmd.apdu, "AUTH0")
    }

    private mutating func auth0Answered(_ response: ResponseAPDU, _ p: TranscriptContextPartial) -> ReaderAction {
        guard response.status == .success else { return fail(.malformedInput, "AUTH0 answered \(response.status)") }
        let answer: Auth0Response
        do {
            answer = try Auth0Response(parsing: response.data)
        } catch {
            return fail(.malformedInput, "AUTH0 response: \(error)")
        }
        // Structure only here; ECDH (standard path) validates the point on the curve. A FAST
        // cryptogram that opens authenticates the key without it.
        guard answer.deviceEphemeralKey.first == 0x04 else {
            return fail(.malformedInput, "AUTH0 response: device ephemeral key is not an uncompressed point")
        }
        result.deviceEphemeralKey = answer.deviceEphemeralKey
        if replayGuard.contains(answer.deviceEphemeralKey) {
            return fail(.replay, "AUTH0 response repeats a device ephemeral key seen in an earlier transaction")
        }
        // With a certificate the group key phones trust is the issuer CA's (ALIRO-FACTS "Keys").
        let groupKey = shownCertificate?.issuerPublicKey ?? configuration.identity.publicKey
        let ctx = TranscriptContext(readerGroupKey: groupKey, readerID: configuration.identity.readerID,
                                    interfaceByte: configuration.interfaceByte, version: p.version,
                                    readerEphemeralKey: p.readerEphemeralPublic, transactionID: p.transactionID,
                                    flags: p.flags, policy: policy, fciProprietary: p.fci,
                                    deviceEphemeralKey: answer.deviceEphemeralKey)
        context = ctx

        // FAST: try each cached Kpersistent until the cryptogram's tag verifies.
        if let cryptogram = answer.cryptogram, p.flags & Auth0Command.flagFast != 0 {
            for entry in fastCache.all {
                let keys = KeySchedule.fastKeys(persistent: entry.persistent, context: ctx, credentialKey: entry.key)
                guard let plain = KeySchedule.openCryptogram(keys, cryptogram) else { continue }
                result.opened.append(OpenedPayload(entry: result.transcript.count - 1, label: "AUTH0", plaintext: plain))
                // Documents needed (none usable cached, or the credential carries newer) and the
                // phone has some to give (5E bit 0 or 1; no 5E: assume so): go standard.
                let offers = SignalingBitmap(cryptogramPlaintext: plain)?.announcesDocuments ?? true
                if offers && (configuration.stepUpEveryTap || wantsStepUp(entry.key, SignedTimestamps(cryptogramPlaintext: plain))) { break }
                fastCache.touch(entry.key)
                result.fast = true
                result.credentialPublicKey = entry.key
                channel = SecureChannel(role: .reader, readerKey: keys.expeditedSKReader, deviceKey: keys.expeditedSKDevice)
                bleSK = keys.bleSK
                return decideAndClose(Presentation(credentialPublicKey: entry.key, transactionID: p.transactionID,
                                                   interface: configuration.interface, protocolVersion: p.version, fast: true))
            }
        }

        // Standard: sign the transcript and send AUTH1; ECDH and the key derivation are needed
        // only once the answer is in, so they run on another thread while the credential works.
        guard Primitives.isPoint(answer.deviceEphemeralKey) else {
            return fail(.malformedInput, "ECDH with the device ephemeral key failed: it is not a point on P-256")
        }
        let readerEphemeral = p.readerEphemeral, deviceEphemeral = answer.deviceEphemeralKey, transactionID = p.transactionID
        keysAhead = Ahead {
            guard let z = try? Primitives.ecdh(privateKey: readerEphemeral, peerPublicKey: deviceEphemeral) else { return nil }
            let k = KeySchedule.sharedK(z: z, transactionID: transactionID)
            return (k, KeySchedule.volatileKeys(k: k, context: ctx))
        }
        if let presentation = shownCertificate, presentation.mode == .loadCert {
            step = .loadCert(ctx)
            let command = presentation.loadCertCommand
            return send(command, "LOAD CERT", chunk: presentation.chunk(for: command, default: configuration.commandChunk))
        }
        return sendAuth1(ctx)
    }

    /// The certificate the reader sends (none under the omit-certificate fault).
    private var shownCertificate: ReaderCertificatePresentation? {
        configuration.faults.contains(.omitCertificate) ? nil : configuration.certificate
    }

    /// AUTH1 over the transcript, with the certificate in `90` when it goes there.
    private mutating func sendAuth1(_ ctx: TranscriptContext) -> ReaderAction {
        step = .auth1(ctx)
        let signature = signer(ctx.signedData(reader: true))
        guard let presentation = shownCertificate, presentation.mode == .auth1 else {
            return send(Auth1Command(flags: Auth1Command.flagReturnPublicKey, signature: signature).apdu, "AUTH1")
        }
        let command = Auth1Command(flags: Auth1Command.flagReturnPublicKey, signature: signature,
                                   certificate: presentation.certificate.compressed()).apdu
        return send(command, "AUTH1", chunk: presentation.chunk(for: command, default: configuration.commandChunk))
    }

    private var sharedK: [UInt8] = []
    /// K and the volatile keys of the standard path, computed while AUTH1 is out.
    private var keysAhead: Ahead<([UInt8], VolatileKeys)?>?
    private var persistentKeyInputs: (TranscriptContext, [UInt8])?

    private mutating func auth1Answered(_ response: ResponseAPDU, _ ctx: TranscriptContext) -> ReaderAction {
        if response.status == .securityStatusNotSatisfied {
            return fail(.badReaderSignature, "the credential refused the reader's signature (AUTH1 answered 6982)")
        }
        guard response.status == .success else { return fail(.malformedInput, "AUTH1 answered \(response.status)") }
        // Only Kpersistent is bound to the credential's long-term key, so the expedited keys are
        // derived before the plaintext names the credential (while AUTH1 was out: `keysAhead`).
        guard let (k, keys) = keysAhead?.value ?? nil else {
            return fail(.malformedInput, "ECDH with the device ephemeral key failed")
        }
        sharedK = k
        var ch = SecureChannel(role: .reader, readerKey: keys.expeditedSKReader, deviceKey: keys.expeditedSKDevice)
        let plain: [UInt8]
        do {
            plain = try ch.open(response.data)
            result.opened.append(OpenedPayload(entry: result.transcript.count - 1, label: "AUTH1", plaintext: plain))
        } catch {
            if let preferred = configuration.supportedVersions.first, ctx.version != preferred {
                return fail(.downgrade, "AUTH1 response did not decrypt after negotiating \(versionText(ctx.version)) below the preferred \(versionText(preferred)): the SELECT answer was probably altered")
            }
            return fail(.secureChannelFailure, "AUTH1 response: \(error)")
        }
        // The expedited channel exists from here on: every failure is told in EXCHANGE with a
        // reader status, not in CONTROL FLOW (nfc_rdr_neg_auth1_wrong_value,
        // nfc_rdr_neg_auth1_wrong_ud_signature).
        channel = ch
        bleSK = keys.bleSK
        let answer: Auth1ResponsePlaintext
        do {
            let tlvs = try TLV.parseFields(plain)
            if tlvs.first(Tag.Auth1.signature) == nil {
                return failOnChannel(.malformedInput, "AUTH1 response plaintext: device signature (9E) missing", status: ReaderStatus.noSignature)
            }
            if tlvs.first(Tag.Auth1.credentialKey) == nil {
                let what = tlvs.first(Tag.Auth1.keySlot) == nil ? "neither 5A nor 4E" : "a key slot (4E)"
                return failOnChannel(.malformedInput, "AUTH1 response carries \(what); the reader asked for the public key (5A)",
                                     status: ReaderStatus.noPublicKey)
            }
            answer = try Auth1ResponsePlaintext(parsing: plain)
        } catch {
            return failOnChannel(.malformedInput, "AUTH1 response plaintext: \(error)")
        }
        guard case .publicKey(let credentialKey) = answer.identity else {
            return failOnChannel(.malformedInput, "AUTH1 response carries a key slot; the reader asked for the public key (5A)",
                                 status: ReaderStatus.noPublicKey)
        }
        guard credentialKey.first == 0x04 else {
            return failOnChannel(.malformedInput, "AUTH1 response: credential key is not an uncompressed point", status: ReaderStatus.badDataContent)
        }
        result.credentialPublicKey = credentialKey
        guard configuration.faults.contains(.acceptBadDeviceSignature)
                || Primitives.verifyRaw(signature: answer.signature, message: ctx.signedData(reader: false), publicKey: credentialKey) else {
            if !Primitives.isPoint(credentialKey) {
                return failOnChannel(.malformedInput, "AUTH1 response: credential key is not a P-256 point", status: ReaderStatus.badDataContent)
            }
            return failOnChannel(.badCredentialSignature, "device signature over the AUTH1 transcript does not verify with the credential key")
        }
        stepUpSK = keys.stepUpSK
        persistentKeyInputs = (ctx, credentialKey)     // Kpersistent: derived once decided (`decided`), off the decision's path
        let presentation = Presentation(credentialPublicKey: credentialKey, transactionID: ctx.transactionID,
                                        interface: configuration.interface, protocolVersion: ctx.version, fast: false)
        // Step up only when the phone announces a document to fetch (5E bit 0 or 1).
        let needsDocuments = answer.signaling.announcesDocuments && (configuration.stepUpEveryTap || wantsStepUp(credentialKey, SignedTimestamps(answer)))
        stepUpSelectAsked = answer.signaling.contains(.stepUpSelectRequired)
        announcedAccessDocument = answer.signaling.contains(.accessDocumentAvailable)
        if ble != nil {
            afterExchange = (presentation, needsDocuments)
            return close(ExchangeCommandPlaintext(readerStatus: nil, mailbox: configuration.mailbox))
        }
        return needsDocuments ? stepUp(presentation) : decideAndClose(presentation)
    }

    /// The step-up: the step-up SELECT when asked (or configured always; over BLE only when asked:
    /// BLERKE_RDR_STEPUP_PHASE fails on any INS but EXCHANGE before ENVELOPE), then ENVELOPE.
    private mutating func stepUp(_ presentation: Presentation) -> ReaderAction {
        result.stepUp = true
        pendingPresentation = presentation
        let select = stepUpSelectAsked || (ble == nil && configuration.stepUpSelect == .always)
        guard select else { return sendEnvelope() }
        step = .stepUpSelect
        return send(Commands.select(AID.stepUp), "SELECT step-up")
    }

    private var pendingPresentation: Presentation?
    /// The AUTH1 answer announced an access document (5E bit 0); told to the engine after step-up.
    private var announcedAccessDocument = false

    private mutating func sendEnvelope() -> ReaderAction {
        guard let stepUpSK else { return failOnChannel(.malformedInput, "step-up without keys") }
        let keys = KeySchedule.stepUpKeys(stepUpSK: stepUpSK)
        var ch = SecureChannel(role: .reader, readerKey: keys.reader, deviceKey: keys.device)
        let request = DeviceRequest.standard.encoded()
        let sealed: [UInt8]
        do { sealed = try ch.seal(request) } catch { return failOnChannel(.secureChannelFailure, "\(error)") }
        stepUpChannel = ch
        step = .envelope
        result.opened.append(OpenedPayload(entry: result.transcript.count, label: "ENVELOPE", plaintext: request))
        return send(Commands.envelope(StepUpEnvelope.wrap(sealed)), "ENVELOPE")
    }

    private mutating func envelopeAnswered(_ response: ResponseAPDU) -> ReaderAction {
        guard response.status == .success else {
            return failOnChannel(.malformedInput, "ENVELOPE answered \(response.status)", status: ReaderStatus.statusWordError)
        }
        guard var ch = stepUpChannel, var presentation = pendingPresentation else {
            return failOnChannel(.malformedInput, "ENVELOPE answer out of sequence")
        }
        let sealed: [UInt8]
        do {
            sealed = try StepUpEnvelope.unwrap(response.data)
        } catch {
            return failOnChannel(.malformedInput, "ENVELOPE response: \(error)")
        }
        let plain: [UInt8]
        do { plain = try ch.open(sealed) } catch {
            return failOnChannel(.secureChannelFailure, "ENVELOPE response: \(error)")
        }
        result.opened.append(OpenedPayload(entry: result.transcript.count - 1, label: "ENVELOPE", plaintext: plain))
        stepUpChannel = ch
        let documents: DeviceResponse
        do {
            documents = try DeviceResponse(parsing: plain)
        } catch {
            return failOnChannel(.malformedInput, "DeviceResponse: \(error)")
        }
        presentation.accessDocuments = documents.accessDocuments
        presentation.revocationDocuments = documents.revocationDocuments
        presentation.announcedAccessDocument = announcedAccessDocument
        return decideAndClose(presentation)
    }

    /// Hands the presentation to the lock; `decided(_:)` then tells the credential through
    /// EXCHANGE (secure channel up).
    private mutating func decideAndClose(_ presentation: Presentation) -> ReaderAction {
        step = .deciding
        pendingParts = []
        var presentation = presentation
        presentation.remoteAction = remoteTransaction
        if remoteTransaction { remotePresentation = presentation }
        return .decide(presentation)
    }

    /// Sends the closing EXCHANGE: on the step-up channel after a step-up whose answer opened
    /// (unless configured expedited), else on the expedited channel.
    private mutating func close(_ message: ExchangeCommandPlaintext) -> ReaderAction {
        let onStepUp = configuration.stepUpExchange == .stepUp && (stepUpChannel?.lastReceivedCounter ?? 0) > 0
        guard var ch = onStepUp ? stepUpChannel : channel else { step = .done; return .complete(result) }
        let sealed: [UInt8]
        do {
            sealed = try ch.seal(message.encoded())
        } catch {
            step = .done
            return .complete(result)
        }
        if onStepUp { stepUpChannel = ch } else { channel = ch }
        closing = ch
        result.readerStatus = message.readerStatus
        result.mailboxOperations = message.orderedMailbox
        step = .exchange
        result.opened.append(OpenedPayload(entry: result.transcript.count, label: "EXCHANGE", plaintext: message.encoded()))
        return send(Commands.exchange(sealed), "EXCHANGE")
    }

    /// Denies for a protocol reason once the secure channel exists, and tells the credential with
    /// an EXCHANGE carrying a failure reader status (no mailbox operations).
    private mutating func failOnChannel(_ reason: ProtocolFailure, _ detail: String, status: UInt16? = nil) -> ReaderAction {
        guard channel != nil else { return fail(reason, detail) }
        result.decision = .deny(Refusal(.protocol(reason), detail: detail))
        result.learnedPersistentKey = nil
        pendingParts = []
        assembler = ResponseAssembler()
        if ble != nil { return notifyFailure() }
        return close(ExchangeCommandPlaintext(readerStatus: status ?? reason.readerStatus))
    }

    /// Denies for a protocol reason and tells the credential with CONTROL FLOW.
    private mutating func fail(_ reason: ProtocolFailure, _ detail: String, s2: UInt8 = ControlFlow.noInformation) -> ReaderAction {
        result.decision = .deny(Refusal(.protocol(reason), detail: detail))
        result.learnedPersistentKey = nil
        pendingParts = []
        assembler = ResponseAssembler()
        if ble != nil { return notifyFailure() }
        step = .controlFlow
        return send(ControlFlow(s1: ControlFlow.finishedWithFailure, s2: s2).apdu, "CONTROL FLOW")
    }

    // MARK: - BLE notifications

    /// `message` sealed under BleSKReader when BleSK exists, else as is; the reader's counter
    /// runs on across the transaction's notifications.
    private mutating func sealedForBLE(_ message: ChannelMessage) -> ChannelMessage {
        guard let bleSK, let opening = ble else { return message }
        var messaging = bleMessaging ?? BLESecureMessaging(role: .reader, bleSK: bleSK, transportVersions: opening.transportVersions)
        defer { bleMessaging = messaging }
        return (try? messaging.seal(message)) ?? message
    }

    /// The plaintext of the phone's sealed message under BleSKDevice, at its next counter.
    private mutating func openFromPhone(_ message: ChannelMessage) throws(ProtocolError) -> [UInt8] {
        guard let bleSK, let opening = ble else { throw ProtocolError(.decryptFailed, "no BleSK in this transaction") }
        var messaging = bleMessaging ?? BLESecureMessaging(role: .reader, bleSK: bleSK, transportVersions: opening.transportVersions)
        defer { bleMessaging = messaging }
        return try messaging.open(message)
    }

    /// The completed notification carrying the bolt's state (`00 02 00 <status>`).
    private mutating func notifyCompleted(_ readerStatus: UInt16) -> ReaderAction {
        result.readerStatus = readerStatus
        let completed = AccessProtocolCompleted(readerStatus: .init(readerStatus))
        return notify(ChannelMessage(type: ChannelMessage.Kind.notification, id: ChannelMessage.Notification.accessProtocolCompleted,
                                     payload: completed.encoded()))
    }

    /// The GENERAL_ERROR event (`01 01 00`, unknown error), as the reference reader's `failure_process`.
    private mutating func notifyFailure() -> ReaderAction {
        notify(ChannelMessage(type: ChannelMessage.Kind.notification, id: ChannelMessage.Notification.event,
                              payload: BLEEvent.generalError(.unknown).encoded()))
    }

    private mutating func notify(_ plain: ChannelMessage) -> ReaderAction {
        let message = sealedForBLE(plain)
        result.closingMessage = message
        step = .notifying
        return .notify(message)
    }

    // MARK: - Link layer

    private mutating func send(_ command: CommandAPDU, _ label: String, chunk: Int? = nil) -> ReaderAction {
        currentLabel = label
        var parts = CommandChainer.split(command, chunk: chunk ?? configuration.commandChunk)
        let first = parts.removeFirst()
        pendingParts = parts
        return transmitPart(first)
    }

    private mutating func transmitPart(_ part: CommandAPDU, label: String? = nil) -> ReaderAction {
        var part = part
        if configuration.faults.contains(.omitLe) { part.le = nil }
        let bytes = part.bytes
        lastLabel = label ?? currentLabel
        result.transcript.append(TranscriptEntry(direction: .command, bytes: bytes, label: lastLabel))
        return .transmit(bytes)
    }

    private func versionText(_ v: UInt16) -> String { String(format: "%04X", v) }
}
