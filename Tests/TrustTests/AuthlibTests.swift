import Crypto
import Foundation
@testable import TrustModel
@testable import TrustCore
@testable import TrustSQLite
@testable import TrustPostgres
@testable import TrustBackends
@testable import TrustHTTP
import LockBenchTestSupport
import XCTest

/// An independent OAuth client (Python Authlib) against the token endpoint over loopback HTTP.
final class AuthlibTests: XCTestCase {
    func testAuthlibClientAgainstTheTokenEndpoint() async throws {
        var settings = TrustSettings()
        settings.refreshGrace = 0
        let f = try await TrustFixture.make(settings); defer { Task { await f.close() } }
        let server = try await TrustServer.start(service: f.service)
        defer { Task { await server.stop() } }
        let code = try await f.service.addDevice(id: "p1", user: "alice", credentialKey: Array(P256.Signing.PrivateKey().publicKey.x963Representation))
        let script = HTTPTests.repositoryRoot.appendingPathComponent("Tests/TrustTests/python/authlib_client.py").path
        let r = try LockBenchProcess.run(["python3", script, server.baseURL, code], executable: URL(fileURLWithPath: "/usr/bin/env"), timeout: 120)
        let text = r.stdout + r.stderr
        XCTAssertEqual(r.status, 0, "authlib client (pip install authlib requests):\n\(text)")
        XCTAssertEqual(text.components(separatedBy: "\n").filter { $0.hasPrefix("ok ") }.count, 7, text)
    }
}
