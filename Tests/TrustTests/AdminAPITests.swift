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

/// The admin API (issue 22 §3): admin keys distinct from phones' tokens, scoped, stored hashed;
/// each route goes through the service call the command line makes, and every answer is checked
/// against the OpenAPI document.
final class AdminAPITests: XCTestCase {
    func testScopedKeysAndEveryRoute() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let full = try await f.service.createAdminKey(name: "ops", scopes: AdminScope.allCases)
        let reader = try await f.service.createAdminKey(name: "auditor", scopes: [.devicesRead])
        let phone = try await f.login("p0", user: "carol")
        // Stored hashed: the secret is nowhere in the site's rows.
        let rows = try await f.storage.read { tx in try await tx.settings(prefix: "admin-key.", limit: 10) }
        XCTAssertEqual(rows.count, 2)
        XCTAssertFalse(rows.contains { $0.value.contains(String(full.split(separator: ".")[2])) })

        let app = Application(router: TrustAPI.router(service: f.service))
        try await app.test(.router) { client in
            func call(_ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil, key: String?, documented path: String? = nil) async throws -> (Int, String) {
                var headers: HTTPFields = [.contentType: "application/json"]
                if let key { headers[.authorization] = "Bearer " + key }
                return try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }) { r in
                    Self.conforms(path ?? String(uri.split(separator: "?")[0]), method.rawValue.lowercased(), Int(r.status.code), r.body)
                    return (Int(r.status.code), String(buffer: r.body))
                }
            }
            // Who may: no key, a phone's token, a deleted key → 401; a key without the scope → 403.
            var (status, body) = try await call(.get, "/v1/admin/devices", key: nil)
            XCTAssertEqual(status, 401, body)
            (status, body) = try await call(.get, "/v1/admin/devices", key: phone.access_token)
            XCTAssertEqual(status, 401, body)
            (status, body) = try await call(.post, "/v1/admin/devices", #"{"device":"x","user":"y","credentialKey":"00"}"#, key: reader)
            XCTAssertEqual(status, 403, body); XCTAssertTrue(body.contains("insufficient_scope") && body.contains("devices:write"), body)
            (status, body) = try await call(.get, "/v1/admin/devices", key: reader)
            XCTAssertEqual(status, 200, body); XCTAssertTrue(body.contains(#""device":"p0""#), body)
            (status, _) = try await call(.get, "/v1/admin/devices", key: String(reader.dropLast()) + (reader.hasSuffix("A") ? "B" : "A"))
            XCTAssertEqual(status, 401, "a wrong secret")

            // Devices: the login code answered is the one the phone logs in with.
            let point = Array(P256.Signing.PrivateKey().publicKey.x963Representation).map { String(format: "%02x", $0) }.joined()
            (status, body) = try await call(.post, "/v1/admin/devices", #"{"device":"p1","user":"alice","credentialKey":"\#(point)"}"#, key: full)
            XCTAssertEqual(status, 201, body)
            let code = try XCTUnwrap(try JSONDecoder().decode(TrustAPI.AdminDevice.self, from: Data(body.utf8)).code)
            _ = try await f.service.exchange(code: code)
            (status, body) = try await call(.post, "/v1/admin/devices", #"{"device":"p2","user":"alice","credentialKey":"04"}"#, key: full)
            XCTAssertEqual(status, 400, body)
            (status, body) = try await call(.get, "/v1/admin/users", key: full)
            XCTAssertEqual(body, #"{"users":["alice","carol"]}"#)
            (status, body) = try await call(.get, "/v1/admin/devices?user=alice", key: full)
            XCTAssertTrue(body.contains(#""device":"p1""#) && !body.contains("p0"), body)

            // Grants, credentials, revocations: the command line's calls, over HTTP.
            (status, body) = try await call(.post, "/v1/admin/grants", #"{"grant":"g1","user":"alice","readers":["\#(f.group)"]}"#, key: full)
            XCTAssertEqual(status, 201, body); XCTAssertTrue(body.contains(#""state":"active""#), body)
            (status, body) = try await call(.get, "/v1/admin/grants?user=alice", key: full)
            XCTAssertTrue(body.contains(#""grant":"g1""#), body)
            (status, body) = try await call(.post, "/v1/admin/devices/p1/credential", #"{"state":"sideways"}"#, key: full, documented: "/v1/admin/devices/{id}/credential")
            XCTAssertEqual(status, 400, body)
            (status, body) = try await call(.post, "/v1/admin/devices/nobody/credential", #"{"state":"suspended"}"#, key: full, documented: "/v1/admin/devices/{id}/credential")
            XCTAssertEqual(status, 404, body)
            (status, body) = try await call(.post, "/v1/admin/devices/p1/credential", #"{"state":"suspended","reason":"lost"}"#, key: full, documented: "/v1/admin/devices/{id}/credential")
            XCTAssertEqual(status, 200, body)
            let devices = try await f.service.devices(user: "alice")
            XCTAssertEqual(devices.first?.credentialState, .suspended)
            // Modify: the same service call as `trust grant modify`; the old document is revoked.
            let modify = "/v1/admin/grants/{id}/modify"
            let before = try await f.service.revocationEntries().count
            (status, body) = try await call(.post, "/v1/admin/grants/g1/modify", #"{"schedules":["mon-fri 08:00-18:00"]}"#, key: reader, documented: modify)
            XCTAssertEqual(status, 403, body); XCTAssertTrue(body.contains("grants:write"), body)
            (status, body) = try await call(.post, "/v1/admin/grants/g1/modify", #"{}"#, key: full, documented: modify)
            XCTAssertEqual(status, 400, body)
            (status, body) = try await call(.post, "/v1/admin/grants/g1/modify", #"{"readers":["zz"]}"#, key: full, documented: modify)
            XCTAssertEqual(status, 400, body)
            (status, body) = try await call(.post, "/v1/admin/grants/nope/modify", #"{"readers":["\#(f.group)"]}"#, key: full, documented: modify)
            XCTAssertEqual(status, 404, body)
            (status, body) = try await call(.post, "/v1/admin/grants/g1/modify", #"{"schedules":["mon-fri 08:00-18:00"]}"#, key: full, documented: modify)
            XCTAssertEqual(status, 200, body)
            let modified = try JSONDecoder().decode(TrustAPI.AdminGrant.self, from: Data(body.utf8))
            XCTAssertEqual(modified.schedules, ["mon-fri 08:00-18:00"]); XCTAssertEqual(modified.readers, [f.group])
            let g1 = try await f.service.grants(user: "alice").first { $0.id == "g1" }
            XCTAssertEqual(g1?.revision, 2, "modified through the service: a new revision")
            let after = try await f.service.revocationEntries().count
            XCTAssertEqual(after, before + 1, "the old document revoked")
            (status, body) = try await call(.post, "/v1/admin/grants/g1/revoke", #"{"reason":"left"}"#, key: full, documented: "/v1/admin/grants/{id}/revoke")
            XCTAssertEqual(status, 200, body); XCTAssertTrue(body.contains(#""state":"revoked""#) && body.contains(#""reason":"left""#), body)
            (status, body) = try await call(.post, "/v1/admin/grants/nope/revoke", #"{"reason":"x"}"#, key: full, documented: "/v1/admin/grants/{id}/revoke")
            XCTAssertEqual(status, 404, body)
            (status, body) = try await call(.post, "/v1/admin/grants/g1/modify", #"{"readers":["\#(f.group)"]}"#, key: full, documented: modify)
            XCTAssertEqual(status, 409, body)
            (status, body) = try await call(.get, "/v1/admin/revocations", key: full)
            XCTAssertEqual(status, 200, body); XCTAssertTrue(body.contains("credential:p1"), body)
            (status, body) = try await call(.get, "/v1/admin/revocations", key: reader)
            XCTAssertEqual(status, 403, body)

            // A device's history: why p1 lost its key, with the scope devices:read.
            let history = "/v1/admin/devices/{id}/events"
            (status, body) = try await call(.get, "/v1/admin/devices/p1/events", key: reader, documented: history)
            XCTAssertEqual(status, 200, body)
            let events = try JSONDecoder().decode(TrustAPI.DeviceHistory.self, from: Data(body.utf8))
            XCTAssertEqual(events.events.map(\.kind), [.keyIssued, .grantIssued, .keyDeleted, .credentialChanged, .grantModified, .grantRevoked], body)
            XCTAssertEqual(events.retained, DeviceEvent.retained)
            (status, body) = try await call(.get, "/v1/admin/devices/nobody/events", key: reader, documented: history)
            XCTAssertEqual(status, 404, body)
            (status, body) = try await call(.get, "/v1/admin/devices/\(String(repeating: "p", count: 65))/events", key: reader, documented: history)
            XCTAssertEqual(status, 400, body)
            let grantsOnly = try await f.service.createAdminKey(name: "grants", scopes: [.grantsRead])
            (status, body) = try await call(.get, "/v1/admin/devices/p1/events", key: grantsOnly, documented: history)
            XCTAssertEqual(status, 403, body); XCTAssertTrue(body.contains("devices:read"), body)

            // A deleted key is refused from then on.
            let id = String(full.split(separator: ".")[1])
            let deleted = try await f.service.deleteAdminKey(id: id)
            XCTAssertTrue(deleted)
            (status, body) = try await call(.get, "/v1/admin/users", key: full)
            XCTAssertEqual(status, 401, body)
        }
    }

    /// `trust admin-key create|list|delete` as a user runs them.
    func testTheAdminKeyCommands() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        _ = try LockBenchProcess.runEach(["trust init site"], in: dir)
        let bad = try LockBenchProcess.run(["trust", "admin-key", "create", "--site", "site", "--name", "ops", "--scope", "everything"], currentDirectory: dir)
        XCTAssertNotEqual(bad.status, 0); XCTAssertTrue(bad.stderr.contains("devices:read"), bad.stderr)
        let made = try LockBenchProcess.run(["trust", "admin-key", "create", "--site", "site", "--name", "ops", "--scope", "devices:read", "grants:read,grants:write"], currentDirectory: dir)
        XCTAssertEqual(made.status, 0, made.stderr)
        let key = try XCTUnwrap(made.stdout.range(of: #"lbk\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"#, options: .regularExpression).map { String(made.stdout[$0]) }, made.stdout)
        let listed = try LockBenchProcess.run(["trust", "admin-key", "list", "--site", "site"], currentDirectory: dir)
        XCTAssertTrue(listed.stdout.contains("ops\tdevices:read,grants:read,grants:write"), listed.stdout)
        XCTAssertFalse(listed.stdout.contains(String(key.split(separator: ".")[2])), "the secret is never shown again")
        let id = String(key.split(separator: ".")[1])
        XCTAssertEqual(try LockBenchProcess.run(["trust", "admin-key", "delete", "--site", "site", "--id", id], currentDirectory: dir).status, 0)
        XCTAssertNotEqual(try LockBenchProcess.run(["trust", "admin-key", "delete", "--site", "site", "--id", id], currentDirectory: dir).status, 0)
    }
}
