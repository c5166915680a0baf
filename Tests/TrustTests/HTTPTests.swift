import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Metrics
import Prometheus
import Push
import NIOCore
@testable import TrustModel
@testable import TrustCore
@testable import TrustSQLite
@testable import TrustPostgres
@testable import TrustBackends
@testable import TrustHTTP
import TrustPhone
import LockBenchTestSupport
import XCTest

/// The HTTP API through Hummingbird's test client, checked against docs/trust-openapi.json: every
/// answer's status is documented for its operation and its JSON body has the documented fields.
final class HTTPTests: XCTestCase {
    static let repositoryRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        fatalError("Package.swift not found")
    }()

    /// The document, read afresh by each check (a JSON object is not Sendable: no shared copy).
    static var openAPI: [String: Any] {
        let data = try! Data(contentsOf: repositoryRoot.appendingPathComponent("docs/trust-openapi.json"))
        return try! JSONSerialization.jsonObject(with: data) as! [String: Any]
    }

    static func form(_ s: String) -> (HTTPFields, ByteBuffer) {
        ([.contentType: "application/x-www-form-urlencoded"], ByteBuffer(string: s))
    }

    func testEveryDocumentedAnswer() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let code = try await f.service.addDevice(id: "p1", user: "alice", credentialKey: Array(P256.Signing.PrivateKey().publicKey.x963Representation))
        _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
        let app = Application(router: TrustAPI.router(service: f.service))
        try await app.test(.router) { client in
            // 204 before anything is revoked.
            try await client.execute(uri: "/v1/revocations", method: .get) { r in
                XCTAssertEqual(r.status, .noContent); Self.conforms("/v1/revocations", "get", r.status.code, r.body)
            }
            let (h, b) = Self.form("grant_type=authorization_code&code=" + code)
            var tokens: TokenResponse!
            try await client.execute(uri: "/v1/token", method: .post, headers: h, body: b) { r in
                XCTAssertEqual(r.status, .ok)
                XCTAssertEqual(r.headers[.cacheControl], "no-store")
                Self.conforms("/v1/token", "post", r.status.code, r.body)
                tokens = try JSONDecoder().decode(TokenResponse.self, from: Data(buffer: r.body))
            }
            var cursor = ""
            try await client.execute(uri: "/v1/keys", method: .get, headers: [.authorization: "Bearer " + tokens.access_token]) { r in
                XCTAssertEqual(r.status, .ok)
                Self.conforms("/v1/keys", "get", r.status.code, r.body)
                cursor = try JSONDecoder().decode(PollResult.self, from: Data(buffer: r.body)).cursor
            }
            try await client.execute(uri: "/v1/keys?since=" + cursor, method: .get, headers: [.authorization: "Bearer " + tokens.access_token]) { r in
                XCTAssertEqual(r.status, .noContent); Self.conforms("/v1/keys", "get", r.status.code, r.body)
            }
            try await client.execute(uri: "/v1/keys?since=-1", method: .get, headers: [.authorization: "Bearer " + tokens.access_token]) { r in
                XCTAssertEqual(r.status, .badRequest); Self.conforms("/v1/keys", "get", r.status.code, r.body)
            }
            for auth in [nil, "Basic abc", "Bearer " + tokens.refresh_token, "Bearer x.y.z"] {
                try await client.execute(uri: "/v1/keys", method: .get, headers: auth.map { [.authorization: $0] } ?? [:]) { r in
                    XCTAssertEqual(r.status, .unauthorized, auth ?? "no header")
                    XCTAssertNotNil(r.headers[.wwwAuthenticate])
                    Self.conforms("/v1/keys", "get", r.status.code, r.body)
                }
            }
            // Rotation over HTTP, then reuse → invalid_grant.
            let (h2, b2) = Self.form("grant_type=refresh_token&refresh_token=" + tokens.refresh_token)
            try await client.execute(uri: "/v1/token", method: .post, headers: h2, body: b2) { r in XCTAssertEqual(r.status, .ok) }
            f.clock.advance(60)
            for (body, error) in [("grant_type=refresh_token&refresh_token=" + tokens.refresh_token, "invalid_grant"),
                                  ("grant_type=password&username=a&password=b", "unsupported_grant_type"),
                                  ("code=abc", "invalid_request"),
                                  ("grant_type=refresh_token", "invalid_request"),
                                  ("grant_type=refresh_token&grant_type=refresh_token&refresh_token=x", "invalid_request")] {
                let (h3, b3) = Self.form(body)
                try await client.execute(uri: "/v1/token", method: .post, headers: h3, body: b3) { r in
                    XCTAssertEqual(r.status, .badRequest, body)
                    Self.conforms("/v1/token", "post", r.status.code, r.body)
                    XCTAssertEqual(try JSONDecoder().decode([String: String].self, from: Data(buffer: r.body))["error"], error, body)
                }
            }
            // JSON instead of a form.
            try await client.execute(uri: "/v1/token", method: .post, headers: [.contentType: "application/json"],
                                     body: ByteBuffer(string: #"{"grant_type":"refresh_token"}"#)) { r in
                XCTAssertEqual(r.status, .badRequest); Self.conforms("/v1/token", "post", r.status.code, r.body)
            }
            // An oversized body is refused before it is read whole.
            let (h4, _) = Self.form("")
            try await client.execute(uri: "/v1/token", method: .post, headers: h4, body: ByteBuffer(string: String(repeating: "a", count: 20_000))) { r in
                XCTAssertEqual(r.status, .contentTooLarge); Self.conforms("/v1/token", "post", r.status.code, r.body)
            }
            _ = try await f.service.revokeGrant(id: "g1", reason: "test")
            try await client.execute(uri: "/v1/revocations", method: .get) { r in
                XCTAssertEqual(r.status, .ok); XCTAssertEqual(r.headers[.contentType], "application/cbor")
                Self.conforms("/v1/revocations", "get", r.status.code, r.body)
            }
            try await client.execute(uri: "/healthz", method: .get) { r in XCTAssertEqual(r.status, .ok) }
        }
    }

    /// `PUT /v1/push-token`: 204 handing (device, token) to the registrar; 400 for a token that is
    /// empty or not printable ASCII; 401 without a valid access token; 501 where nothing pushes.
    func testPushTokenRegistration() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let t = try await f.login("p1", user: "alice")
        let seen = Registered()
        for (router, pushes) in [(TrustAPI.router(service: f.service, pushTokens: { d, tok in seen.add(d + " " + tok) }), true),
                                 (TrustAPI.router(service: f.service), false)] {
            try await Application(router: router).test(.router) { client in
                func put(_ body: String, _ bearer: String) async throws -> UInt16 {
                    try await client.execute(uri: "/v1/push-token", method: .put,
                                             headers: [.authorization: "Bearer " + bearer, .contentType: "application/json"],
                                             body: ByteBuffer(string: body)) { r in
                        Self.conforms("/v1/push-token", "put", r.status.code, r.body)
                        return UInt16(r.status.code)
                    }
                }
                var answers = [try await put(#"{"token":"tok-1"}"#, t.access_token), try await put(#"{"token":"tok-1"}"#, "garbage")]
                if pushes {
                    for body in [#"{"token":""}"#, #"{"token":"a b"}"#, #"{"nope":1}"#] { answers.append(try await put(body, t.access_token)) }
                }
                XCTAssertEqual(answers, pushes ? [204, 401, 400, 400, 400] : [501, 401])
            }
        }
        XCTAssertEqual(seen.all, ["p1 tok-1"])
    }

    /// Every documented operation is routed (none answers 404).
    func testEveryDocumentedOperationIsServed() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let app = Application(router: TrustAPI.router(service: f.service))
        try await app.test(.router) { client in
            let paths = Self.openAPI["paths"] as! [String: Any]
            for (path, ops) in paths {
                for method in (ops as! [String: Any]).keys {
                    let m: HTTPRequest.Method = switch method { case "post": .post; case "put": .put; case "delete": .delete; default: .get }
                    try await client.execute(uri: path, method: m) { r in
                        XCTAssertNotEqual(r.status, .notFound, "\(method) \(path)")
                    }
                }
            }
        }
    }

    /// The document itself is valid OpenAPI 3.1 (Python openapi-spec-validator, an independent checker).
    func testOpenAPIDocumentValidates() throws {
        // Both pipes are read while it runs (a long complaint cannot fill a pipe and stall it).
        let r = try LockBenchProcess.run(["python3", "-c", "import json,sys; from openapi_spec_validator import validate; validate(json.load(open(sys.argv[1]))); print('valid')",
                                          Self.repositoryRoot.appendingPathComponent("docs/trust-openapi.json").path],
                                         executable: URL(fileURLWithPath: "/usr/bin/env"), timeout: 120)
        XCTAssertEqual(r.status, 0, "openapi-spec-validator (pip install openapi-spec-validator): \(r.stdout)\(r.stderr.prefix(4000))")
        XCTAssertTrue(r.stdout.contains("valid"))
    }

    /// The phone's client (async-http-client) against the real server on a loopback port.
    func testPhoneClientOverLoopback() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let server = try await TrustServer.start(service: f.service)
        let client = TrustClient(baseURL: server.baseURL)
        let code = try await f.service.addDevice(id: "p1", user: "alice", credentialKey: Array(P256.Signing.PrivateKey().publicKey.x963Representation))
        let t = try await client.token([("grant_type", "authorization_code"), ("code", code)])
        let r = try await client.keys(accessToken: t.access_token, since: nil)
        XCTAssertEqual(r?.keys.count, 0)
        do { _ = try await client.token([("grant_type", "authorization_code"), ("code", code)]); XCTFail("a used code") } catch {
            XCTAssertEqual(error, .oauth(code: "invalid_grant", description: "login code already used"))
        }
        await client.shutdown()
        await server.stop()
        // The server is gone: a network error, not a crash.
        let gone = TrustClient(baseURL: server.baseURL, timeout: .seconds(2))
        do { _ = try await gone.keys(accessToken: "x", since: nil); XCTFail("no server") } catch {
            if case .network = error {} else { XCTFail("\(error)") }
        }
        await gone.shutdown()
    }
}

