import ByteCore

/// Why the engine said no: the documents, the lock's rules, its clock, its memory. `rawValue` is
/// the stable wire code (JSON, the audit log and scripts read it); `readerStatus` is the word the
/// closing EXCHANGE tells the credential. Reasons of the other layers live with them: the
/// protocol's `ProtocolFailure` and the transport's `TransportFailure` (AccessProtocol), the
/// lock's `LockReason` (Lock); `Refusal` joins the four. Each case has a test that produces it
/// from a real transaction (`DenyReasonTests`).
public enum DenyReason: String, Codable, Sendable, CaseIterable {
    /// A credential the lock holds no document for, which offered none: not this lock's
    /// credential. The reader does not tell it a failure but the lock's state (`reportsLockState`).
    case unknownCredential = "unknown_credential"
    /// The credential announced an access document (5E bit 0), the lock stepped up, and the
    /// answer held none (and the lock holds none for the key).
    case missingDocument = "missing_document"
    case untrustedIssuer = "untrusted_issuer"
    case digestMismatch = "digest_mismatch"
    case documentKeyMismatch = "document_key_mismatch"
    case notYetValid = "not_yet_valid"
    case expired = "expired"
    case validityTooLong = "validity_too_long"
    case wrongReader = "wrong_reader"
    case outsideSchedule = "outside_schedule"
    /// The document uses schedules (schedule entries, allow / deny schedule ids, weekly windows)
    /// and the lock is set not to evaluate them (policy `supportsSchedules` false): it cannot
    /// tell whether now is inside (NFC_RDR_NEG_STEPUP_AD_SCHEDULE_IN_ACCESS_RULE_AND_READER).
    case schedulesNotSupported = "schedules_not_supported"
    case revoked = "revoked"
    /// The document's validity iteration lies 8 or more below its issuer's AccessIteration (the
    /// highest the lock has seen from that issuer): Aliro 0.9.4 §7.2.3 makes it invalid.
    case iterationRemoved = "iteration_removed"
    /// The document's validity iteration is below the one the lock holds for the same credential
    /// from the same issuer: an old document brought back (Aliro 0.9.4 §7.2.3).
    case credentialIssuerRemoved = "credential_issuer_removed"
    case clockUntrusted = "clock_untrusted"
    /// The document's MSO asks for time verification (key 7 true) and the lock's clock is not
    /// trusted: such a document is accepted only under verified time and is no evidence of time
    /// itself (NFC_RDR_NEG_STEPUP_AD_TIME_VERIFICATION_REQUIRED, …_SCHEDULE_TIME_VERIFY_REQUIRED).
    case timeNotVerified = "time_not_verified"
    case clockRollback = "clock_rollback"
    /// The transaction id was used before (the engine's memory; the protocol's own replay
    /// check on ephemeral keys is `ProtocolFailure.replay`, same code).
    case replay = "replay"
    /// The negotiated version is not one the lock's policy allows, or a document's version.
    case unsupportedVersion = "unsupported_version"
    /// The version is below the policy's minimum or below what this credential used before.
    case downgrade = "downgrade"
    /// A presented document is not a document (bad CBOR, wrong docType).
    case malformedInput = "malformed_input"

    /// Whether the closing EXCHANGE reports the lock's state rather than a failure: for a
    /// credential that is simply not this lock's (`unknownCredential`) the reader says what it
    /// did — stayed secured, `0100` — as the official NFC_RDR_EXCHANGE_MAILBOX case requires of
    /// a phone the reader does not know that carries no document. A lock reports its bolt's
    /// real state (`EmulatedLock`); without one, `readerStatus` assumes it secured.
    public var reportsLockState: Bool { self == .unknownCredential }

    /// Whether the reader forgets the credential's Kpersistent: a credential whose document the
    /// issuer removed must not open by FAST on the key of an earlier grant; its next tap does AUTH1
    /// and steps up (NFC_RDR_STEPUP_FAST_KPERSISTENT_REMOVED, tap 5).
    public var dropsPersistentKey: Bool { self == .iterationRemoved || self == .credentialIssuerRemoved }

