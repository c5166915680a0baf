import ByteCore
import Codecs

/// The issuer public keys a lock trusts, found by COSE kid
/// (kid = SHA-256("key-identifier" ‖ 65-byte key)[0:8]).
public struct TrustStore: Equatable, Sendable {
    private var keys: [[UInt8]: [UInt8]] = [:]

    public init(issuerPublicKeys: [[UInt8]] = []) throws(PrimitiveError) {
        for k in issuerPublicKeys { try add(k) }
    }

    public mutating func add(_ issuerPublicKey: [UInt8]) throws(PrimitiveError) {
        _ = try Primitives.signingPublicKey(issuerPublicKey)
        keys[CoseSign1.keyIdentifier(issuerPublicKey: issuerPublicKey)] = issuerPublicKey
    }

    public func issuerKey(kid: [UInt8]) -> [UInt8]? { keys[kid] }

    public var issuerKeys: [[UInt8]] { keys.values.sorted { $0.lexicographicallyPrecedes($1) } }
    public var isEmpty: Bool { keys.isEmpty }
}
