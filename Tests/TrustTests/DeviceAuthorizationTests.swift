import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import LockBenchTestSupport
import NIOCore
@testable import TrustModel
@testable import TrustCore
@testable import TrustHTTP
import XCTest

/// Re-authorization without an administrator (issue 22 §2.4): the device authorization grant
/// (RFC 8628). Every answer of the token endpoint's device-code poll, who may approve a user code,
/// on both backends; over HTTP against the OpenAPI document; and as a user runs it, every actor its
/// own process.
final class DeviceAuthorizationTests: XCTestCase {
    func testTheDeviceCodeGrant() async throws { try await grant(.sqlite) }
    func testTheDeviceCodeGrantOnPostgreSQL() async throws { try await grant(.postgres) }

    func grant(_ backend: TrustBackend) async throws {
        let f = try await TrustFixture.make(backend: backend); defer { Task { await f.close() } }
        let ended = try await f.login("p1", user: "alice")
        _ = try await f.login("p2", user: "alice")
        _ = try await f.login("b1", user: "bob")
        _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
        try await f.service.revoke(token: ended.refresh_token)
        let s = f.service

        await XCTAssertTrustError(.invalidClient) { try await s.requestDeviceAuthorization(device: "nobody", verificationURI: "u") }
        var pair = try await s.requestDeviceAuthorization(device: "p1", verificationURI: "http://x/v1/device_authorization/approve")
        XCTAssertNotNil(pair.user_code.range(of: #"^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$"#, options: .regularExpression), pair.user_code)
        XCTAssertEqual(pair.interval, 5); XCTAssertEqual(pair.expires_in, 600)

        // RFC 8628 §3.5: pending; polled again within the interval → slow_down; after it → pending.
        await XCTAssertTrustError(.authorizationPending) { try await s.exchange(deviceCode: pair.device_code) }
        await XCTAssertTrustError(.slowDown) { try await s.exchange(deviceCode: pair.device_code) }
        f.clock.advance(5)
        await XCTAssertTrustError(.authorizationPending) { try await s.exchange(deviceCode: pair.device_code) }
        await XCTAssertTrustError(.invalidGrant) { try await s.exchange(deviceCode: "not-a-device-code") }

        // Who may approve: not the device itself, not another user's device (not_found: no oracle), a
        // well-formed code only; another phone of the same user, typed in any case.
        await XCTAssertTrustError(.forbidden) { try await s.answerDeviceAuthorization(userCode: pair.user_code, approve: true, approver: "p1") }
        await XCTAssertTrustError(.notFound) { try await s.answerDeviceAuthorization(userCode: pair.user_code, approve: true, approver: "b1") }
        await XCTAssertTrustError(.invalidRequest) { try await s.answerDeviceAuthorization(userCode: "AEIO-UAEI", approve: true, approver: "p2") }
        await XCTAssertTrustError(.notFound) { try await s.answerDeviceAuthorization(userCode: "BBBB-BBBB", approve: true, approver: "p2") }
        let approved = try await s.answerDeviceAuthorization(userCode: pair.user_code.lowercased(), approve: true, approver: "p2")
        XCTAssertEqual(approved, "p1")
        await XCTAssertTrustError(.alreadyAnswered) { try await s.answerDeviceAuthorization(userCode: pair.user_code, approve: true) }
        f.clock.advance(5)
        let login = try await s.exchange(deviceCode: pair.device_code)
        let claims = try await s.authorize(bearer: login.access_token)
        XCTAssertEqual(claims.sub.value, "p1")
        _ = try await s.refresh(token: login.refresh_token)
        await XCTAssertTrustError(.invalidGrant) { try await s.exchange(deviceCode: pair.device_code) }   // used once

        // Denied (the administrator), expired, and replaced by a newer request.
        pair = try await s.requestDeviceAuthorization(device: "p1", verificationURI: "u")
        try await s.answerDeviceAuthorization(userCode: pair.user_code, approve: false)
        await XCTAssertTrustError(.accessDenied) { try await s.exchange(deviceCode: pair.device_code) }
        pair = try await s.requestDeviceAuthorization(device: "p1", verificationURI: "u")
        f.clock.advance(601)
        await XCTAssertTrustError(.expiredToken) { try await s.exchange(deviceCode: pair.device_code) }
        let older = try await s.requestDeviceAuthorization(device: "p1", verificationURI: "u")
        pair = try await s.requestDeviceAuthorization(device: "p1", verificationURI: "u")
        await XCTAssertTrustError(.invalidGrant) { try await s.exchange(deviceCode: older.device_code) }
        await XCTAssertTrustError(.notFound) { try await s.answerDeviceAuthorization(userCode: older.user_code, approve: true) }

        // A deactivated credential gets no new login this way either.
        _ = try await s.setCredential(device: "p1", to: .deactivated)
        await XCTAssertTrustError(.invalidGrant) { try await s.requestDeviceAuthorization(device: "p1", verificationURI: "u") }
    }

    func testOverHTTP() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        _ = try await f.service.addDevice(id: "p1", user: "alice", credentialKey: Array(P256.Signing.PrivateKey().publicKey.x963Representation))
        let other = try await f.login("p2", user: "alice")
        let app = Application(router: TrustAPI.router(service: f.service))
        try await app.test(.router) { client in
            func form(_ uri: String, _ body: String) async throws -> (Int, String) {
                try await client.execute(uri: uri, method: .post, headers: [.contentType: "application/x-www-form-urlencoded"], body: ByteBuffer(string: body)) { r in
                    Self.conforms(uri, "post", Int(r.status.code), r.body)
                    return (Int(r.status.code), String(buffer: r.body))
                }
            }
            func approve(_ body: String, bearer: String) async throws -> (Int, String) {
                try await client.execute(uri: "/v1/device_authorization/approve", method: .post,
                                         headers: [.contentType: "application/json", .authorization: "Bearer " + bearer], body: ByteBuffer(string: body)) { r in
                    Self.conforms("/v1/device_authorization/approve", "post", Int(r.status.code), r.body)
                    return (Int(r.status.code), String(buffer: r.body))
                }
            }
            var (status, body) = try await form("/v1/device_authorization", "client_id=nobody")
            XCTAssertEqual(status, 400); XCTAssertTrue(body.contains("invalid_client"), body)
            (status, body) = try await form("/v1/device_authorization", "client_id=p1")
            XCTAssertEqual(status, 200, body)
            let pair = try JSONDecoder().decode(DeviceAuthorizationResponse.self, from: Data(body.utf8))
            XCTAssertTrue(pair.verification_uri.hasSuffix("/v1/device_authorization/approve"), pair.verification_uri)
            let poll = "grant_type=" + DeviceAuthorizationResponse.grantType + "&device_code=" + pair.device_code
            (status, body) = try await form("/v1/token", poll)
            XCTAssertEqual(status, 400); XCTAssertTrue(body.contains("authorization_pending"), body)
            (status, body) = try await approve(#"{"user_code":"\#(pair.user_code)"}"#, bearer: "not-a-token")
            XCTAssertEqual(status, 401, body)
            (status, body) = try await approve(#"{"code":"x"}"#, bearer: other.access_token)
            XCTAssertEqual(status, 400, body)
            (status, body) = try await approve(#"{"user_code":"BBBB-BBBB"}"#, bearer: other.access_token)
            XCTAssertEqual(status, 404, body)
            (status, body) = try await approve(#"{"user_code":"\#(pair.user_code)"}"#, bearer: other.access_token)
            XCTAssertEqual(status, 204, body)
            (status, body) = try await approve(#"{"user_code":"\#(pair.user_code)"}"#, bearer: other.access_token)
            XCTAssertEqual(status, 409, body)
            f.clock.advance(5)
            (status, body) = try await form("/v1/token", poll)
            XCTAssertEqual(status, 200, body)
            XCTAssertNoThrow(try JSONDecoder().decode(TokenResponse.self, from: Data(body.utf8)))
        }
    }

    /// As a user runs it, every actor its own process: `phone run` logged in, logs out (its login
    /// ends), and its next poll re-authorizes by itself — it prints a user code, which `trust device
    /// approve-code` (another process) approves; the phone polls the token endpoint until it has a
    /// new login, then polls its keys. With `--no-auto-recover` the same poll fails with
    /// token_expired and no code is shown.
    func testPhoneRunReauthorizesWithAUserCodeApprovedFromTheCommandLine() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let out = try LockBenchProcess.runEach([
            "trust init site", "key reader site/front-door", "key credential site/alice-phone",
            "trust device add --site site --device alice-phone --user alice --credential-key site/alice-phone.pub.pem",
            "trust device enroll --site site --device alice-phone",
            "trust grant add --site site --grant g1 --user alice --reader-identity site/front-door.reader.json --whole-group",
        ], in: dir)
        let codes = out.joined(separator: "\n").components(separatedBy: "login code: ").dropFirst().map { String($0.prefix { !$0.isWhitespace }) }
        XCTAssertEqual(codes.count, 2, out.joined(separator: "\n"))
        let server = try InteractiveProcess(["trust", "serve", "--site", "site", "--port", "0"], currentDirectory: dir)
        addTeardownBlock { server.terminate() }
        let listening = try server.waitForLine(containing: "listening on", timeout: 60)
        let trust = try XCTUnwrap(listening.range(of: "http://").map { String(listening[$0.lowerBound...]) })
        func phone(_ code: String, _ extra: [String]) throws -> InteractiveProcess {
            let p = try InteractiveProcess(["phone", "run", "--trust", trust, "--device", "alice-phone", "--key", "site/alice-phone.key.pem",
                                            "--code", code, "--trust-reader", "site/front-door.reader.json", "--port", "0"] + extra, currentDirectory: dir)
            addTeardownBlock { p.terminate() }
            _ = try p.waitForLine(containing: "polled", timeout: 30)
            p.send("logout")
            _ = try p.waitForLine(containing: "logged-out", timeout: 15)
            p.send("poll")
            return p
        }
        let strict = try phone(codes[1], ["--no-auto-recover"])
        let refused = try strict.waitForLine(containing: "poll-failed", timeout: 15)
        XCTAssertTrue(refused.contains("token_expired"), refused)
        strict.send("quit")

        let p = try phone(codes[0], [])
        let shown = try p.waitForLine(containing: "authorize ", timeout: 15)
        let code = try XCTUnwrap(shown.range(of: #"[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}"#, options: .regularExpression).map { String(shown[$0]) }, shown)
        let approved = try LockBenchProcess.run(["trust", "device", "approve-code", "--site", "site", "--code", code], currentDirectory: dir)
        XCTAssertEqual(approved.status, 0, approved.stderr)
        XCTAssertTrue(approved.stdout.contains("approved: alice-phone"), approved.stdout)
        let polled = try p.waitForLine(containing: "polled", timeout: 30)
        XCTAssertTrue(polled.contains("trigger=login") && polled.contains("keys=1"), polled)
        let again = try LockBenchProcess.run(["trust", "device", "approve-code", "--site", "site", "--code", code], currentDirectory: dir)
        XCTAssertNotEqual(again.status, 0, "a used code is gone")
    }
}
