import ByteCore
import Codecs
import Crypto
import Foundation
import OfflineUnlock

/// A reader group the credential trusts: its group id and group public key — the reader's own
/// signing key, or a reader issuer CA's key (`issuerCA`) whose certificates name the readers' keys.
/// As the official phone does, a reader of a trusted group may present a certificate (LOAD CERT or
/// AUTH1 `90`); it must verify under a key trusted for the group (CAs first), AUTH1 is then checked
/// with its subject key, and that group key is the key derivation's "reader group key". A group
/// may be trusted both ways (a reader key for readers without a certificate, a CA for those with one).
public struct TrustedReader: Equatable, Sendable {
    /// 16 bytes.
    public var groupID: [UInt8]
    /// 65 bytes `04‖X‖Y`.
    public var publicKey: [UInt8]
    /// The key is a reader issuer CA: a reader of this group must present a certificate it signed
    /// (the CA key itself signs no AUTH1).
    public var issuerCA: Bool

    public init(groupID: [UInt8], publicKey: [UInt8], issuerCA: Bool = false) {
        self.groupID = groupID
        self.publicKey = publicKey
        self.issuerCA = issuerCA
    }
}

/// Deliberate misbehaviour, for tests and for `lockbench credential serve --fault …`: each one
/// makes a real transaction fail the way a broken or hostile credential would.
public struct CredentialFaults: OptionSet, Sendable, Hashable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Sign something other than the AUTH1 transcript.
    public static let wrongSignature = CredentialFaults(rawValue: 1 << 0)
    /// Flip a bit of the AUTH1 response ciphertext.
    public static let corruptCiphertext = CredentialFaults(rawValue: 1 << 1)
    /// Reuse the first transaction's ephemeral key in every later AUTH0 response (a replay).
    public static let replayEphemeralKey = CredentialFaults(rawValue: 1 << 2)
    /// Answer AUTH0 with a truncated TLV.
    public static let malformedAuth0 = CredentialFaults(rawValue: 1 << 3)
    /// Show the reader a SELECT answer listing only the oldest version while deriving keys over the
    /// true one: what a man in the middle that strips versions produces.
    public static let stripVersions = CredentialFaults(rawValue: 1 << 4)
    /// Accept the reader's AUTH1 signature without checking it.
    public static let skipReaderCheck = CredentialFaults(rawValue: 1 << 5)
    /// Flip a bit of the step-up ENVELOPE response ciphertext.
    public static let corruptEnvelope = CredentialFaults(rawValue: 1 << 6)
    /// AUTH0 answer with the device key under tag `88` instead of `86` (nfc_rdr_neg_auth0_wrong_value).
    public static let auth0WrongTag = CredentialFaults(rawValue: 1 << 7)
    /// AUTH0 answer with an extra unknown tag `AA 03 010203` (nfc_rdr_neg_auth0_extra_tag): a
    /// tolerant reader accepts it.
    public static let auth0ExtraTag = CredentialFaults(rawValue: 1 << 8)
    /// AUTH1 answer with the device signature under tag `88` instead of `9E` (nfc_rdr_neg_auth1_wrong_value).
    public static let auth1WrongSignatureTag = CredentialFaults(rawValue: 1 << 9)
    /// AUTH1 answer with an extra unknown tag `AA 03 010203` (nfc_rdr_neg_auth1_extra_tag): a
    /// tolerant reader accepts it.
    public static let auth1ExtraTag = CredentialFaults(rawValue: 1 << 10)

    /// End a successful EXCHANGE answer `00 02 90 00` (LockBench's phone before 2026-11-26) instead of `00 02 00 00`.
    public static let legacyExchangeStatus = CredentialFaults(rawValue: 1 << 11)
    /// Answer AUTH0/AUTH1/EXCHANGE whatever their P1 P2 (NFC_UD_NEG_AUTH0_WRONG_P1P2 expects an error).
    public static let ignoreP1P2 = CredentialFaults(rawValue: 1 << 12)
    /// Answer whole whatever the Le (NFC_UD_AUTH0_RESPONSE_CHAINING expects 61xx after Le 3C).
    public static let ignoreLe = CredentialFaults(rawValue: 1 << 13)
    /// Apply atomic (8C 01 01) mailbox writes at once (NFC_UD_EXCHANGE_WRITE_REQUEST expects them staged).
    public static let commitAtomicWrites = CredentialFaults(rawValue: 1 << 14)
    /// Answer SELECT with an FCI whose 84 names `A000000909ACCE55FE` (RD-NFC-SELECT-1.2: the reader must stop).
    public static let fciOtherAID = CredentialFaults(rawValue: 1 << 15)
    /// Announce documents (5E) but answer ENVELOPE with none (NFC_RDR_NEG_STEPUP_AD_NO_DATA_ELEMENTS).
    public static let emptyDeviceResponse = CredentialFaults(rawValue: 1 << 16)
    /// Answer AUTH0 naming a version the phone does not list (UD-BLE-AUTH0-1.1 expects an error).
    public static let acceptUnlistedVersion = CredentialFaults(rawValue: 1 << 17)
    /// Refuse SELECT (6985) once initiated over BLE (UD-BLE-AUTH0-1.2 and 2.1 SELECT between AUTH0s).
    public static let refuseSelectOnBLE = CredentialFaults(rawValue: 1 << 18)
    /// In its RKE flow, open with `02 06` but never send the RKE request (BLERKE_UD_EXPEDITED_STANDARD_PHASE
    /// and BLERKE_UD_STEPUP_PHASE wait for it).
    public static let noRKERequest = CredentialFaults(rawValue: 1 << 19)

    /// Check no reader certificate: one that decodes is taken as it is (AUTH1 checked with its
    /// subject key, whoever signed it), one that does not is ignored (AUTH1 checked with the group
    /// key, even a CA's). The negative certificate cases expect a refusal instead.
    public static let skipCertificateCheck = CredentialFaults(rawValue: 1 << 20)
    /// Refuse every extended-length command (`00 Lc1 Lc2`, `00 Le1 Le2`) with `6700`, as LockBench's
    /// phone did before 2026-11-27 (NFC_UD_EXCHANGE_WITH_EXTENDED_LENGTH sends GET RESPONSE `00 C0 00 00 00 01 13`).
    public static let shortAPDUsOnly = CredentialFaults(rawValue: 1 << 21)

    public static let names: [(String, CredentialFaults)] = [
        ("wrong-signature", .wrongSignature), ("corrupt-ciphertext", .corruptCiphertext),
        ("replay-ephemeral", .replayEphemeralKey), ("malformed-auth0", .malformedAuth0),
        ("strip-versions", .stripVersions), ("skip-reader-check", .skipReaderCheck),
        ("corrupt-envelope", .corruptEnvelope), ("auth0-wrong-tag", .auth0WrongTag), ("auth0-extra-tag", .auth0ExtraTag),
        ("auth1-wrong-signature-tag", .auth1WrongSignatureTag), ("auth1-extra-tag", .auth1ExtraTag),
        ("legacy-exchange-status", .legacyExchangeStatus), ("ignore-p1p2", .ignoreP1P2), ("ignore-le", .ignoreLe),
        ("commit-atomic-writes", .commitAtomicWrites), ("fci-other-aid", .fciOtherAID),
        ("empty-device-response", .emptyDeviceResponse), ("accept-unlisted-version", .acceptUnlistedVersion),
        ("refuse-select-on-ble", .refuseSelectOnBLE), ("no-rke-request", .noRKERequest), ("skip-certificate-check", .skipCertificateCheck),
        ("short-apdus-only", .shortAPDUsOnly),
    ]

    /// The unknown tag the extra-tag faults add (the public test harness's `UNKNOWN_TAG`).
    public static let extraTag = TLV(0xAA, [0x01, 0x02, 0x03])
}