/// Nothing a poll answers is kept past a change it depends on: with the phone's access token in
/// the verified-token cache and a 204 just answered, a revoked grant is in the very next poll, and
/// a login revoked by refresh-token reuse refuses the same (cached) access token at once.
final class PollFreshnessTests: XCTestCase {
    func testNextPollSeesARevocationAndARevokedLoginDespiteTheCaches() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let server = try await TrustServer.start(service: f.service)
        let client = TrustClient(baseURL: server.baseURL)
        let code = try await f.service.addDevice(id: "p1", user: "alice", credentialKey: Array(P256.Signing.PrivateKey().publicKey.x963Representation))
        _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
        let t = try await client.token([("grant_type", "authorization_code"), ("code", code)])
        let first = try await client.keys(accessToken: t.access_token, since: nil)
        XCTAssertEqual(first?.keys.count, 1)
        let cursor = try XCTUnwrap(first?.cursor)
        let unchanged = try await client.keys(accessToken: t.access_token, since: cursor)
        XCTAssertNil(unchanged)
        XCTAssertNotNil(f.service.tokens.verified.claims(t.access_token))

        _ = try await f.service.revokeGrant(id: "g1", reason: "left the company")
        let answer = try await client.keys(accessToken: t.access_token, since: cursor)
        let after = try XCTUnwrap(answer)
        XCTAssertEqual(after.deleted, [first!.keys[0].id])
        XCTAssertEqual(after.revocation?.serial, 1)

