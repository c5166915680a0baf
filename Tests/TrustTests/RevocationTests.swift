import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
@testable import TrustModel
@testable import TrustCore
@testable import TrustHTTP
import TrustPhone
import XCTest

/// Logout by token revocation (RFC 7009, `POST /v1/revoke`; issue 22 §3): the login behind a
/// refresh or an access token ends — no refresh, no bearer — and nothing else does; a token that
/// names no live login still answers 200 (§2.2); malformed requests are refused as RFC 6749 words it.
final class RevocationTests: XCTestCase {
    func testLogoutEndsTheLoginBehindEitherToken() async throws { try await logout(.sqlite) }
    func testLogoutEndsTheLoginBehindEitherTokenOnPostgreSQL() async throws { try await logout(.postgres) }

    func logout(_ backend: TrustBackend) async throws {
        let f = try await TrustFixture.make(backend: backend); defer { Task { await f.close() } }
        let byRefresh = try await f.login("p1", user: "alice")
        let byAccess = try await f.login("p2", user: "alice")
        let bystander = try await f.login("p3", user: "bob")
        let app = Application(router: TrustAPI.router(service: f.service))
        try await app.test(.router) { client in
            func post(_ body: String, contentType: String = "application/x-www-form-urlencoded") async throws -> (Int, String) {
                try await client.execute(uri: "/v1/revoke", method: .post, headers: [.contentType: contentType], body: ByteBuffer(string: body)) { r in
                    Self.conforms("/v1/revoke", "post", Int(r.status.code), r.body)
                    return (Int(r.status.code), String(buffer: r.body))
                }
            }
            func bearer(_ access: String) async throws -> HTTPResponse.Status {
                try await client.execute(uri: "/v1/keys", method: .get, headers: [.authorization: "Bearer " + access]) { $0.status }
            }
            let before = try await bearer(byRefresh.access_token); XCTAssertEqual(before, .ok)
            var (status, body) = try await post("token=" + byRefresh.refresh_token + "&token_type_hint=refresh_token")
            XCTAssertEqual(status, 200, body)
            await XCTAssertTrustError(.invalidGrant) { try await f.service.refresh(token: byRefresh.refresh_token) }
            let after = try await bearer(byRefresh.access_token); XCTAssertEqual(after, .unauthorized, "the login's access token is refused too")

            // An access token, with the wrong hint: found all the same.
            (status, body) = try await post("token=" + byAccess.access_token + "&token_type_hint=refresh_token")
            XCTAssertEqual(status, 200, body)
            await XCTAssertTrustError(.invalidGrant) { try await f.service.refresh(token: byAccess.refresh_token) }
            let hash = TokenAuthority.hash(byAccess.refresh_token)
            let stored = try await f.storage.read { tx in try await tx.refreshToken(hash: hash) }
            let family = try XCTUnwrap(stored?.family)
            let record = try await f.storage.read { tx in try await tx.family(family) }
            XCTAssertEqual(record?.revokedReason, TrustService.loggedOut)

            // Nothing to revoke is no error; nothing else changed.
            for token in [byRefresh.refresh_token, "never-issued", "x.y.z", String(repeating: "a", count: 5000)] {
                (status, body) = try await post("token=" + token)
                XCTAssertEqual(status, 200, "\(token.prefix(20)): \(body)")
            }
            let revokedAgain = try await f.service.revoke(token: byRefresh.refresh_token)
            XCTAssertFalse(revokedAgain, "a login already ended is not ended twice")
            let bystanderStatus = try await bearer(bystander.access_token); XCTAssertEqual(bystanderStatus, .ok, "another login is untouched")
            _ = try await f.service.refresh(token: bystander.refresh_token)

            for (bad, contentType, error) in [("token_type_hint=refresh_token", "application/x-www-form-urlencoded", "invalid_request"),
                                              ("token=a&token=b", "application/x-www-form-urlencoded", "invalid_request"),
                                              (#"{"token":"a"}"#, "application/json", "invalid_request")] {
                (status, body) = try await post(bad, contentType: contentType)
                XCTAssertEqual(status, 400, bad)
                XCTAssertTrue(body.contains(error), "\(bad): \(body)")
            }
            (status, _) = try await post(String(repeating: "a", count: 9000))
            XCTAssertEqual(status, 413)
        }
    }

    /// `phone run`'s `logout`: the phone asks the service to revoke its login over HTTP, forgets
    /// its tokens and keys, and its old refresh token is refused by the service afterwards.
    func testThePhoneLogsOut() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let server = try await TrustServer.start(service: f.service)
        let client = TrustClient(baseURL: server.baseURL)
        defer { Task { await client.shutdown(); await server.stop() } }
        let phone = VirtualPhone(id: "p1", client: client, clock: f.clock)
        let code = try await f.service.addDevice(id: "p1", user: "alice", credentialKey: phone.publicKey)
        _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
        _ = await phone.login(code: code)
        XCTAssertTrue(phone.isLoggedIn)
        XCTAssertEqual(phone.keys.count, 1)
        let noError = await phone.logout()
        XCTAssertNil(noError)
        XCTAssertFalse(phone.isLoggedIn)
        XCTAssertTrue(phone.keys.isEmpty, "a logged-out phone holds no keys")
        let again = await phone.logout()
        XCTAssertEqual(again, "not logged in")
        if case .failed = await phone.poll(trigger: .manual) {} else { XCTFail("a logged-out phone polled") }
    }
}
