import Codecs
import Crypto
import Foundation
import JWTKit
@testable import TrustModel
@testable import TrustCore
@testable import TrustSQLite
@testable import TrustPostgres
@testable import TrustBackends
@testable import TrustHTTP
import XCTest

/// Tokens: RFC 6749 grants, ES256 access tokens checked per RFC 8725, refresh rotation with
/// reuse detection (RFC 9700), the grace window, the 30-day absolute lifetime (digi.me).
final class TokenTests: XCTestCase {
    /// A login code is pasted after `--code`: one starting with `-` read as an option (1 in 64).
    func testLoginCodesNeverStartWithADashAndStayDistinct() {
        let codes = (0..<4096).map { _ in TokenAuthority.loginCode() }
        XCTAssertFalse(codes.contains { $0.hasPrefix("-") })
        XCTAssertEqual(Set(codes).count, codes.count)
        XCTAssertTrue(codes.allSatisfy { $0.utf8.count == 32 && Base64URL.decode($0)?.count == 24 })
        XCTAssertTrue(codes.contains { $0.hasPrefix("8") } && codes.contains { $0.hasPrefix("_") })   // the rest of the alphabet is still used
    }

    func testRotationIssuesANewRefreshTokenEachUse() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let first = try await f.login("p1", user: "alice")
        let second = try await f.service.refresh(token: first.refresh_token)
        XCTAssertNotEqual(first.refresh_token, second.refresh_token)
        XCTAssertEqual(second.token_type, "Bearer")
        XCTAssertEqual(second.expires_in, 900)
        let third = try await f.service.refresh(token: second.refresh_token)
        XCTAssertNotEqual(third.refresh_token, second.refresh_token)
        let claims = try await f.service.authorize(bearer: third.access_token)
        XCTAssertEqual(claims.sub.value, "p1")
    }

    func testReusedRefreshTokenRevokesTheWholeFamily() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let first = try await f.login("p1", user: "alice")
        let fam = try await f.service.authorize(bearer: first.access_token).fam
        let second = try await f.service.refresh(token: first.refresh_token)
        f.clock.advance(31)   // past the 30 s grace window
        await XCTAssertTrustError(.invalidGrant) { try await f.service.refresh(token: first.refresh_token) }
        // The legitimate holder's token dies with the family, and so do its access tokens.
        await XCTAssertTrustError(.invalidGrant) { try await f.service.refresh(token: second.refresh_token) }
        await XCTAssertTrustError(.invalidToken) { try await f.service.authorize(bearer: second.access_token) }
        let active = try await f.storage.read { tx in try await tx.refreshTokens(family: fam) }.filter { $0.state == .active }
        XCTAssertEqual(active.count, 0)
    }

    func testRetryWithinGraceWindowSupersedesTheLostSuccessor() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let first = try await f.login("p1", user: "alice")
        let lost = try await f.service.refresh(token: first.refresh_token)   // the answer never arrived
        f.clock.advance(30)                                                  // exactly the grace window
        let retry = try await f.service.refresh(token: first.refresh_token)
        XCTAssertNotEqual(retry.refresh_token, lost.refresh_token)
        // The lost successor is dead; presenting it is reuse and ends the family.
        _ = try await f.service.refresh(token: retry.refresh_token)
        await XCTAssertTrustError(.invalidGrant) { try await f.service.refresh(token: lost.refresh_token) }
    }

    func testRetryAfterTheSuccessorWasUsedIsReuse() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let first = try await f.login("p1", user: "alice")
        let second = try await f.service.refresh(token: first.refresh_token)
        _ = try await f.service.refresh(token: second.refresh_token)
        await XCTAssertTrustError(.invalidGrant) { try await f.service.refresh(token: first.refresh_token) }
    }

    func testLoginEndsAfterThirtyDaysWhateverTheRotations() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        var t = try await f.login("p1", user: "alice")
        for _ in 0..<29 {
            f.clock.advance(86400)
            t = try await f.service.refresh(token: t.refresh_token)
        }
        f.clock.advance(86400 - 1)   // 30 days less one second: still fine
        t = try await f.service.refresh(token: t.refresh_token)
        XCTAssertEqual(t.refresh_token_expires_in, 1)
        f.clock.advance(1)           // exactly 30 days
        await XCTAssertTrustError(.tokenExpired) { try await f.service.refresh(token: t.refresh_token) }
        // A new login (the re-authorization) starts a new 30 days.
        let code = try await f.service.enroll(device: "p1")
        let fresh = try await f.service.exchange(code: code)
        XCTAssertEqual(fresh.refresh_token_expires_in, 30 * 86400)
    }

    func testLoginCodeIsOneTimeAndExpires() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let code = try await f.service.addDevice(id: "p1", user: "alice", credentialKey: Array(P256.Signing.PrivateKey().publicKey.x963Representation))
        _ = try await f.service.exchange(code: code)
        await XCTAssertTrustError(.invalidGrant) { try await f.service.exchange(code: code) }
        let late = try await f.service.enroll(device: "p1")
        f.clock.advance(3600)
        await XCTAssertTrustError(.invalidGrant) { try await f.service.exchange(code: late) }
        await XCTAssertTrustError(.invalidGrant) { try await f.service.exchange(code: "not-a-code") }
    }

    func testAccessTokenIsNotARefreshTokenAndViceVersa() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let t = try await f.login("p1", user: "alice")
        await XCTAssertTrustError(.invalidGrant) { try await f.service.refresh(token: t.access_token) }
        await XCTAssertTrustError(.invalidToken) { try await f.service.authorize(bearer: t.refresh_token) }
    }

    func testAccessTokenHeaderAndClaims() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let t = try await f.login("p1", user: "alice")
        let header = try JSONSerialization.jsonObject(with: Data(Base64URL.decode(String(t.access_token.split(separator: ".")[0]))!)) as! [String: Any]
        XCTAssertEqual(header["typ"] as? String, "at+jwt")
        XCTAssertEqual(header["alg"] as? String, "ES256")
        XCTAssertNotNil(header["kid"])
        // exp: valid until 15 min (+ 5 s leeway), refused after.
        f.clock.advance(900)
        _ = try await f.service.authorize(bearer: t.access_token)
        f.clock.advance(5)
        await XCTAssertTrustError(.invalidToken) { try await f.service.authorize(bearer: t.access_token) }
    }

    /// Tokens forged with the right key but a wrong header or claim are refused, each by its rule.
    func testForgedTokensAreRefused() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let t = try await f.login("p1", user: "alice")
        let fam = try await f.service.authorize(bearer: t.access_token).fam
        let now = f.clock.now()
        func claims(iss: String = f.service.settings.issuer, aud: String = f.service.settings.audience,
                    nbf: Date? = nil, exp: Date? = nil) -> AccessClaims {
            AccessClaims(iss: .init(value: iss), aud: .init(value: [aud]), sub: .init(value: "p1"), iat: .init(value: now),
                         nbf: .init(value: nbf ?? now), exp: .init(value: exp ?? now.addingTimeInterval(600)), jti: .init(value: "x"), fam: fam)
        }
        func sign(_ c: AccessClaims, typ: String? = "at+jwt") async throws -> String {
            var h = JWTHeader()
            h.typ = typ
            return try await f.service.tokens.keys.sign(c, header: h)
        }
        let good = try await sign(claims())
        _ = try await f.service.authorize(bearer: good)
        let cases: [(String, String)] = [
            ("wrong iss", try await sign(claims(iss: "urn:evil"))),
            ("wrong aud", try await sign(claims(aud: "urn:other-api"))),
            ("typ JWT", try await sign(claims(), typ: "JWT")),
            ("no typ", try await sign(claims(), typ: nil)),
            ("not yet valid", try await sign(claims(nbf: now.addingTimeInterval(60)))),
            ("expired", try await sign(claims(exp: now.addingTimeInterval(-60)))),
        ]
        for (what, token) in cases {
            await XCTAssertTrustError(.invalidToken, { try await f.service.authorize(bearer: token) })
            _ = what
        }
        // alg "none": the same claims, unsigned.
        let parts = good.split(separator: ".")
        let none = Base64URL.encode(Array(#"{"alg":"none","typ":"at+jwt"}"#.utf8)) + "." + parts[1] + "."
        await XCTAssertTrustError(.invalidToken) { try await f.service.authorize(bearer: none) }
        // HS256 with the public key as the secret (algorithm confusion).
        let hs = Base64URL.encode(Array(#"{"alg":"HS256","typ":"at+jwt"}"#.utf8)) + "." + parts[1] + "." + parts[2]
        await XCTAssertTrustError(.invalidToken) { try await f.service.authorize(bearer: hs) }
        // Another key, same header and claims.
        let other = JWTKeyCollection()
        await other.add(ecdsa: try ES256PrivateKey(backing: P256.Signing.PrivateKey()))
        var h = JWTHeader(); h.typ = "at+jwt"
        let foreign = try await other.sign(claims(), header: h)
        await XCTAssertTrustError(.invalidToken) { try await f.service.authorize(bearer: foreign) }
        // A flipped signature byte.
        var sig = Base64URL.decode(String(parts[2]))!
        sig[10] ^= 1
        await XCTAssertTrustError(.invalidToken) { try await f.service.authorize(bearer: parts[0] + "." + parts[1] + "." + Base64URL.encode(sig)) }
        await XCTAssertTrustError(.invalidToken) { try await f.service.authorize(bearer: "a.b") }
    }

    /// A token's verified signature is remembered, its claims are not: a cached token still
    /// expires, a changed byte is a different token, and the cache stays bounded.
    func testVerifiedTokenCacheRechecksClaimsAndStaysBounded() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let t = try await f.login("p1", user: "alice")
        _ = try await f.service.authorize(bearer: t.access_token)
        XCTAssertNotNil(f.service.tokens.verified.claims(t.access_token))
        let parts = t.access_token.split(separator: ".")
        var sig = Base64URL.decode(String(parts[2]))!
        sig[5] ^= 1
        await XCTAssertTrustError(.invalidToken) { try await f.service.authorize(bearer: parts[0] + "." + parts[1] + "." + Base64URL.encode(sig)) }
        f.clock.advance(905)
        await XCTAssertTrustError(.invalidToken) { try await f.service.authorize(bearer: t.access_token) }

        let claims = try await f.service.tokens.verify(try await f.login("p2", user: "bob").access_token, now: f.service.now())
        let cache = VerifiedTokens(capacity: 4)
        let now = f.clock.now()
        var lapsed = claims; lapsed.exp = .init(value: now.addingTimeInterval(-1))
        cache.insert("a", lapsed, now: now); cache.insert("b", lapsed, now: now)
        cache.insert("c", claims, now: now); cache.insert("d", claims, now: now)
        cache.insert("e", claims, now: now)   // full: the two lapsed go
        XCTAssertEqual(cache.count, 3)
        XCTAssertNil(cache.claims("a"))
        XCTAssertNotNil(cache.claims("c"))
        cache.insert("f", claims, now: now); cache.insert("g", claims, now: now)   // full, none lapsed: dropped
        XCTAssertEqual(cache.count, 1)
        XCTAssertNotNil(cache.claims("g"))
    }

    /// 50 refreshes of one token at once: at most one token of the family is ever active.
    func testFiftyConcurrentRefreshesNeverForkAFamily() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let t = try await f.login("p1", user: "alice")
        let fam = try await f.service.authorize(bearer: t.access_token).fam
        let results = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<50 { group.addTask { try? await f.service.refresh(token: t.refresh_token).refresh_token } }
            var out = [String?]()
            for await r in group { out.append(r) }
            return out
        }
        XCTAssertGreaterThanOrEqual(results.compactMap { $0 }.count, 1)
        let tokens = try await f.storage.read { tx in try await tx.refreshTokens(family: fam) }
        XCTAssertEqual(tokens.filter { $0.state == .active }.count, 1, "exactly one live token in the family")
        // The live one is one of the answers, and it works.
        let live = results.compactMap { $0 }.filter { r in tokens.contains { $0.state == .active && $0.hash == TokenAuthority.hash(r) } }
        XCTAssertEqual(live.count, 1)
        _ = try await f.service.refresh(token: live[0])
    }
}

