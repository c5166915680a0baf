import ByteCore
import Codecs

/// The issuer public keys a lock trusts, found by COSE kid
/// (kid = SHA-256("key-identifier" ‖ 65-byte key)[0:8]).
public struct TrustStore: Equatable, Sendable {
    private var keys: [[UInt8]: [UInt8]] = [:]
    private var cas: Set<[UInt8]> = []
    /// A deliberate fault (`lock … --fault skip-issuer-certificate-checks`), never a setting: an
    /// issuer certificate's key is taken without its CA signature or validity being checked.
    public var skipsIssuerCertificateChecks = false
    /// Credential keys the lock trusts without a document (`trustedCredentialKeys`): such a
    /// credential is granted on AUTH1 alone, unless a revocation list names its key hash.
    public var credentialKeys = CredentialKeyList()

    /// `issuerCAPublicKeys`: the issuer CAs whose certificates (x5chain in a document's
    /// issuerAuth) name an issuer the lock then trusts for that document.
    public init(issuerPublicKeys: [[UInt8]] = [], issuerCAPublicKeys: [[UInt8]] = []) throws(PrimitiveError) {
        for k in issuerPublicKeys { try add(k) }
        for k in issuerCAPublicKeys { try addIssuerCA(k) }
    }

    public mutating func addIssuerCA(_ caPublicKey: [UInt8]) throws(PrimitiveError) {
        _ = try Primitives.signingPublicKey(caPublicKey)
        cas.insert(caPublicKey)
    }

    public var issuerCAKeys: [[UInt8]] { cas.sorted { $0.lexicographicallyPrecedes($1) } }

    public mutating func add(_ issuerPublicKey: [UInt8]) throws(PrimitiveError) {
        _ = try Primitives.signingPublicKey(issuerPublicKey)
        keys[CoseSign1.keyIdentifier(issuerPublicKey: issuerPublicKey)] = issuerPublicKey
    }

    public func issuerKey(kid: [UInt8]) -> [UInt8]? { keys[kid] }

    public var issuerKeys: [[UInt8]] { keys.values.sorted { $0.lexicographicallyPrecedes($1) } }
    public var isEmpty: Bool { keys.isEmpty && cas.isEmpty }
}