/// Whether the credential needs the step-up SELECT before ENVELOPE (signaling bitmap bit 2).
public enum StepUpSelectPolicy: String, Sendable, CaseIterable {
    /// Bit 2 clear; ENVELOPE is accepted with or without the SELECT (the public reference device).
    case optional
    /// Bit 2 set; ENVELOPE without the SELECT is refused `6985`.
    case required
}

/// How a credential behaves.
public struct CredentialConfiguration: Sendable {
    /// The credential's long-term key (the key its access documents bind).
    public var signingKey: P256.Signing.PrivateKey
    public var trustedReaders: [TrustedReader]
    /// Each `Document` (CBOR) with docType "aliro-a".
    public var accessDocuments: [[UInt8]]
    /// Each `Document` (CBOR) with docType "aliro-r".
    public var revocationDocuments: [[UInt8]]
    /// Versions offered in SELECT, as listed.
    public var versions: [UInt16]
    /// The radio this credential answers on (`5E` NFC/socket, `C3` BLE in the key derivation).
    public var interface: RadioInterface
    /// Refuse a missing Le on AUTH0/AUTH1/EXCHANGE/ENVELOPE, or an Le on CONTROL FLOW, with 6701.
    public var strictLe: Bool
    /// Largest data part per response; longer answers are chained with 61xx (256 + SW = 258 bytes
    /// fits libnfc's 263).
    public var responseChunk: Int
    public var fastCapacity: Int
    public var faults: CredentialFaults
    /// `91 14` / `92 14` timestamps (ASCII `YYYY-MM-DDTHH:MM:SSZ`) or 20 zero bytes; nil = the tag
    /// is not sent in the AUTH1 answer (the FAST cryptogram then carries zeros).
    public var credentialTimestamp: [UInt8]?
    public var revocationTimestamp: [UInt8]?
    /// Announce and enforce the step-up SELECT (bitmap bit 2).
    public var stepUpSelect: StepUpSelectPolicy
    /// The mailbox the reader may read and write in EXCHANGE; nil = none (reads answer `6A82`).
    public var mailbox: Mailbox?
    /// Whose behaviour to copy where the public facts leave a choice (`PhoneProfile.apply` sets it).
    public var profile: PhoneProfile = .lockbench
    /// The time reader certificates are checked at.
    public var now: @Sendable () -> Date = { Date() }

    public init(signingKey: P256.Signing.PrivateKey, trustedReaders: [TrustedReader], accessDocuments: [[UInt8]] = [],
                revocationDocuments: [[UInt8]] = [], versions: [UInt16] = [ProtocolVersion.v1_0], interface: RadioInterface = .nfc, strictLe: Bool = true,
                responseChunk: Int = ResponseChainer.defaultChunk, fastCapacity: Int = 16, faults: CredentialFaults = [],
                credentialTimestamp: [UInt8]? = Auth1ResponsePlaintext.zeroTimestamp,
                revocationTimestamp: [UInt8]? = Auth1ResponsePlaintext.zeroTimestamp,
                stepUpSelect: StepUpSelectPolicy = .optional, mailbox: Mailbox? = nil) {
        self.signingKey = signingKey
        self.trustedReaders = trustedReaders
        self.accessDocuments = accessDocuments
        self.revocationDocuments = revocationDocuments
        self.versions = versions
        self.interface = interface
        self.strictLe = strictLe
        self.responseChunk = responseChunk
        self.fastCapacity = fastCapacity
        self.faults = faults
        self.credentialTimestamp = credentialTimestamp
        self.revocationTimestamp = revocationTimestamp
        self.stepUpSelect = stepUpSelect
        self.mailbox = mailbox
    }