/// Issue 22 §1.3 and §1.6: logins end with the credential; a token naming a login that never
/// existed, or carrying a `crit` header, is refused.
final class TokenRefusalTests: XCTestCase {
    func testDeactivationEndsTheLoginYetTheLastAccessTokenStillLearnsTheKeysAreGone() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let t = try await f.login("p1", user: "alice")
        _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
        let fam = try await f.service.authorize(bearer: t.access_token).fam
        let first = try await f.service.poll(device: "p1", since: nil, family: fam)
        XCTAssertEqual(first?.keys.filter { !$0.document.isEmpty }.count, 1)
        _ = try await f.service.setCredential(device: "p1", to: .deactivated, reason: "lost")
        // The refresh is refused: the login ended with the credential.
        await XCTAssertTrustError(.invalidGrant) { try await f.service.refresh(token: t.refresh_token) }
        // The access token still in hand polls once more and hears that its key is gone.
        let after = try await f.service.poll(device: "p1", since: first.flatMap { Int64($0.cursor) }, family: fam)
        XCTAssertEqual(after?.deleted.count, 1, "the deactivated phone learns that its key was withdrawn")
        // Suspension is reversible: its logins go on.
        let u = try await f.login("p2", user: "bob")
        _ = try await f.service.setCredential(device: "p2", to: .suspended)
        _ = try await f.service.refresh(token: u.refresh_token)
    }

    /// Issue 22 §2.5: an access token issued a minute before the login's 30-day end ends with it,
    /// not 15 minutes later.
    func testAnAccessTokenNeverOutlivesItsLogin() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let t = try await f.login("p1", user: "alice")
        f.clock.advance(f.service.settings.refreshLifetime - 60)
        let last = try await f.service.refresh(token: t.refresh_token)
        XCTAssertEqual(last.expires_in, 60)
        XCTAssertEqual(last.refresh_token_expires_in, 60)
        let claims = try await f.service.authorize(bearer: last.access_token)
        XCTAssertLessThanOrEqual(claims.exp.value.timeIntervalSince(f.clock.now()), 60)
        f.clock.advance(60 + f.service.tokens.leeway + 1)
        await XCTAssertTrustError(.invalidToken) { try await f.service.authorize(bearer: last.access_token) }
    }

    func testATokenNamingALoginThatNeverExistedIsRefusedEverywhere() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        _ = try await f.login("p1", user: "alice")
        // Signed with the service's own key, for a real device, but naming no login.
        let forged = try await f.service.tokens.accessToken(device: "p1", family: "no-such-login", now: f.clock.now())
        await XCTAssertTrustError(.invalidToken) { try await f.service.authorize(bearer: forged) }
        await XCTAssertTrustError(.invalidToken) { _ = try await f.service.poll(device: "p1", since: nil, family: "no-such-login") }
    }

    func testACritHeaderIsRefused() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let t = try await f.login("p1", user: "alice")
        let claims = try await f.service.authorize(bearer: t.access_token)
        var header = JWTHeader()
        header.typ = "at+jwt"
        header.crit = ["exp"]
        let critical = try await f.service.tokens.keys.sign(claims, header: header)
        do { _ = try await f.service.authorize(bearer: critical); XCTFail("a crit header was accepted") } catch let e as TrustError {
            XCTAssertEqual(e.code, .invalidToken)
            XCTAssertTrue(e.message.contains("RFC 7515 §4.1.11"), e.message)
        }
        // The same claims without crit pass: the refusal is the header's.
        var plain = JWTHeader(); plain.typ = "at+jwt"
        _ = try await f.service.authorize(bearer: try await f.service.tokens.keys.sign(claims, header: plain))
    }
}

