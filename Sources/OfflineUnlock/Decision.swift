import ByteCore

/// Why the lock said no. Every reason is machine-readable (`rawValue` is what the audit log and
/// `--json` print) and each one has a test that produces it from a real transaction.
public enum DenyReason: String, Codable, Sendable, CaseIterable {
    case unknownCredential = "unknown_credential"
    case badReaderSignature = "bad_reader_signature"
    case badCredentialSignature = "bad_credential_signature"
    case secureChannelFailure = "secure_channel_failure"
    case untrustedIssuer = "untrusted_issuer"
    case digestMismatch = "digest_mismatch"
    case documentKeyMismatch = "document_key_mismatch"
    case notYetValid = "not_yet_valid"
    case expired = "expired"
    case validityTooLong = "validity_too_long"
    case wrongReader = "wrong_reader"
    case outsideSchedule = "outside_schedule"
    case revoked = "revoked"
    case clockUntrusted = "clock_untrusted"
    case clockRollback = "clock_rollback"
    case replay = "replay"
    case unsupportedVersion = "unsupported_version"
    case downgrade = "downgrade"
    case malformedInput = "malformed_input"
    /// The transaction went past a bound of the lock's `TransactionLimits` (commands, response
    /// parts, bytes or time): a peer that never finishes is cut off.
    case transactionLimit = "transaction_limit"
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

    public init(credentialPublicKey: [UInt8], transactionID: [UInt8], interface: RadioInterface,
                protocolVersion: UInt16, fast: Bool, accessDocuments: [[UInt8]] = [],
                revocationDocuments: [[UInt8]] = []) {
        self.credentialPublicKey = credentialPublicKey
        self.transactionID = transactionID
        self.interface = interface
        self.protocolVersion = protocolVersion
        self.fast = fast
        self.accessDocuments = accessDocuments
        self.revocationDocuments = revocationDocuments
    }
}

/// The engine as the reader session sees it. The lock implements it; the reader state machine
/// asks it two questions and never touches documents, clocks or stores itself.
public protocol AccessDecider: AnyObject {
    /// After AUTH1: must the reader step up to fetch documents, or does the lock already hold a
    /// usable access document for this credential key?
    func wantsStepUp(credentialPublicKey: [UInt8]) -> Bool
    /// The decision for a completed presentation.
    func decide(_ presentation: Presentation) -> Decision
}
