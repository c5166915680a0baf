import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import TrustCore
import TrustHTTP
import TrustModel
import XCTest

/// Every route that acts for a device goes through the one bearer check (`BearerAuthentication`):
/// the same refusal, with the same challenge, for a missing header, a forged token and a login
/// revoked by refresh-token reuse, on every such route; a good token passes it on every route.
final class BearerAuthenticationTests: XCTestCase {
    static let routes: [(HTTPRequest.Method, String)] = [
        (.get, "/v1/keys"), (.put, "/v1/push-token"),
        (.post, "/v1/approvals"), (.get, "/v1/approvals"), (.get, "/v1/approvals/a1"),
        (.post, "/v1/approvals/a1/accept"), (.post, "/v1/approvals/a1/deny"),
    ]

    func testEveryDeviceRouteRefusesTheSameWayAndAcceptsAGoodToken() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let key = Array(P256.Signing.PrivateKey().publicKey.x963Representation)
        let good = try await f.service.exchange(code: try await f.service.addDevice(id: "p1", user: "alice", credentialKey: key))
        // A second login whose refresh token is replayed: reuse detection revokes the whole login,
        // so its still-unexpired access token must stop working everywhere.
        let code2 = try await f.service.enroll(device: "p1")
        let revoked = try await f.service.exchange(code: code2)
        _ = try await f.service.refresh(token: revoked.refresh_token)
        f.clock.advance(60)
        _ = try? await f.service.refresh(token: revoked.refresh_token)
        let forged = good.access_token.dropLast(4) + "AAAA"

        let app = Application(router: TrustAPI.router(service: f.service, pushTokens: { _, _ in }))
        try await app.test(.router) { client in
            for (method, uri) in Self.routes {
                for (auth, why) in [(nil, "no Authorization header"), ("Basic YTpi", "not a Bearer token"),
                                    ("Bearer " + forged, "signature"), ("Bearer " + revoked.access_token, "revoked")] {
                    try await client.execute(uri: uri, method: method, headers: auth.map { [.authorization: $0] } ?? [:],
                                             body: ByteBuffer(string: "{}")) { r in
                        XCTAssertEqual(r.status, .unauthorized, "\(method) \(uri), \(auth ?? "no header")")
                        let challenge = r.headers[.wwwAuthenticate] ?? ""
                        XCTAssertTrue(challenge.hasPrefix("Bearer error=\"invalid_token\", error_description=\""), challenge)
                        let body = try JSONDecoder().decode([String: String].self, from: Data(buffer: r.body))
                        XCTAssertEqual(body["error"], "invalid_token")
                        XCTAssertTrue(body["error_description"]?.contains(why) ?? false, "\(uri): \(body) should say \(why)")
                    }
                }
                try await client.execute(uri: uri, method: method, headers: [.authorization: "Bearer " + good.access_token],
                                         body: ByteBuffer(string: "{}")) { r in
                    XCTAssertNotEqual(r.status, .unauthorized, "\(method) \(uri) refused a good token: \(String(buffer: r.body))")
                }
            }
        }
    }
}
