import Codecs
import Foundation
import TrustModel

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
    /// Concurrent rotations are decided together in one write (`rotate`).
    public func refresh(token: String) async throws -> TokenResponse {
        let now = now()
        let o = try await rotations.submit(Rotation(token: token, now: now))
        return try await response(device: o.device, family: o.family, refresh: o.refresh, familyCreated: o.created, now: now)
    }

    struct Rotation: Sendable {
        var token: String
        var now: Date
    }

    struct Rotated: Sendable {
        var device: String
        var family: String
        var refresh: String
        var created: Date
    }

    /// Decides a batch of rotations in order, as if one after the other, in two statements: one
    /// read of every presented token with its family and device, one upsert of every token
    /// written. (Reuse — rare — reads its family's tokens and writes the family on the way.)
    static func rotate(_ batch: [Rotation], settings: TrustSettings, tx: any TrustTransaction) async throws -> [Result<Rotated, Error>] {
        var view = RotationView(tx: tx)
        try await view.load(batch.compactMap { $0.token.utf8.count <= 512 ? TokenAuthority.hash($0.token) : nil })
        var out = [Result<Rotated, Error>]()
        var failures = [DeviceEvent]()
        for r in batch {
            do { out.append(.success(try await rotateOne(r, settings: settings, view: &view))) } catch let e as TrustError {
                out.append(.failure(e))
                // The device's history says why its login stopped (a token naming no device adds nothing).
                if r.token.utf8.count <= 512, let t = view.tokens[TokenAuthority.hash(r.token)], view.devices[t.device] != nil {
                    failures.append(DeviceEvent(seq: 0, device: t.device, kind: .refreshFailed, at: r.now, reason: e.code.rawValue, detail: e.message))
                }
            }
        }
        try await view.flush()
        if !failures.isEmpty {
            try await tx.appendDeviceEvents(try await tx.numbered(failures), keep: DeviceEvent.retained)
            // Webhooks, in the same commit (rare: read whether anyone subscribes here rather than
            // keep the service's cache on the rotation path).
            if try await !tx.settings(prefix: webhookPrefix, limit: 1).isEmpty {
                try await recordWebhookEvents(failures.map { WebhookItem(type: "key-refresh-failed", device: $0.device, reason: $0.reason) },
                                              at: batch.first?.now ?? Date(), tx: tx)
            }
        }
        return out
    }

    static func rotateOne(_ r: Rotation, settings: TrustSettings, view: inout RotationView) async throws -> Rotated {
        let now = r.now, grace = settings.refreshGrace, lifetime = settings.refreshLifetime
        guard r.token.utf8.count <= 512, let t = view.tokens[TokenAuthority.hash(r.token)] else {
            throw TrustError(.invalidGrant, "unknown refresh token")
        }
        guard var family = view.families[t.family] else { throw TrustError(.invalidGrant, "unknown token family") }
        if family.revokedAt != nil { throw TrustError(.invalidGrant, "token family revoked (\(family.revokedReason ?? "revoked"))") }
        guard now < family.createdAt.addingTimeInterval(lifetime) else {
            throw TrustError(.tokenExpired, "the login of \(RFC3339.format(family.createdAt)) reached its \(Int(lifetime / 86400))-day limit; authorize again")
        }
        // A refresh is a login going on: a deactivated or deleted credential's logins end here, while
        // its last access token still lets the phone poll once and learn that its keys are gone.
        try checkDevice(view.devices[t.device], t.device, login: true)
        var presented = t
        switch t.state {
        case .active:
            break
        case .used:
            if grace > 0, let usedAt = t.usedAt, now.timeIntervalSince(usedAt) <= grace, let s = t.successor,
               var successor = try await view.token(s), successor.state == .active {
                successor.state = .superseded
                view.put(successor)
                break
            }
            fallthrough
        case .superseded:
            family.revokedAt = now
            family.revokedReason = "refresh token reused"
            view.put(family)
            for var other in try await view.tokens(family: family.id) where other.state == .active {
                other.state = .superseded
                view.put(other)
            }
            throw TrustError(.invalidGrant, "refresh token reused: its family is revoked (RFC 9700 §4.14.2)")
        }
        let next = Base64URL.random(32)
        presented.state = .used
        presented.usedAt = presented.usedAt ?? now
        presented.successor = TokenAuthority.hash(next)
        view.put(presented)
        view.put(RefreshTokenRecord(hash: TokenAuthority.hash(next), family: family.id, device: t.device, issuedAt: now))
        return Rotated(device: t.device, family: family.id, refresh: next, created: family.createdAt)
    }

    /// The device and family behind a bearer token, or why not.
    public func authorize(bearer token: String) async throws -> AccessClaims {
        let claims = try await tokens.verify(token, now: now())
        let fam = claims.fam
        let revoked = try await storage.read { tx in try await tx.family(fam).map { $0.revokedAt != nil } ?? true }
        if revoked { throw TrustError(.invalidToken, "the token's login was revoked or never existed") }
        return claims
    }

    /// A device may keep polling whatever its credential's state (it must learn that its keys
    /// are gone); a new login needs a credential that is active or suspended.
    func checkDevice(_ id: String, login: Bool, tx: any TrustTransaction) async throws {
        try Self.checkDevice(try await tx.device(id), id, login: login)
    }

    static func checkDevice(_ d: DeviceRecord?, _ id: String, login: Bool) throws {
        guard let d else { throw TrustError(.invalidGrant, "device \(id) was removed") }
        guard !login || d.credentialState == .active || d.credentialState == .suspended else {
            throw TrustError(.invalidGrant, "device \(id)'s credential is \(d.credentialState.rawValue)")
        }
    }

    func response(device: String, family: String, refresh: String, familyCreated: Date, now: Date) async throws -> TokenResponse {
        let loginEnds = familyCreated.addingTimeInterval(settings.refreshLifetime)
        let access = try await tokens.accessToken(device: device, family: family, now: now, loginEnds: loginEnds)
        return TokenResponse(access_token: access, token_type: "Bearer",
                             expires_in: Int(min(settings.accessTokenLifetime, max(0, loginEnds.timeIntervalSince(now)))), refresh_token: refresh,
                             refresh_token_expires_in: max(0, Int(loginEnds.timeIntervalSince(now))))
    }
}

