import Foundation
import TrustModel

/// Token revocation (RFC 7009) and logout: a phone hands back its refresh or access token and the
/// login behind it ends — its refresh tokens are dead and its access tokens stop at the bearer
/// check. The phone is a public client, so holding the token is the authority to revoke it.
extension TrustService {
    /// The reason a login revoked this way carries.
    public static let loggedOut = "logged out (RFC 7009 revocation)"

    /// Ends the login behind `token` (a refresh token, or an access token this service signed).
    /// `hint` (`token_type_hint`) says which to look for first; an unknown hint is ignored (RFC 7009
    /// §2.1). A token that names no live login is not an error (§2.2): the answer is false.
    @discardableResult
    public func revoke(token: String, hint: String? = nil) async throws -> Bool {
        guard !token.isEmpty, token.utf8.count <= 4096 else { return false }
        let now = now()
        func fromRefresh() async throws -> String? {
            guard token.utf8.count <= 512 else { return nil }
            return try await storage.read { tx in try await tx.refreshToken(hash: TokenAuthority.hash(token))?.family }
        }
        func fromAccess() async -> String? { try? await tokens.verify(token, now: now).fam }
        var found: String?
        if hint == "access_token" {
            found = await fromAccess()
            if found == nil { found = try await fromRefresh() }
        } else {
            found = try await fromRefresh()
            if found == nil { found = await fromAccess() }
        }
        guard let family = found else { return false }
        return try await storage.write { tx in
            guard var f = try await tx.family(family), f.revokedAt == nil else { return false }
            f.revokedAt = now
            f.revokedReason = Self.loggedOut
            try await tx.putFamily(f)
            for var t in try await tx.refreshTokens(family: family) where t.state == .active {
                t.state = .superseded
                try await tx.putRefreshToken(t)
            }
            return true
        }
    }
}