    /// This configuration with `91` / `92` set to the signed times of the newest access and
    /// revocation document it carries (zeros for a kind it carries none of): what a phone tells
    /// the lock so that a lock holding older documents steps up to fetch these
    /// (docs/protocol.md §9). Documents that do not parse are left out.
    ///
    /// With `readerGroup` (the reader's group, learnt from AUTH0), `91` is the newest of the
    /// documents naming that group, when any does: a document for another door (an approval's
    /// unlock command) is one this lock never keeps, so counting it would make the lock step up
    /// on every tap.
    public func withDocumentTimestamps(readerGroup: [UInt8]? = nil) -> CredentialConfiguration {
        var c = self
        let parsed = accessDocuments.compactMap { try? AccessDocument(parsing: $0) }
        let forThisReader = readerGroup.map { g in parsed.filter { $0.access.readers.contains { $0.groupID == g } } } ?? []
        let access = (forThisReader.isEmpty ? parsed : forThisReader).map(\.validity.signed).max()
        let revocation = revocationDocuments.compactMap { try? RevocationDocument(parsing: $0).issued }.max()
        c.credentialTimestamp = access.map(SignedTimestamps.field) ?? Auth1ResponsePlaintext.zeroTimestamp
        c.revocationTimestamp = revocation.map(SignedTimestamps.field) ?? Auth1ResponsePlaintext.zeroTimestamp
        return c
    }

    /// The `5E` bitmap: documents held, step-up SELECT required, mailbox state.
    public var signaling: SignalingBitmap {
        var s: SignalingBitmap = []
        if !accessDocuments.isEmpty { s.insert(.accessDocumentAvailable) }
        if !revocationDocuments.isEmpty { s.insert(.revocationDocumentAvailable) }
        if stepUpSelect == .required { s.insert(.stepUpSelectRequired) }
        if let mailbox {
            s.formUnion([.mailboxReadable, .mailboxWritable])
            if mailbox.hasData { s.insert(.mailboxHasData) }
        }
        return s
    }
}

/// The phone side's state machine: answers SELECT, AUTH0, AUTH1, step-up (SELECT step-up AID,
/// ENVELOPE), EXCHANGE, CONTROL FLOW and GET RESPONSE. Over BLE it opens with "initiate access
/// protocol", which stands for SELECT, so AUTH0 may come first, and it reads the lock's completed
/// notification and events. A value, not Sendable: `CredentialSession` holds it in a `Mutex`, so
/// radios on any thread reach it one command at a time.
///
/// Command dispatch is table-driven: INS → handler; unknown INS → 6D00, a command out of
/// sequence → 6985, undecodable APDU → 6700. Chained commands are assembled first, long
/// responses are handed out with 61xx and GET RESPONSE.
struct CredentialStateMachine {
    public let configuration: CredentialConfiguration
    /// Kpersistent per reader id (32 bytes), learnt in standard transactions, kept across them.
    public var fastCache: FastCache {
        mutating get {
            settleFastKey()
            return cache
        }
    }
    private var cache: FastCache
    /// The Kpersistent of the last AUTH1, derived once the answer has gone (the reader needs it
    /// only next time): before the next command, a reset, or a look at `fastCache`.
    private var unsettledFastKey: (k: [UInt8], context: TranscriptContext)?

    private mutating func settleFastKey() {
        guard let u = unsettledFastKey else { return }
        unsettledFastKey = nil
        cache.store(KeySchedule.persistentKey(k: u.k, context: u.context, credentialKey: publicKey), for: u.context.readerID)
    }
    private let random: RandomSource
    private let signer: MessageSigner
    public let publicKey: [UInt8]

    /// What the last transaction ended with (for tests and logs): the reader status from
    /// EXCHANGE, or the CONTROL FLOW S2 byte.
    public private(set) var lastReaderStatus: UInt16?
    public private(set) var lastControlFlow: ControlFlow?
    /// The reader identifier (group ‖ sub) the last AUTH0 named: which door this was.
    public private(set) var lastReaderID: [UInt8]?
    public private(set) var transactions = 0

    private enum State {
        case idle
        case selected
        case auth0Done(Auth0State)
        case authenticated(channel: SecureChannel, stepUpSK: [UInt8]?)
        case done
    }

    private struct Auth0State {
        var context: TranscriptContext
        var ephemeral: P256.KeyAgreement.PrivateKey
        var fast: FastKeys?
        /// What AUTH1 needs that AUTH0 already fixed, computed while the reader prepares AUTH1
        /// (`answerSent`), for this context.
        var ahead: (context: TranscriptContext, work: Auth1Work)?
        /// The compressed reader certificate LOAD CERT brought (checked at AUTH1); nil: none sent.
        var certificate: [UInt8]?
    }

