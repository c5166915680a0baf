import Foundation
import OfflineUnlock

/// A site's policy for keys and tokens. Defaults follow the reference documents: Tapkey's 8-hour
/// background fetch, digi.me's 30-day refresh tokens.
public struct TrustSettings: Codable, Equatable, Sendable {
    /// How long an issued access document is valid (the lock's offline window).
    public var keyLifetime: TimeInterval = 8 * 3600
    /// When a phone is expected to poll again: the MSO's `expectedUpdate` is issue time + this;
    /// a poll after it re-issues the key with the next `validityIteration`.
    public var pollInterval: TimeInterval = 8 * 3600
    /// Access tokens (ES256 JWTs) are short-lived.
    public var accessTokenLifetime: TimeInterval = 15 * 60
    /// A token family (one login) ends this long after the login, whatever its rotations (digi.me: 30 days).
    public var refreshLifetime: TimeInterval = 30 * 24 * 3600
    /// A refresh token used again this soon after its first use is a retry after a lost
    /// response, not theft: its unused successor is superseded and a new one issued. 0: no grace.
    public var refreshGrace: TimeInterval = 30
    /// How long locks accept a revocation document.
    public var revocationLifetime: TimeInterval = 30 * 24 * 3600
    /// How long a one-time enrollment (login) code may wait.
    public var enrollmentLifetime: TimeInterval = 3600
    /// The `iss` of access tokens and the `aud` they must carry.
    public var issuer: String = "urn:lockbench:trust"
    public var audience: String = "urn:lockbench:phone"
    /// Whether issued access documents ask for time verification (MSO key 7 true): locks then accept
    /// them only while their clock is trusted, and never take their signed time as trusted time
    /// after a power loss. nil (absent from older site files) is false, LockBench's default.
    public var timeVerificationRequired: Bool?

    public init() {}

    /// `name value` pairs as a site file or a scenario's `site` line writes them.
    public mutating func set(_ name: String, _ value: String) throws(TrustError) {
        func duration() throws(TrustError) -> TimeInterval {
            guard let d = DurationText.parse(value), d >= 0 else {
                throw TrustError(.invalidRequest, "\(name) \"\(value)\" is not a duration like 90s, 30m, 8h, 7d")
            }
            return d
        }
        switch name {
        case "key-lifetime": keyLifetime = try duration()
        case "poll-interval": pollInterval = try duration()
        case "access-token-lifetime": accessTokenLifetime = try duration()
        case "refresh-lifetime": refreshLifetime = try duration()
        case "refresh-grace": refreshGrace = try duration()
        case "revocation-lifetime": revocationLifetime = try duration()
        case "enrollment-lifetime": enrollmentLifetime = try duration()
        case "issuer": issuer = value
        case "audience": audience = value
        case "time-verification-required":
            guard let b = Bool(value) else { throw TrustError(.invalidRequest, "\(name) \"\(value)\" is not true or false") }
            timeVerificationRequired = b
        default:
            throw TrustError(.invalidRequest, "unknown setting \"\(name)\"; one of \(Self.names.joined(separator: ", "))")
        }
        try validate()
    }

    /// The longest any duration may be: ten years (a document valid longer is not short-lived,
    /// and dates past it overflow the encodings that carry them).
    public static let maxDuration: TimeInterval = 10 * 365 * 86400

    /// The ranges `set` applies, for settings read whole (`site.json`): every duration finite,
    /// 0…ten years, the three lifetimes above 0, issuer and audience 1…256 bytes.
    public func validate() throws(TrustError) {
        let durations: [(String, TimeInterval)] = [
            ("key-lifetime", keyLifetime), ("poll-interval", pollInterval), ("access-token-lifetime", accessTokenLifetime),
            ("refresh-lifetime", refreshLifetime), ("refresh-grace", refreshGrace), ("revocation-lifetime", revocationLifetime),
            ("enrollment-lifetime", enrollmentLifetime),
        ]
        for (name, value) in durations where !(value.isFinite && value >= 0 && value <= Self.maxDuration) {
            throw TrustError(.invalidRequest, "\(name) is \(value) s: it must be 0…\(Int(Self.maxDuration)) s (ten years)")
        }
        for (name, value) in [("key-lifetime", keyLifetime), ("access-token-lifetime", accessTokenLifetime),
                              ("refresh-lifetime", refreshLifetime)] where value <= 0 {
            throw TrustError(.invalidRequest, "\(name) must be longer than 0")
        }
        for (name, value) in [("issuer", issuer), ("audience", audience)] where value.isEmpty || value.utf8.count > 256 {
            throw TrustError(.invalidRequest, "\(name) must be 1…256 bytes")
        }
    }

    public static let names = ["key-lifetime", "poll-interval", "access-token-lifetime", "refresh-lifetime", "refresh-grace",
                               "revocation-lifetime", "enrollment-lifetime", "issuer", "audience", "time-verification-required"]
}

/// Why the service refused: the OAuth error code where one applies (RFC 6749 §5.2), else ours.
public struct TrustError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Code: String, Sendable {
        case invalidRequest = "invalid_request"
        case invalidGrant = "invalid_grant"
        case unsupportedGrantType = "unsupported_grant_type"
        /// The refresh token's family reached its absolute lifetime: the user must log in again.
        case tokenExpired = "token_expired"
        case invalidToken = "invalid_token"
        case notFound = "not_found"
        case conflict = "conflict"
        /// A deactivated credential cannot change state again (Schlage guide: deactivation is final).
        case final = "credential_deactivated"
        // Push approval (ForgeRock): the request's state or the answer's shape.
        case forbidden = "forbidden"
        case approvalExpired = "approval_expired"
        case alreadyAnswered = "already_answered"
        case challengeResponseRequired = "challenge_response_required"
        case biometricRequired = "biometric_required"
        case tooManyPending = "too_many_pending"
        // The device authorization grant (RFC 8628 §3.5) and its client check (RFC 6749 §5.2).
        case authorizationPending = "authorization_pending"
        case slowDown = "slow_down"
        case accessDenied = "access_denied"
        case expiredToken = "expired_token"
        case invalidClient = "invalid_client"
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) { self.code = code; self.message = message }
    public var description: String { "\(code.rawValue): \(message)" }
}