/// Issue 22 §1.6: `site.json` is read with the ranges `trust settings` applies.
final class SiteSettingsTests: XCTestCase {
    func testOutOfRangeSettingsInSiteJSONAreRefusedNamingTheFileAndTheSetting() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-site-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try TrustSite.create(at: dir)
        let path = dir + "/" + TrustSite.settingsFile
        let original = try String(contentsOfFile: path, encoding: .utf8)
        for (field, value, named) in [("keyLifetime", "1e300", "key-lifetime"), ("keyLifetime", "-3600", "key-lifetime"),
                                      ("keyLifetime", "0", "key-lifetime"), ("refreshGrace", "-1", "refresh-grace"),
                                      ("pollInterval", "1e10", "poll-interval"), ("accessTokenLifetime", "0", "access-token-lifetime")] {
            let edited = original.replacingOccurrences(of: #""\#(field)" : [0-9.e+-]+"#, with: "\"\(field)\" : \(value)", options: .regularExpression)
            XCTAssertNotEqual(edited, original, field)
            try edited.write(toFile: path, atomically: true, encoding: .utf8)
            do { _ = try TrustSite.open(dir); XCTFail("\(field) = \(value) was accepted") } catch {
                XCTAssertTrue(error.message.contains(named) && error.message.contains("site.json"), error.message)
            }
        }
        try original.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertEqual(try TrustSite.open(dir).settings, TrustSettings())
    }
}