    /// Who signed AUTH1 and the group key of the key derivation, from the entries trusted for the
    /// reader's group. With a certificate (AUTH1 `90`, else LOAD CERT): the first entry — CAs first —
    /// it decodes and verifies under (the official phone's `set_cert_and_verify`; validity too, see
    /// `ReaderCertificate.verify`) gives the group key, and its subject key must have signed. Without
    /// one: the first entry that is not a CA. nil: refuse.
    private func readerKeys(_ readerID: [UInt8], certificate: [UInt8]?) -> (signer: [UInt8], groupKey: [UInt8])? {
        let group = Array(readerID.prefix(16))
        let entries = configuration.trustedReaders.filter { $0.groupID == group }
        let plain = entries.first { !$0.issuerCA }
        guard let certificate else { return plain.map { ($0.publicKey, $0.publicKey) } }
        guard let cert = try? ReaderCertificate(parsingCompressed: certificate) else {
            // Skipping the check, an undecodable certificate is as none.
            return configuration.faults.contains(.skipCertificateCheck) ? (entries.first ?? plain).map { ($0.publicKey, $0.publicKey) } : nil
        }
        let byCAFirst = entries.filter(\.issuerCA) + entries.filter { !$0.issuerCA }
        if configuration.faults.contains(.skipCertificateCheck), let first = byCAFirst.first { return (cert.subjectPublicKey, first.publicKey) }
        for entry in byCAFirst where (try? cert.verify(issuerPublicKey: entry.publicKey, at: configuration.now())) != nil {
            return (cert.subjectPublicKey, entry.publicKey)
        }
        return nil
    }

    /// K, the volatile keys and the device signature over the transcript: all fixed once AUTH0
    /// is answered (the signature is released only after the reader's verifies, in AUTH1).
    private struct Auth1Work {
        var k: [UInt8]
        var keys: VolatileKeys
        var signature: [UInt8]
    }

    private func auth1Work(_ a: Auth0State, context ctx: TranscriptContext) throws -> Auth1Work {
        let k = KeySchedule.sharedK(z: try Primitives.ecdh(privateKey: a.ephemeral, peerPublicKey: ctx.readerEphemeralKey),
                                    transactionID: ctx.transactionID)
        let toSign = configuration.faults.contains(.wrongSignature) ? Array("not the transcript".utf8) : ctx.signedData(reader: false)
        return Auth1Work(k: k, keys: KeySchedule.volatileKeys(k: k, context: ctx), signature: signer(toSign))
    }

    private var state: State = .idle
    /// The `A5` bound into the keys: SELECT's answer, or the BLE initiate's.
    private var boundFCI: [UInt8]?
    /// Over BLE: BleSK of this transaction once the keys exist, and the transport's versions.
    private var bleSK: [UInt8]?
    private var bleMessaging: BLESecureMessaging?
    private var transportVersions: (supported: [UInt16], selected: UInt16)?
    /// The lock's completed notification of the last BLE transaction, as opened; or why it did not open.
    public private(set) var lastCompleted: AccessProtocolCompleted?
    public private(set) var lastCompletedProblem: String?
    /// The last event (`02 00`) the lock sent.
    public private(set) var lastEvent: BLEEvent?
    /// The RKE flow (`ble phone --rke`): open with `02 06`, and after the lock's completed
    /// notification send the RKE request with this action (sealed under BleSKDevice).
    public var remoteAction: RemoteAction?
    /// The lock's "reader status changed" after the RKE request, as opened; or why it did not open.
    public private(set) var lastStatusChanged: ReaderStatusChanged?
    public private(set) var lastStatusChangedProblem: String?
    /// The RKE request went out in this transaction.
    public private(set) var sentRemoteRequest = false
    private var stepUpSelected = false
    /// The step-up channel, opened by the step-up SELECT or (when the SELECT is optional) by the
    /// first ENVELOPE.
    private var stepUpChannel: SecureChannel?
    private var assembler = CommandAssembler()
    private var chainer: ResponseChainer
    private var replayedEphemeral: P256.KeyAgreement.PrivateKey?
    /// The next AUTH0's ephemeral key, made ahead (at creation, then whenever the session resets)
    /// as a phone can: the scalar multiplication need not wait for the reader.
    private var preparedEphemeral: PreparedEphemeralKey?

    public init(configuration: CredentialConfiguration, fastCache: FastCache? = nil,
                random: RandomSource = SystemRandom(), signer: MessageSigner? = nil) {
        self.configuration = configuration
        self.cache = fastCache ?? FastCache(capacity: configuration.fastCapacity)
        self.random = random
        let key = configuration.signingKey
        self.signer = signer ?? { Primitives.sign($0, with: key) }
        self.publicKey = key.publicBytes
        self.chainer = ResponseChainer(chunk: configuration.responseChunk)
        preparedEphemeral = PreparedEphemeralKey(random: random)
    }

    /// While the reader works on the last answer: after an AUTH0 answered without a FAST
    /// cryptogram (so AUTH1 comes next) from a trusted reader, AUTH1's ECDH, keys and signature
    /// now rather than then; after AUTH1, Kpersistent.
    public mutating func answerSent() {
        settleFastKey()
        if case .auth0Done(var a) = state, a.fast == nil, a.ahead == nil,
           trustedReader(a.context.readerID) != nil,
           let work = try? auth1Work(a, context: a.context) {
            a.ahead = (a.context, work)
            state = .auth0Done(a)
        }
    }

    /// The trusted reader group a reader id (group ‖ sub id) belongs to, if any.
    private func trustedReader(_ readerID: [UInt8]) -> TrustedReader? {
        let groupID = Array(readerID.prefix(16))
        return configuration.trustedReaders.first { $0.groupID == groupID }
    }

    /// The mailbox operations of the last EXCHANGE, and which channel it arrived on.
    public private(set) var lastMailboxOperations: [MailboxOperation] = []
    /// The DeviceRequest of the last ENVELOPE that opened (what the reader asked for).
    public private(set) var lastDeviceRequest: DeviceRequest?
    public private(set) var lastExchangeChannel: ExchangeChannel?

