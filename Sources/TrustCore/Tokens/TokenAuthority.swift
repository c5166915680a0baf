import ByteCore
import Codecs
import Crypto
import Foundation
import Synchronization
import TrustModel
import JWTKit

/// The claims of an access token (RFC 9068 shape): who (`sub` = device), for whom (`aud`), by whom
/// (`iss`), when (`iat`, `nbf`, `exp`), and the login it belongs to (`fam`), so revoking a family
/// also stops its access tokens.
public struct AccessClaims: JWTPayload, Equatable {
    public var iss: IssuerClaim
    public var aud: AudienceClaim
    public var sub: SubjectClaim
    public var iat: IssuedAtClaim
    public var nbf: NotBeforeClaim
    public var exp: ExpirationClaim
    public var jti: IDClaim
    public var fam: String

    /// Time claims are checked by `TokenAuthority.verify` against the service's clock (virtual in
    /// scenarios), not the system clock jwt-kit would use.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Signs and checks access tokens: ES256 only, `typ` must be `at+jwt` (RFC 8725 §3.11, RFC 9068),
/// `iss`, `aud`, `exp`, `nbf` always checked (RFC 8725 §3.8–3.10).
public final class TokenAuthority: Sendable {
    public static let type = "at+jwt"
    /// jwt-kit's key collection is an actor: one signature or check at a time. Every request
    /// checks a token, so several collections holding the same key share the load.
    private let collections: [JWTKeyCollection]
    private let next = RoundRobin()
    public var keys: JWTKeyCollection { collections[0] }
    public let publicKey: P256.Signing.PublicKey
    public let keyID: JWKIdentifier
    let settings: TrustSettings
    let clock: any TrustClock
    /// Clock skew allowed on `nbf`/`exp` between instances.
    public let leeway: TimeInterval = 5
    /// Tokens whose signature already verified: a phone presents the same access token on every
    /// poll of its lifetime, and the ES256 check was the largest CPU cost of a poll.
    let verified = VerifiedTokens()

    public init(key: P256.Signing.PrivateKey, settings: TrustSettings, clock: any TrustClock) async throws {
        keyID = JWKIdentifier(string: Self.keyID(key.publicKey))
        var collections = [JWTKeyCollection]()
        for _ in 0..<max(2, ProcessInfo.processInfo.activeProcessorCount * 2) {
            let c = JWTKeyCollection()
            await c.add(ecdsa: try ES256PrivateKey(backing: key), kid: keyID)
            collections.append(c)
        }
        self.collections = collections
        publicKey = key.publicKey
        self.settings = settings
        self.clock = clock
    }

    private func collection() -> JWTKeyCollection { collections[next.next() % collections.count] }

    public static func keyID(_ key: P256.Signing.PublicKey) -> String {
        Hex.encode(Array(Primitives.sha256(Array(key.x963Representation)).prefix(8)))
    }

    /// An access token for `device`'s login `family`, valid `accessTokenLifetime` and never past
    /// `loginEnds` (a token issued just before the login's end ends with it).
    public func accessToken(device: String, family: String, now: Date, loginEnds: Date = .distantFuture) async throws -> String {
        let claims = AccessClaims(iss: .init(value: settings.issuer), aud: .init(value: [settings.audience]), sub: .init(value: device),
                                  iat: .init(value: now), nbf: .init(value: now),
                                  exp: .init(value: min(now.addingTimeInterval(settings.accessTokenLifetime), loginEnds)),
                                  jti: .init(value: Base64URL.random(16)), fam: family)
        var header = JWTHeader()
        header.typ = Self.type
        return try await collection().sign(claims, kid: keyID, header: header)
    }

