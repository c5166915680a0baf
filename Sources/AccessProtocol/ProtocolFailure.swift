import OfflineUnlock

/// Why the access protocol refused what the credential sent, before (or instead of) asking the
/// lock. `rawValue` is the stable wire code; some codes are shared with the engine's
/// `DenyReason` (`replay`, `unsupported_version`, `downgrade`, `malformed_input`) because both
/// layers find them — the outcome's `layer` says which one did.
public enum ProtocolFailure: String, Codable, Sendable, CaseIterable {
    /// The credential refused the reader's AUTH1 signature (answered `6982`).
    case badReaderSignature = "bad_reader_signature"
    /// The device signature over the AUTH1 transcript does not verify.
    case badCredentialSignature = "bad_credential_signature"
    /// A sealed answer (AUTH1, ENVELOPE) did not open under the derived keys.
    case secureChannelFailure = "secure_channel_failure"
    /// The credential offers no version the reader speaks.
    case unsupportedVersion = "unsupported_version"
    /// The AUTH1 answer did not decrypt after negotiating below the preferred version.
    case downgrade = "downgrade"
    /// The AUTH0 answer repeats a device ephemeral key of an earlier transaction.
    case replay = "replay"
    /// An APDU, TLV or CBOR structure the protocol cannot accept.
    case malformedInput = "malformed_input"

    /// The EXCHANGE reader status for this failure once the secure channel exists (a failure
    /// site may name a finer one, e.g. `noSignature`); before it, CONTROL FLOW says it.
    public var readerStatus: UInt16 {
        switch self {
        case .badReaderSignature, .badCredentialSignature: return ReaderStatus.badSignature
        case .secureChannelFailure, .unsupportedVersion, .downgrade, .replay, .malformedInput: return ReaderStatus.badData
        }
    }
}