    typealias ExchangeChannel = CredentialSession.ExchangeChannel

    public mutating func reset() {
        settleFastKey()
        configuration.mailbox?.endTransaction()
        if preparedEphemeral == nil { preparedEphemeral = PreparedEphemeralKey(random: random) }
        state = .idle
        boundFCI = nil
        bleSK = nil
        bleMessaging = nil
        stepUpSelected = false
        stepUpChannel = nil
        assembler.reset()
        chainer.reset()
    }

    // MARK: - BLE messages

    /// "Initiate access protocol" with the `A5` the reference phone builds (type `0000`, the
    /// versions, no `7F66`): `02 05 00 0C 00 0A A5 08 80 02 00 00 5C 02 01 00` for `0100`. It
    /// stands for SELECT's answer: AUTH0 may follow, binding these bytes and `C3`.
    public mutating func openingMessage(transportVersions: (supported: [UInt16], selected: UInt16)?) -> ChannelMessage? {
        reset()
        let initiate = InitiateAccessProtocol(versions: configuration.versions)
        self.transportVersions = transportVersions
        lastCompleted = nil
        lastCompletedProblem = nil
        lastEvent = nil
        lastStatusChanged = nil
        lastStatusChangedProblem = nil
        sentRemoteRequest = false
        boundFCI = initiate.proprietaryTLV
        state = .selected
        return initiate.message(remoteAction: remoteAction != nil)
    }

    public mutating func received(_ message: ChannelMessage) -> Bool {
        guard message.type == ChannelMessage.Kind.notification else { return false }
        switch message.id {
        case ChannelMessage.Notification.accessProtocolCompleted:
            do {
                lastCompleted = try AccessProtocolCompleted(parsing: try openBLE(message))
            } catch {
                lastCompletedProblem = "\(message): \(error)"
            }
            // The RKE flow goes on: the lock may step up (ENVELOPE, EXCHANGE on the step-up keys)
            // before the request (BLERKE_UD_STEPUP_PHASE), so the channel stays authenticated.
            if remoteAction == nil { state = .done }
            return remoteAction == nil
        case ChannelMessage.Notification.readerStatusChanged:
            do {
                lastStatusChanged = try ReaderStatusChanged(parsing: try openBLE(message))
            } catch {
                lastStatusChangedProblem = "\(message): \(error)"
            }
            state = .done
            return true
        case ChannelMessage.Notification.event:
            guard let event = try? BLEEvent(parsing: try openBLE(message)) else { return false }
            lastEvent = event
            if case .generalError = event { state = .done; return true }
            return false
        default:
            return false
        }
    }

    public var readerReportedUnsecured: Bool? {
        if remoteAction != nil { return lastStatusChanged.map { $0.readerStatus == .unsecured || $0.readerStatus == .startedUnsecure } }
        return lastCompleted.map { $0.readerStatus == .unsecured }
    }

    public var hasFollowUp: Bool { remoteAction != nil && !sentRemoteRequest }
    public mutating func followUp() -> ChannelMessage? { remoteRequest() }

    /// In the RKE flow, once the completed notification opened: the RKE request `02 04`
    /// (`00 01 <action>`) sealed under BleSKDevice, once per transaction; nil otherwise.
    public mutating func remoteRequest() -> ChannelMessage? {
        guard let action = remoteAction, !sentRemoteRequest, lastCompleted != nil,
              !configuration.faults.contains(.noRKERequest), let sealed = sealForReader(RKERequest(action: action).message) else { return nil }
        sentRemoteRequest = true
        return sealed
    }

    /// `message` sealed under this transaction's BleSKDevice at the phone's next counter; nil
    /// before BleSK exists.
    public mutating func sealForReader(_ message: ChannelMessage) -> ChannelMessage? {
        guard let bleSK else { return nil }
        if bleMessaging == nil { bleMessaging = BLESecureMessaging(role: .device, bleSK: bleSK, transportVersions: transportVersions) }
        return try? bleMessaging!.seal(message)
    }

    /// The plaintext of a lock's message: opened under BleSKReader once BleSK exists, else as sent.
    private mutating func openBLE(_ message: ChannelMessage) throws(ProtocolError) -> [UInt8] {
        guard let bleSK else { return message.payload }
        if bleMessaging == nil { bleMessaging = BLESecureMessaging(role: .device, bleSK: bleSK, transportVersions: transportVersions) }
        return try bleMessaging!.open(message)
    }

    /// The true FCI proprietary TLV (bound into keys) and the one shown to the reader.
    private var selectResponse: SelectResponse {
        configuration.profile.announcesSizes
            ? SelectResponse(versions: configuration.versions, maxCommand: UInt16(CommandAPDU.maxShortData),
                             maxResponse: UInt16(configuration.responseChunk))
            : SelectResponse(versions: configuration.versions)
    }

