import ByteCore
import Codecs

/// Why an access or revocation document was refused. Tests match on `code`; `denyReason` is what
/// the engine reports for it.
public struct DocumentError: CodedError, Equatable, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable, CaseIterable {
        /// Not CBOR, or CBOR of the wrong shape (a field missing, a type wrong).
        case malformed = "document.malformed"
        /// docType is not the one expected ("aliro-a" access, "aliro-r" revocation).
        case wrongDocType = "document.wrong_doc_type"
        /// MSO version, digest algorithm or access-data version LockBench does not speak.
        case unsupportedVersion = "document.unsupported_version"
        /// No trusted issuer key has the document's kid.
        case untrustedIssuer = "document.untrusted_issuer"
        /// The issuer signature (COSE_Sign1 ES256) does not verify.
        case badIssuerSignature = "document.bad_issuer_signature"
        /// The issuer certificate in issuerAuth's header (x5chain, 33) does not parse, or its key
        /// is not a P-256 point.
        case badIssuerCertificate = "document.bad_issuer_certificate"
        /// The issuer certificate is not signed by an issuer CA the lock trusts.
        case untrustedIssuerCertificate = "document.untrusted_issuer_certificate"
        /// The issuer certificate's validity does not hold the MSO's signing time.
        case issuerCertificateNotValid = "document.issuer_certificate_not_valid"
        /// An IssuerSignedItem's SHA-256 differs from the MSO's digest, or the MSO lacks it.
        case digestMismatch = "document.digest_mismatch"
    }
    public var code: Code
    public var reason: String
    public init(_ code: Code, _ reason: String) { self.code = code; self.reason = reason }

    init(_ e: CBORError, _ what: String) { self.init(.malformed, "\(what): \(e)") }

    /// Any error from a parse step as a DocumentError (CBOR and COSE errors become `malformed`).
    static func wrap(_ error: any Error, _ what: String) -> DocumentError {
        if let e = error as? DocumentError { return e }
        if let e = error as? CBORError { return DocumentError(e, what) }
        if let e = error as? CoseError { return DocumentError(.malformed, "\(what): \(e)") }
        return DocumentError(.malformed, "\(what): \(error)")
    }

    /// The engine's reason for refusing a presentation because of this error.
    public var denyReason: DenyReason {
        switch code {
        case .malformed, .wrongDocType: return .malformedInput
        case .unsupportedVersion: return .unsupportedVersion
        case .untrustedIssuer, .badIssuerSignature, .badIssuerCertificate, .untrustedIssuerCertificate, .issuerCertificateNotValid:
            return .untrustedIssuer
        case .digestMismatch: return .digestMismatch
        }
    }
}
