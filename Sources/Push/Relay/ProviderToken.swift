import Crypto
import Foundation
import Synchronization
import TrustModel

/// APNs's token-based provider authentication: the sender signs a small JWT with a P-256 key
/// (`{"alg":"ES256","kid":KEY}` . `{"iss":TEAM,"iat":SECONDS}`) and sends it on every push as
/// `authorization: bearer TOKEN`; the relay, configured with the public half, verifies it on every
/// push. As APNs: a token older than one hour is stale (403 ExpiredProviderToken), a missing one
/// 403 MissingProviderToken, any other fault 403 InvalidProviderToken. No JWT library: the token
/// has one shape, and the relay stays free of the trust service's dependencies.
public enum ProviderToken {
    /// APNs: "APNs rejects any request whose token contains a timestamp that is more than one hour old."
    public static let lifetime: TimeInterval = 3600
    /// A sender makes a new token this often (APNs: "no more than once every 20 minutes").
    public static let refreshAfter: TimeInterval = 30 * 60
    /// How far ahead of the relay's clock a token's `iat` may be (clocks differ a little).
    public static let allowedSkew: TimeInterval = 60
    /// Longer tokens are not parsed (one ES256 token is about 200 bytes).
    public static let maxBytes = 1024

    /// The key's id, as `kid` carries it: the first 10 hex digits of SHA-256 of its 65-byte point
    /// (APNs key ids are 10 characters).
    public static func keyID(_ key: P256.Signing.PublicKey) -> String {
        String(SHA256.hash(data: key.x963Representation).map { String(format: "%02X", $0) }.joined().prefix(10))
    }

    /// A token signed by `key`, issued at `issuedAt` by `issuer` (APNs: the team id).
    public static func sign(key: P256.Signing.PrivateKey, issuer: String, issuedAt: Date) throws(PushRefusal) -> String {
        let header = CompactJSON.object([("alg", CompactJSON.string("ES256")), ("kid", CompactJSON.string(keyID(key.publicKey)))])
        let claims = CompactJSON.object([("iss", CompactJSON.string(issuer)), ("iat", String(Int64(issuedAt.timeIntervalSince1970.rounded(.down))))])
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        guard let signature = try? key.signature(for: Data(input.utf8)) else {
            throw .invalidProviderToken("the provider key could not sign a token")
        }
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    /// Checks `authorization` (the whole header value, or nil) against `key` at `now`; throws the
    /// refusal APNs would answer.
    public static func verify(_ authorization: String?, key: P256.Signing.PublicKey, now: Date) throws(PushRefusal) {
        guard let authorization, authorization.lowercased().hasPrefix("bearer "),
              case let token = authorization.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces), !token.isEmpty else {
            throw .missingProviderToken
        }
        guard token.utf8.count <= maxBytes else { throw .invalidProviderToken("the token is \(token.utf8.count) bytes; at most \(maxBytes)") }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(String(parts[0])), let claimBytes = Base64URL.decode(String(parts[1])),
              let signatureBytes = Base64URL.decode(String(parts[2])) else {
            throw .invalidProviderToken("the token is not three base64url parts (header.claims.signature)")
        }
        guard let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
              let claims = try? JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any] else {
            throw .invalidProviderToken("the token's header or claims are not a JSON object")
        }
        guard header["alg"] as? String == "ES256" else { throw .invalidProviderToken("alg must be ES256") }
        // RFC 7515 §4.1.11: no extension is understood here.
        guard header["crit"] == nil else { throw .invalidProviderToken("crit is not accepted (RFC 7515 §4.1.11)") }
        let expected = keyID(key)
        guard let kid = header["kid"] as? String, kid == expected else {
            throw .invalidProviderToken("kid \((header["kid"] as? String)?.prefix(16) ?? "(none)") is not this relay's provider key \(expected)")
        }
        guard signatureBytes.count == 64, let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
              key.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)) else {
            throw .invalidProviderToken("the signature does not verify with provider key \(expected)")
        }
        guard let iss = claims["iss"] as? String, !iss.isEmpty else { throw .invalidProviderToken("iss (the sender) is missing") }
        guard let iat = seconds(claims["iat"]), iat.isFinite else { throw .invalidProviderToken("iat (seconds since 1970) is missing") }
        let age = now.timeIntervalSince1970 - iat
        if age > lifetime { throw .expiredProviderToken }
        if age < -allowedSkew { throw .invalidProviderToken("iat is \(Int(-age)) s ahead of the relay's clock (at most \(Int(allowedSkew)))") }
    }
}

extension ProviderToken {
    /// A JSON number as seconds (JSONSerialization hands numbers over as Int, Double or NSNumber).
    static func seconds(_ value: Any?) -> Double? {
        switch value {
        case let i as Int: return Double(i)
        case let d as Double: return d
        case let n as NSNumber: return n.doubleValue
        default: return nil
        }
    }
}

/// A sender's provider token, made again once it is `ProviderToken.refreshAfter` old.
public final class ProviderTokenSigner: Sendable {
    private let key: P256.Signing.PrivateKey
    private let issuer: String
    private let current = Mutex<(token: String, issued: Date)?>(nil)

    public init(key: P256.Signing.PrivateKey, issuer: String = "lockbench-trust") { self.key = key; self.issuer = issuer }

    public func token(now: Date = Date()) throws(PushRefusal) -> String {
        if let held = current.withLock({ $0 }), now.timeIntervalSince(held.issued) < ProviderToken.refreshAfter, now >= held.issued {
            return held.token
        }
        let token = try ProviderToken.sign(key: key, issuer: issuer, issuedAt: now)
        current.withLock { $0 = (token, now) }
        return token
    }
}