    public mutating func respond(to bytes: [UInt8]) -> [UInt8] {
        settleFastKey()
        let command: CommandAPDU
        do {
            command = try CommandAPDU(parsing: bytes)
        } catch {
            return StatusWord.wrongLength.bytes
        }
        if command.extendedLength, configuration.faults.contains(.shortAPDUsOnly) { return StatusWord.wrongLength.bytes }
        // GET RESPONSE continues a response chain; an extended Le (275 in NFC_UD_EXCHANGE_WITH_EXTENDED_LENGTH)
        // still gets at most one short part (responseChunk ≤ 256): Le is a maximum.
        if command.cla & 0xEF == 0x00, command.ins == Instruction.getResponse {
            guard chainer.hasPending else { return StatusWord.conditionsNotSatisfied.bytes }
            return chainer.next(le: command.le ?? 256).bytes
        }
        chainer.reset()
        let whole: CommandAPDU
        do {
            switch try assembler.feed(command) {
            case .needMore: return StatusWord.success.bytes
            case .complete(let c): whole = c
            }
        } catch {
            return (error.code == .chainMismatch ? StatusWord.lastCommandOfChainExpected : StatusWord.wrongLength).bytes
        }
        let (data, status) = dispatch(whole)
        // Le bounds the first part; the rest follows with 61xx and GET RESPONSE
        // (NFC_UD_AUTH0_RESPONSE_CHAINING). No Le (a tolerant phone) reads as 256.
        let le = configuration.faults.contains(.ignoreLe) ? 256 : whole.le ?? 256
        return chainer.start(data, status: status, le: le).bytes
    }

    // MARK: - Dispatch table

    private struct Handler {
        var cla: UInt8
        /// The P1 P2 the command must carry (`00 00` for every Aliro command but SELECT, which
        /// checks its own): anything else is `6A86` (NFC_UD_NEG_AUTH0_WRONG_P1P2, _AUTH1_WRONG_P1P2).
        var p1p2: UInt16? = 0x0000
        /// nil: Le must be absent; true: Le must be present.
        var needsLe: Bool?
        var run: @Sendable (inout CredentialStateMachine, CommandAPDU) -> ([UInt8], StatusWord)
    }

    private static let handlers: [UInt8: Handler] = [
        Instruction.select: Handler(cla: 0x00, p1p2: nil, needsLe: true) { $0.select($1) },
        Instruction.auth0: Handler(cla: 0x80, needsLe: true) { $0.auth0($1) },
        Instruction.loadCert: Handler(cla: 0x80, needsLe: true) { $0.loadCert($1) },
        Instruction.auth1: Handler(cla: 0x80, needsLe: true) { $0.auth1($1) },
        Instruction.exchange: Handler(cla: 0x80, needsLe: true) { $0.exchange($1) },
        Instruction.controlFlow: Handler(cla: 0x80, needsLe: nil) { $0.controlFlow($1) },
        Instruction.envelope: Handler(cla: 0x00, needsLe: true) { $0.envelope($1) },
    ]

    private mutating func dispatch(_ command: CommandAPDU) -> ([UInt8], StatusWord) {
        guard let handler = CredentialStateMachine.handlers[command.ins] else { return ([], .insNotSupported) }
        guard command.cla == handler.cla else { return ([], .claNotSupported) }
        if let p1p2 = handler.p1p2, UInt16(command.p1) << 8 | UInt16(command.p2) != p1p2,
           !configuration.faults.contains(.ignoreP1P2) { return ([], .incorrectP1P2) }
        if configuration.strictLe {
            if handler.needsLe == true && command.le == nil { return ([], .wrongLengthLe) }
            if handler.needsLe == nil && command.le != nil { return ([], .wrongLengthLe) }
        }
        return handler.run(&self, command)
    }

    // MARK: - Handlers

    private mutating func select(_ c: CommandAPDU) -> ([UInt8], StatusWord) {
        guard c.p1 == 0x04, c.p2 == 0x00 else { return ([], .incorrectP1P2) }
        if configuration.faults.contains(.refuseSelectOnBLE), configuration.interface == .ble, boundFCI != nil {
            return ([], .conditionsNotSatisfied)
        }
        if c.data == AID.expedited {
            reset()
            state = .selected
            boundFCI = selectResponse.proprietaryTLV
            var shown = selectResponse
            if configuration.faults.contains(.stripVersions), let oldest = configuration.versions.min() {
                shown = SelectResponse(versions: [oldest], maxCommand: shown.maxCommand, maxResponse: shown.maxResponse)
            }
            if configuration.faults.contains(.fciOtherAID) {
                shown = SelectResponse(aid: [0xA0, 0x00, 0x00, 0x09, 0x09, 0xAC, 0xCE, 0x55, 0xFE], versions: shown.versions,
                                       maxCommand: shown.maxCommand, maxResponse: shown.maxResponse)
            }
            return (shown.encoded(), .success)
        }
        if c.data == AID.stepUp {
            guard configuration.profile.knowsStepUpSelect else { return ([], .insNotSupported) }
            guard case .authenticated(_, let sk?) = state else { return ([], .conditionsNotSatisfied) }
            if stepUpChannel == nil { stepUpChannel = Self.stepUpChannel(sk) }
            stepUpSelected = true
            return (StepUpSelectResponse.encoded(), .success)
        }
        return ([], .fileNotFound)
    }