        let next = try await client.token([("grant_type", "refresh_token"), ("refresh_token", t.refresh_token)])
        f.clock.advance(31)   // past the grace window: presenting the old token again is reuse
        do { _ = try await client.token([("grant_type", "refresh_token"), ("refresh_token", t.refresh_token)]); XCTFail("reuse") } catch {}
        for token in [t.access_token, next.access_token] {
            do { _ = try await client.keys(accessToken: token, since: after.cursor); XCTFail("a revoked login still polls") } catch {
                XCTAssertEqual(error, .unauthorized("the token's login was revoked"))
            }
        }
        await client.shutdown()
        await server.stop()
    }
}

/// `/metrics` in Prometheus text: the counters the API keeps (swift-metrics → swift-prometheus).
final class MetricsTests: XCTestCase {
    func testMetricsAreServed() async throws {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let app = Application(router: TrustAPI.router(service: f.service, registry: registry))
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/token", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                                     body: ByteBuffer(string: "grant_type=refresh_token&refresh_token=nope")) { r in
                XCTAssertEqual(r.status, .badRequest)
            }
            try await client.execute(uri: "/metrics", method: .get) { r in
                XCTAssertEqual(r.status, .ok)
                let text = String(buffer: r.body)
                XCTAssertTrue(text.contains("lockbench_trust_token_requests_total 1"), text)
                XCTAssertTrue(text.contains("lockbench_trust_token_refusals_total 1"), text)
            }
            // What operators page on (issue 22 §3): refresh failures by reason, write latency,
            // approvals pending site-wide, pushes sent and failed by reason.
            _ = try await f.login("alice-phone", user: "alice")
            _ = try await f.login("bob-phone", user: "bob")
            _ = try await f.service.addGrant(id: "ga", user: "alice", readers: [f.group])
            _ = try await f.service.requestApproval(ApprovalRequest(approver: "alice", lock: f.group), requester: "bob-phone")
            let relay = PushRelay(clock: f.clock)
            try relay.register(token: "live", device: PushDevice { _, _ in true })
            let notifier = TrustPushNotifier(relay: relay)
            notifier.register(device: "alice-phone", token: "live")
            notifier.register(device: "alice-phone", token: "never-registered")
            await notifier.notify([("alice-phone", .manual)])
            func metrics() async throws -> String {
                try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            }
            var text = try await metrics()
            XCTAssertTrue(text.contains(#"lockbench_trust_refresh_failures_total{reason="invalid_grant"} 1"#), text)
            XCTAssertTrue(text.contains("lockbench_trust_write_seconds_count 1"), "the one POST: \(text)")
            XCTAssertTrue(text.contains("lockbench_trust_approvals_pending 1"), text)
            XCTAssertTrue(text.contains("lockbench_trust_pushes_sent_total 1"), text)
            XCTAssertTrue(text.contains(#"lockbench_trust_push_failures_total{reason="bad_device_token"} 1"#), text)
            f.clock.advance(ApprovalRules.defaultTTL + 1)
            text = try await metrics()
            XCTAssertTrue(text.contains("lockbench_trust_approvals_pending 0"), "expired: \(text)")
        }
    }
}

/// The OpenAPI check, for every test class that answers over HTTP (HTTPTests, ApprovalHTTPTests).
extension XCTestCase {
    /// Checks one answer against the document: status listed, JSON body matches the schema.
    static func conforms(_ path: String, _ method: String, _ status: Int, _ body: ByteBuffer, file: StaticString = #filePath, line: UInt = #line) {
        let document = HTTPTests.openAPI
        let paths = document["paths"] as! [String: Any]
        guard let op = (paths[path] as? [String: Any])?[method] as? [String: Any] else { return XCTFail("\(method) \(path) is not documented", file: file, line: line) }
        let responses = op["responses"] as! [String: Any]
        guard let r = responses[String(status)] as? [String: Any] else {
            return XCTFail("\(method) \(path) answered \(status), documented: \(responses.keys.sorted())", file: file, line: line)
        }
        guard let schema = ((r["content"] as? [String: Any])?["application/json"] as? [String: Any])?["schema"] as? [String: Any] else { return }
        let json = try? JSONSerialization.jsonObject(with: Data(buffer: body))
        XCTAssertNotNil(json, "\(method) \(path) \(status): body is not JSON", file: file, line: line)
        let schemas = (document["components"] as! [String: Any])["schemas"] as! [String: Any]
        if let json { check(json, schema, schemas: schemas, at: "\(method) \(path) \(status)", file: file, line: line) }
    }

    static func check(_ value: Any, _ schema: [String: Any], schemas: [String: Any], at location: String, file: StaticString, line: UInt) {
        var schema = schema
        if let ref = schema["$ref"] as? String {
            let name = ref.components(separatedBy: "/").last!
            schema = schemas[name] as! [String: Any]
        }
        switch schema["type"] as? String {
        case "object":
            guard let o = value as? [String: Any] else { return XCTFail("\(location): not an object", file: file, line: line) }
            for r in schema["required"] as? [String] ?? [] where o[r] == nil { XCTFail("\(location): missing \(r)", file: file, line: line) }
            let props = schema["properties"] as? [String: Any] ?? [:]
            for (k, v) in o {
                guard let p = props[k] as? [String: Any] else { XCTFail("\(location): undocumented field \(k)", file: file, line: line); continue }
                check(v, p, schemas: schemas, at: location + "." + k, file: file, line: line)
            }
        case "array":
            guard let a = value as? [Any] else { return XCTFail("\(location): not an array", file: file, line: line) }
            for item in a { check(item, schema["items"] as! [String: Any], schemas: schemas, at: location + "[]", file: file, line: line) }
        case "string": XCTAssertTrue(value is String, "\(location): not a string", file: file, line: line)
        case "integer":
            let n = value as? NSNumber
            XCTAssertTrue(n.map { $0.doubleValue == $0.doubleValue.rounded() } ?? false, "\(location): not an integer", file: file, line: line)
        default: break
        }
    }
}

private final class Registered: @unchecked Sendable {
    private let lock = NSLock()
    private var items = [String]()
    func add(_ s: String) { lock.withLock { items.append(s) } }
    var all: [String] { lock.withLock { items } }
}