/// The tokens, families and devices a batch of rotations works on, read once; each rotation sees
/// the writes of those before it, and the writes go to storage together at the end.
struct RotationView {
    let tx: any TrustTransaction
    var tokens: [[UInt8]: RefreshTokenRecord] = [:]
    var families: [String: TokenFamilyRecord] = [:]
    var devices: [String: DeviceRecord] = [:]
    private var written: [[UInt8]] = []
    private var writtenSet: Set<[UInt8]> = []
    private var writtenFamilies: [String] = []

    init(tx: any TrustTransaction) { self.tx = tx }

    mutating func load(_ hashes: [[UInt8]]) async throws {
        for s in try await tx.rotationStates(hashes: hashes) {
            tokens[s.token.hash] = s.token
            if let f = s.family { families[f.id] = f }
            if let d = s.device { devices[d.id] = d }
        }
    }

    /// A token not loaded yet (a successor), from storage.
    mutating func token(_ hash: [UInt8]) async throws -> RefreshTokenRecord? {
        if let t = tokens[hash] { return t }
        let t = try await tx.refreshToken(hash: hash)
        if let t { tokens[hash] = t }
        return t
    }

    /// Every token of a family: stored ones, with this batch's writes over them.
    mutating func tokens(family: String) async throws -> [RefreshTokenRecord] {
        for t in try await tx.refreshTokens(family: family) where tokens[t.hash] == nil { tokens[t.hash] = t }
        return tokens.values.filter { $0.family == family }.sorted { $0.issuedAt < $1.issuedAt }
    }

    mutating func put(_ t: RefreshTokenRecord) {
        if writtenSet.insert(t.hash).inserted { written.append(t.hash) }
        tokens[t.hash] = t
    }

    mutating func put(_ f: TokenFamilyRecord) {
        if !writtenFamilies.contains(f.id) { writtenFamilies.append(f.id) }
        families[f.id] = f
    }

    func flush() async throws {
        for id in writtenFamilies { if let f = families[id] { try await tx.putFamily(f) } }
        try await tx.putRefreshTokens(written.compactMap { tokens[$0] })
    }
}