    private mutating func auth0(_ c: CommandAPDU) -> ([UInt8], StatusWord) {
        // Over BLE the reference phone takes AUTH0 in any state once initiated (`user_device.py`
        // waives SELECT_DONE on BLE): UD-BLE-AUTH0-1.3 sends two in one session.
        let initiatedOverBLE = configuration.interface == .ble && boundFCI != nil
        if case .selected = state {} else if !initiatedOverBLE { return ([], .conditionsNotSatisfied) }
        bleSK = nil
        bleMessaging = nil
        let cmd: Auth0Command
        do { cmd = try Auth0Command(parsing: c.data) } catch { return ([], .incorrectData) }
        guard configuration.versions.contains(cmd.version) || configuration.faults.contains(.acceptUnlistedVersion) else { return ([], configuration.profile.unsupportedVersion) }
        guard Primitives.isPoint(cmd.readerEphemeralKey) else { return ([], .incorrectData) }
        transactions += 1
        let ephemeral: P256.KeyAgreement.PrivateKey
        let ephemeralPublic: [UInt8]
        if configuration.faults.contains(.replayEphemeralKey), let old = replayedEphemeral {
            ephemeral = old
            ephemeralPublic = old.publicBytes
        } else {
            let prepared = preparedEphemeral ?? PreparedEphemeralKey(random: random)
            preparedEphemeral = nil
            ephemeral = prepared.key
            ephemeralPublic = prepared.publicBytes
            if configuration.faults.contains(.replayEphemeralKey) { replayedEphemeral = ephemeral }
        }
        lastReaderID = cmd.readerID
        let groupKey = trustedReader(cmd.readerID)?.publicKey
        let context = TranscriptContext(readerGroupKey: groupKey ?? [UInt8](repeating: 0, count: 65), readerID: cmd.readerID,
                                        interfaceByte: configuration.interface == .ble ? 0xC3 : 0x5E, version: cmd.version,
                                        readerEphemeralKey: cmd.readerEphemeralKey, transactionID: cmd.transactionID,
                                        flags: cmd.flags, policy: cmd.policy,
                                        fciProprietary: boundFCI ?? selectResponse.proprietaryTLV,
                                        deviceEphemeralKey: ephemeralPublic)
        var fast: FastKeys?
        var cryptogram: [UInt8]?
        if cmd.flags & Auth0Command.flagFast != 0 {
            if groupKey != nil, let persistent = cache.lookup(cmd.readerID) {
                let keys = KeySchedule.fastKeys(persistent: persistent, context: context, credentialKey: publicKey)
                fast = keys
                bleSK = keys.bleSK
                cryptogram = KeySchedule.cryptogram(keys, plaintext: Auth1ResponsePlaintext.cryptogramPlaintext(
                    signaling: configuration.signaling, credentialTimestamp: configuration.credentialTimestamp,
                    revocationTimestamp: configuration.revocationTimestamp))
            } else {
                cryptogram = random.bytes(64)
            }
        }
        state = .auth0Done(Auth0State(context: context, ephemeral: ephemeral, fast: fast))
        if configuration.faults.contains(.malformedAuth0) {
            return ([0x86, 0x41, 0x04, 0x01], .success)
        }
        var answer = Auth0Response(deviceEphemeralKey: ephemeralPublic, cryptogram: cryptogram).encoded()
        if configuration.faults.contains(.auth0WrongTag) { answer[0] = 0x88 }
        if configuration.faults.contains(.auth0ExtraTag) { answer += CredentialFaults.extraTag.encoded() }
        return (answer, .success)
    }

    /// LOAD CERT `80 D1 00 00 Lc <compressed certificate> 00` between AUTH0 and AUTH1 (chained
    /// when long). Answered 9000 whatever the certificate, as the official phone does
    /// (NFC_UD_NEG_STANDARD_CERT_IN_LOAD_CERT_WITH_CHAINING_INCORRECT_SIGNATURE requires the 9000);
    /// a bad one is refused at AUTH1.
    private mutating func loadCert(_ c: CommandAPDU) -> ([UInt8], StatusWord) {
        guard case .auth0Done(var a) = state else { return ([], .conditionsNotSatisfied) }
        // Bounded: a compressed certificate is at most `maxCompressed` bytes (chains stop there too).
        guard !c.data.isEmpty, c.data.count <= ReaderCertificate.maxCompressed else { return ([], .wrongLength) }
        a.certificate = c.data
        state = .auth0Done(a)
        return ([], .success)
    }

    private mutating func auth1(_ c: CommandAPDU) -> ([UInt8], StatusWord) {
        guard case .auth0Done(let a) = state else { return ([], .conditionsNotSatisfied) }
        let cmd: Auth1Command
        do { cmd = try Auth1Command(parsing: c.data) } catch { return ([], .incorrectData) }
        var ctx = a.context
        // An untrusted group, or a certificate that does not decode or verify, is refused 6982
        // (the official phone: 6400 for decoding, 6982 for verification; the cases take any error).
        guard let (signerKey, groupKey) = readerKeys(ctx.readerID, certificate: cmd.certificate ?? a.certificate) else {
            state = .done
            return ([], .securityStatusNotSatisfied)
        }
        ctx.readerGroupKey = groupKey
        if !configuration.faults.contains(.skipReaderCheck),
           !Primitives.verifyRaw(signature: cmd.signature, message: ctx.signedData(reader: true), publicKey: signerKey) {
            state = .done
            return ([], .securityStatusNotSatisfied)
        }
        let work: Auth1Work
        if let ahead = a.ahead, ahead.context == ctx {
            work = ahead.work
        } else {
            do { work = try auth1Work(a, context: ctx) } catch { return ([], .incorrectData) }
        }
        let k = work.k, keys = work.keys
        var channel = SecureChannel(role: .device, readerKey: keys.expeditedSKReader, deviceKey: keys.expeditedSKDevice)
        let identity: Auth1ResponsePlaintext.Identity = cmd.flags & Auth1Command.flagReturnPublicKey != 0
            ? .publicKey(publicKey) : .keySlot(KeySchedule.keySlot(publicKey))
        let plaintext = Auth1ResponsePlaintext(identity: identity, signature: work.signature, signaling: configuration.signaling,
                                               credentialTimestamp: configuration.credentialTimestamp,
                                               revocationTimestamp: configuration.revocationTimestamp)
        var plain = plaintext.encoded()
        if configuration.faults.contains(.auth1WrongSignatureTag), var t = try? TLV.parseAll(plain) {
            for i in t.indices where t[i].tag == Tag.Auth1.signature { t[i].tag = 0x88 }
            plain = t.encoded()
        }
        if configuration.faults.contains(.auth1ExtraTag) { plain += CredentialFaults.extraTag.encoded() }
        var sealed: [UInt8]
        do { sealed = try channel.seal(plain) } catch { return ([], .executionError) }
        if configuration.faults.contains(.corruptCiphertext) { sealed[0] ^= 0x01 }
        unsettledFastKey = (k, ctx)
        bleSK = keys.bleSK
        state = .authenticated(channel: channel, stepUpSK: keys.stepUpSK)
        return (sealed, .success)
    }

