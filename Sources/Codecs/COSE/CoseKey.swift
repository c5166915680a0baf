/// COSE_Key for an EC2 P-256 public key (RFC 9052 §7, RFC 9053 §7.1.1):
///
/// ```cddl
/// COSE_Key = {
///     1 => 2,        ; kty: EC2
///     -1 => 1,       ; crv: P-256
///     -2 => bstr,    ; x, 32 bytes
///     -3 => bstr,    ; y, 32 bytes (LockBench writes and reads the uncompressed form only)
///     * label => values
/// }
/// ```
public struct CoseKey: Equatable, Sendable {
    public enum Label {
        public static let kty: CBOR = 1
        public static let kid: CBOR = 2
        public static let alg: CBOR = 3
        public static let crv: CBOR = -1
        public static let x: CBOR = -2
        public static let y: CBOR = -3
        public static let ktyEC2: CBOR = 2
        public static let crvP256: CBOR = 1
    }

    /// The uncompressed point `04‖X‖Y`, validated on P-256.
    public let publicKey: [UInt8]

    public init(publicKey point: [UInt8]) throws(CoseError) {
        do { _ = try Primitives.signingPublicKey(point) } catch {
            throw CoseError(.invalidKey, error.reason)
        }
        self.publicKey = point
    }

    public init(cbor: CBOR) throws(CoseError) {
        guard case .map(let m) = cbor else { throw CoseError(.invalidKey, "COSE_Key: expected map, found \(cbor.kindName)") }
        guard m[Label.kty] == Label.ktyEC2 else { throw CoseError(.invalidKey, "COSE_Key: kty is not EC2 (2)") }
        guard m[Label.crv] == Label.crvP256 else { throw CoseError(.invalidKey, "COSE_Key: crv is not P-256 (1)") }
        guard let x = m[Label.x]?.bytesValue, x.count == 32 else { throw CoseError(.invalidKey, "COSE_Key: x is not 32 bytes") }
        guard let y = m[Label.y]?.bytesValue, y.count == 32 else { throw CoseError(.invalidKey, "COSE_Key: y is not 32 bytes") }
        try self.init(publicKey: [0x04] + x + y)
    }

    public var cbor: CBOR {
        [Label.kty: Label.ktyEC2, Label.crv: Label.crvP256,
         Label.x: .bytes(Array(publicKey[1..<33])), Label.y: .bytes(Array(publicKey[33..<65]))]
    }

    public func encoded() -> [UInt8] { cbor.encoded() }

    public init(parsing bytes: [UInt8]) throws(CoseError) {
        let c: CBOR
        do { c = try CBOR(parsing: bytes) } catch { throw CoseError(error, "COSE_Key") }
        self = try CoseKey(cbor: c)
    }
}