    /// The EXCHANGE reader status the lock sends for this reason.
    public var readerStatus: UInt16 {
        switch self {
        case .unknownCredential: return ReaderStatus.secured
        case .missingDocument: return ReaderStatus.keyNotFound
        case .expired, .notYetValid, .validityTooLong: return ReaderStatus.keyExpired
        case .untrustedIssuer, .revoked, .documentKeyMismatch, .iterationRemoved, .credentialIssuerRemoved: return ReaderStatus.keyNotTrusted
        case .digestMismatch: return ReaderStatus.badSignature
        case .malformedInput, .replay, .unsupportedVersion, .downgrade: return ReaderStatus.badData
        case .wrongReader, .outsideSchedule, .schedulesNotSupported, .clockUntrusted, .timeNotVerified, .clockRollback: return ReaderStatus.accessRights
        }
    }
}

/// The engine's answer for one transaction.
public enum Decision: Equatable, Sendable {
    /// `credentialID` is the access document's id (hex), for the audit log.
    case grant(credentialID: String)
    /// `detail` says in words what exactly failed (which field, which times).
    case deny(DenyReason, detail: String)

    public var isGrant: Bool { if case .grant = self { return true } else { return false } }
    public var denyReason: DenyReason? { if case .deny(let r, _) = self { return r } else { return nil } }
}

/// What the access protocol hands the engine once a credential has proven possession of its key
/// (AUTH1 verified) and, after step-up, delivered its documents.
public struct Presentation: Sendable, Equatable {
    /// The credential's long-term public key, 65 bytes `04‖X‖Y`, that signed AUTH1.
    public var credentialPublicKey: [UInt8]
    /// The 16-byte transaction id the reader chose in AUTH0.
    public var transactionID: [UInt8]
    public var interface: RadioInterface
    /// The protocol version both sides agreed on (e.g. 0x0100).
    public var protocolVersion: UInt16
    /// True when the FAST path (cached Kpersistent) was used.
    public var fast: Bool
    /// Each `Document` (CBOR, docType "aliro-a") received in the step-up DeviceResponse.
    public var accessDocuments: [[UInt8]]
    /// Each `Document` (CBOR, docType "aliro-r") received in the step-up DeviceResponse.
    public var revocationDocuments: [[UInt8]]
    /// The credential announced an access document (AUTH1 5E bit 0) and the reader stepped up
    /// for it: a presentation without one is then `missingDocument`, not `unknownCredential`.
    public var announcedAccessDocument: Bool
    /// The transaction opened for a remote keyless entry action (BLE `02 06`): a grant authorises
    /// the phone's RKE request that follows; the bolt moves on that request, not on the grant.
    public var remoteAction: Bool = false

    public init(credentialPublicKey: [UInt8], transactionID: [UInt8], interface: RadioInterface,
                protocolVersion: UInt16, fast: Bool, accessDocuments: [[UInt8]] = [],
                revocationDocuments: [[UInt8]] = [], announcedAccessDocument: Bool = false) {
        self.credentialPublicKey = credentialPublicKey
        self.transactionID = transactionID
        self.interface = interface
        self.protocolVersion = protocolVersion
        self.fast = fast
        self.accessDocuments = accessDocuments
        self.revocationDocuments = revocationDocuments
        self.announcedAccessDocument = announcedAccessDocument
    }
}

/// The engine as the reader session sees it. The lock implements it; the reader state machine
/// asks it two questions and never touches documents, clocks or stores itself.
public protocol AccessDecider: AnyObject {
    /// After AUTH1 (or an opened FAST cryptogram): must the reader step up to fetch documents, or
    /// does the lock already hold a usable access document for this credential key and nothing
    /// older than what the credential says it carries (`timestamps`)?
    func wantsStepUp(credentialPublicKey: [UInt8], timestamps: SignedTimestamps) -> Bool
    /// The decision for a completed presentation.
    func decide(_ presentation: Presentation) -> Decision
}

extension AccessDecider {
    /// The question without timestamps (a credential that sent none).
    public func wantsStepUp(credentialPublicKey: [UInt8]) -> Bool {
        wantsStepUp(credentialPublicKey: credentialPublicKey, timestamps: .none)
    }
}