    /// EXCHANGE arrives on the expedited channel, or — after a step-up — on either channel (the
    /// public reference device expects the step-up one; other readers use the expedited one). The
    /// answer goes back on the channel the command came on.
    private mutating func exchange(_ c: CommandAPDU) -> ([UInt8], StatusWord) {
        var channel: SecureChannel
        var stepUpSK: [UInt8]? = nil
        switch state {
        case .authenticated(let ch, let sk):
            channel = ch
            stepUpSK = sk
        case .auth0Done(let a):
            // FAST: EXCHANGE straight after AUTH0 under the FAST keys.
            guard let fast = a.fast else { return ([], .conditionsNotSatisfied) }
            channel = SecureChannel(role: .device, readerKey: fast.expeditedSKReader, deviceKey: fast.expeditedSKDevice)
        default:
            return ([], .conditionsNotSatisfied)
        }
        var plain: [UInt8]? = nil
        var onStepUp = false
        if var su = stepUpChannel, su.lastReceivedCounter > 0, let p = try? su.open(c.data) {
            plain = p
            stepUpChannel = su
            onStepUp = true
        } else if let p = try? channel.open(c.data) {
            plain = p
        }
        guard let plain else {
            state = .done
            return ([], .incorrectSecureMessaging)
        }
        lastExchangeChannel = onStepUp ? .stepUp : .expedited
        var answer = ExchangeResponsePlaintext(status: .incorrectData)
        if let message = try? ExchangeCommandPlaintext(parsing: plain) {
            lastReaderStatus = message.readerStatus
            lastMailboxOperations = message.mailbox
            if message.mailbox.isEmpty && (message.atomic == nil || configuration.mailbox == nil) {
                answer = ExchangeResponsePlaintext()
            } else if let mailbox = configuration.mailbox {
                answer = mailbox.apply(message.mailbox, atomic: configuration.faults.contains(.commitAtomicWrites) ? false : message.atomic)
            } else {
                answer = ExchangeResponsePlaintext(status: .fileNotFound)
            }
        }
        var reply = answer.encoded()
        if configuration.faults.contains(.legacyExchangeStatus), answer.status == .success { reply.replaceSubrange((reply.count - 2)..., with: [0x90, 0x00]) }
        let sealed: [UInt8]
        do {
            if onStepUp, var su = stepUpChannel {
                sealed = try su.seal(reply)
                stepUpChannel = su
            } else {
                sealed = try channel.seal(reply)
            }
        } catch { return ([], .executionError) }
        state = .authenticated(channel: channel, stepUpSK: stepUpSK)
        return (sealed, .success)
    }

    private mutating func controlFlow(_ c: CommandAPDU) -> ([UInt8], StatusWord) {
        lastControlFlow = try? ControlFlow(parsing: c.data)
        state = .done
        return ([], .success)
    }

    private mutating func envelope(_ c: CommandAPDU) -> ([UInt8], StatusWord) {
        guard case .authenticated(_, let sk?) = state else { return ([], .conditionsNotSatisfied) }
        // Without bit 2 the reader may skip the step-up SELECT (the public reference device allows it).
        if !stepUpSelected && configuration.stepUpSelect == .required { return ([], .conditionsNotSatisfied) }
        var channel = stepUpChannel ?? Self.stepUpChannel(sk)
        let request: DeviceRequest
        do {
            let tlv = try TLV(parsing: c.data)
            guard tlv.tag == Tag.Envelope.data else { return ([], .incorrectData) }
            let sealed = try StepUpEnvelope.unwrap(c.data)
            let plain: [UInt8]
            do { plain = try channel.open(sealed) } catch { return ([], .incorrectSecureMessaging) }
            request = try DeviceRequest(parsing: plain)
            lastDeviceRequest = request
        } catch {
            return ([], .incorrectData)
        }
        var documents: [[UInt8]] = []
        if request.docTypes.contains(DocType.access) { documents += configuration.accessDocuments }
        if request.docTypes.contains(DocType.revocation) { documents += configuration.revocationDocuments }
        if configuration.faults.contains(.emptyDeviceResponse) { documents = [] }
        var sealed: [UInt8]
        do {
            sealed = try channel.seal(try DeviceResponse(documents: documents).encoded())
        } catch {
            return ([], .executionError)
        }
        if configuration.faults.contains(.corruptEnvelope) { sealed[sealed.count - 1] ^= 0x01 }
        stepUpChannel = channel
        return (StepUpEnvelope.wrapResponse(sealed), .success)
    }

    private static func stepUpChannel(_ stepUpSK: [UInt8]) -> SecureChannel {
        let keys = KeySchedule.stepUpKeys(stepUpSK: stepUpSK)
        return SecureChannel(role: .device, readerKey: keys.reader, deviceKey: keys.device)
    }
}