    /// Checks a bearer token; every refusal names the rule.
    public func verify(_ token: String, now: Date) async throws(TrustError) -> AccessClaims {
        guard token.utf8.count <= 4096 else { throw TrustError(.invalidToken, "token longer than 4096 bytes") }
        if let claims = verified.claims(token) { return try check(claims, now: now) }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(String(parts[0])),
              let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any] else {
            throw TrustError(.invalidToken, "not a JWS compact serialization (header.payload.signature)")
        }
        guard header["alg"] as? String == "ES256" else {
            throw TrustError(.invalidToken, "alg \"\(header["alg"] ?? "absent")\" refused: ES256 only (RFC 8725 §3.1)")
        }
        // RFC 7515 §4.1.11: a recipient that does not understand every extension `crit` lists
        // must reject the token; this one understands none.
        guard header["crit"] == nil else {
            throw TrustError(.invalidToken, "crit header refused: no JWS extension is understood here (RFC 7515 §4.1.11)")
        }
        guard header["typ"] as? String == Self.type else {
            throw TrustError(.invalidToken, "typ \"\(header["typ"] ?? "absent")\" refused: access tokens are typ \(Self.type) (RFC 8725 §3.11)")
        }
        let claims: AccessClaims
        do { claims = try await collection().verify(token, as: AccessClaims.self) } catch {
            throw TrustError(.invalidToken, "signature or claims do not verify")
        }
        _ = try check(claims, now: now)
        verified.insert(token, claims, now: now)
        return claims
    }

    /// The claim checks, made on every use, cached signature or not (the clock moves on).
    func check(_ claims: AccessClaims, now: Date) throws(TrustError) -> AccessClaims {
        guard claims.iss.value == settings.issuer else { throw TrustError(.invalidToken, "iss \"\(claims.iss.value)\" is not \(settings.issuer)") }
        guard claims.aud.value.contains(settings.audience) else {
            throw TrustError(.invalidToken, "aud \(claims.aud.value) does not include \(settings.audience)")
        }
        guard now < claims.exp.value.addingTimeInterval(leeway) else { throw TrustError(.invalidToken, "expired at \(RFC3339.format(claims.exp.value))") }
        guard now >= claims.nbf.value.addingTimeInterval(-leeway) else {
            throw TrustError(.invalidToken, "not valid before \(RFC3339.format(claims.nbf.value))")
        }
        return claims
    }

    /// A one-time login code for `device`.
    func newEnrollment(device: String, tx: any TrustTransaction, now: Date) async throws -> String {
        let code = Self.loginCode()
        try await tx.putEnrollment(EnrollmentRecord(hash: Self.hash(code), device: device,
                                                    expiresAt: now.addingTimeInterval(settings.enrollmentLifetime)))
        return code
    }

    static func hash(_ secret: String) -> [UInt8] { Primitives.sha256(Array(secret.utf8)) }

    /// 24 random bytes, base64url, never starting with `-`: a user pastes it after `--code`, where
    /// a leading dash reads as an option (1 code in 64 did; it still has over 191 random bits).
    static func loginCode() -> String {
        var bytes = Primitives.randomBytes(24)
        if bytes[0] >> 2 == 62 { bytes[0] &= ~0x08 }    // the first character would be '-': make it '8'
        return Base64URL.encode(bytes)
    }
}

/// Access tokens whose header and signature verified, with their claims: the same bytes verify
/// the same way again. Bounded: when full, entries past their `exp` go first, and if none has
/// lapsed the whole cache is dropped (the next polls pay one signature check each).
final class VerifiedTokens: Sendable {
    let capacity: Int
    private let entries = Mutex<[String: AccessClaims]>([:])

    init(capacity: Int = 16_384) { self.capacity = capacity }

    func claims(_ token: String) -> AccessClaims? { entries.withLock { $0[token] } }

    func insert(_ token: String, _ claims: AccessClaims, now: Date) {
        entries.withLock { entries in
            if entries.count >= capacity {
                entries = entries.filter { $0.value.exp.value > now }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[token] = claims
        }
    }

    var count: Int { entries.withLock { $0.count } }
}

/// A thread-safe round-robin counter.
final class RoundRobin: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { $0 &+= 1; return $0 & Int.max } }
}
