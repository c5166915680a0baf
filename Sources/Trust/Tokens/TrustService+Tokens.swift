import Codecs
import Foundation

/// The token endpoint's grants (RFC 6749): `authorization_code` (a device's one-time login code)
/// and `refresh_token`, with rotation on every use and reuse detection (RFC 9700 §4.14.2).
extension TrustService {
    /// Logs a device in with its one-time code: a new token family.
    public func exchange(code: String) async throws -> TokenResponse {
        let now = now()
        let outcome: (device: String, family: String, refresh: String) = try await storage.write { tx in
            guard let e = try await tx.enrollment(hash: TokenAuthority.hash(code)) else {
                throw TrustError(.invalidGrant, "unknown login code")
            }
            guard e.usedAt == nil else { throw TrustError(.invalidGrant, "login code already used") }
            guard now < e.expiresAt else { throw TrustError(.invalidGrant, "login code expired") }
            var used = e
            used.usedAt = now
            try await tx.putEnrollment(used)
            try await self.checkDevice(e.device, login: true, tx: tx)
            let family = Base64URL.random(12)
            try await tx.putFamily(TokenFamilyRecord(id: family, device: e.device, createdAt: now))
            let refresh = Base64URL.random(32)
            try await tx.putRefreshToken(RefreshTokenRecord(hash: TokenAuthority.hash(refresh), family: family, device: e.device, issuedAt: now))
            return (e.device, family, refresh)
        }
        return try await response(device: outcome.device, family: outcome.family, refresh: outcome.refresh, familyCreated: now, now: now)
    }

    /// Rotates a refresh token. The presented token must be the family's active one; a token used
    /// again within the grace window (the answer to its first use was lost) supersedes the unused
    /// successor; any other reuse revokes the whole family. No family ever has two active tokens.
    public func refresh(token: String) async throws -> TokenResponse {
        let now = now()
        let grace = settings.refreshGrace, lifetime = settings.refreshLifetime
        let outcome: Result<(device: String, family: String, refresh: String, created: Date), TrustError> = try await storage.write { tx in
            guard token.utf8.count <= 512, let t = try await tx.refreshToken(hash: TokenAuthority.hash(token)) else {
                return .failure(TrustError(.invalidGrant, "unknown refresh token"))
            }
            guard var family = try await tx.family(t.family) else { return .failure(TrustError(.invalidGrant, "unknown token family")) }
            if family.revokedAt != nil {
                return .failure(TrustError(.invalidGrant, "token family revoked (\(family.revokedReason ?? "revoked"))"))
            }
            guard now < family.createdAt.addingTimeInterval(lifetime) else {
                return .failure(TrustError(.tokenExpired, "the login of \(RFC3339.format(family.createdAt)) reached its \(Int(lifetime / 86400))-day limit; authorize again"))
            }
            do { try await self.checkDevice(t.device, login: false, tx: tx) } catch let e as TrustError { return .failure(e) }
            var presented = t
            switch t.state {
            case .active:
                break
            case .used:
                if grace > 0, let usedAt = t.usedAt, now.timeIntervalSince(usedAt) <= grace, let s = t.successor,
                   var successor = try await tx.refreshToken(hash: s), successor.state == .active {
                    successor.state = .superseded
                    try await tx.putRefreshToken(successor)
                    break
                }
                fallthrough
            case .superseded:
                family.revokedAt = now
                family.revokedReason = "refresh token reused"
                try await tx.putFamily(family)
                for var other in try await tx.refreshTokens(family: family.id) where other.state == .active {
                    other.state = .superseded
                    try await tx.putRefreshToken(other)
                }
                return .failure(TrustError(.invalidGrant, "refresh token reused: its family is revoked (RFC 9700 §4.14.2)"))
            }
            let next = Base64URL.random(32)
            presented.state = .used
            presented.usedAt = presented.usedAt ?? now
            presented.successor = TokenAuthority.hash(next)
            try await tx.putRefreshToken(presented)
            try await tx.putRefreshToken(RefreshTokenRecord(hash: TokenAuthority.hash(next), family: family.id, device: t.device, issuedAt: now))
            return .success((t.device, family.id, next, family.createdAt))
        }
        let o = try outcome.get()
        return try await response(device: o.device, family: o.family, refresh: o.refresh, familyCreated: o.created, now: now)
    }

    /// The device and family behind a bearer token, or why not.
    public func authorize(bearer token: String) async throws -> AccessClaims {
        let claims = try await tokens.verify(token, now: now())
        let revoked = try await storage.read { tx in try await tx.family(claims.fam)?.revokedAt != nil }
        if revoked { throw TrustError(.invalidToken, "the token's login was revoked") }
        return claims
    }

    /// A device may keep polling whatever its credential's state (it must learn that its keys
    /// are gone); a new login needs a credential that is active or suspended.
    func checkDevice(_ id: String, login: Bool, tx: any TrustTransaction) async throws {
        guard let d = try await tx.device(id) else { throw TrustError(.invalidGrant, "device \(id) was removed") }
        guard !login || d.credentialState == .active || d.credentialState == .suspended else {
            throw TrustError(.invalidGrant, "device \(id)'s credential is \(d.credentialState.rawValue)")
        }
    }

    func response(device: String, family: String, refresh: String, familyCreated: Date, now: Date) async throws -> TokenResponse {
        TokenResponse(access_token: try await tokens.accessToken(device: device, family: family, now: now), token_type: "Bearer",
                      expires_in: Int(settings.accessTokenLifetime), refresh_token: refresh,
                      refresh_token_expires_in: max(0, Int(familyCreated.addingTimeInterval(settings.refreshLifetime).timeIntervalSince(now))))
    }
}

