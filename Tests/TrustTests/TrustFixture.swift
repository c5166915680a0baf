import Codecs
import Crypto
import LockBenchTestSupport
import Foundation
@testable import TrustModel
@testable import TrustCore
@testable import TrustSQLite
@testable import TrustPostgres
@testable import TrustBackends
@testable import TrustHTTP
import XCTest

/// The storage backends the conformance tests run against.
enum TrustBackend: String, CaseIterable {
    /// A fresh SQLite file.
    case sqlite
    /// A fresh database on PostgreSQL (`ThrowawayPostgres`).
    case postgres

    /// A `--db` URL for a new, empty store of this kind.
    func freshURL(directory: String) throws -> String {
        switch self {
        case .sqlite: "sqlite:" + directory + "/trust.sqlite"
        case .postgres: try ThrowawayPostgres.database()
        }
    }
}

/// A service on a fresh store (SQLite unless told) with a manual clock, as the tests build it.
struct TrustFixture {
    static let t0 = RFC3339.parse("2026-03-02T08:00:00Z")!
    let directory: String
    let clock: ManualClock
    let service: TrustService
    let storage: any TrustStorage
    /// The store's `--db` URL: a second instance opens the same one.
    let url: String
    let tokenKey: P256.Signing.PrivateKey
    let group = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"

    static func make(_ settings: TrustSettings = TrustSettings(), backend: TrustBackend = .sqlite) async throws -> TrustFixture {
        let dir = NSTemporaryDirectory() + "lockbench-trust-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let clock = ManualClock(t0)
        let url = try backend.freshURL(directory: dir)
        let storage = try await TrustSite.storage(url)
        let tokenKey = P256.Signing.PrivateKey()
        let service = try await TrustService(storage: storage, issuerKey: .init(), tokenKey: tokenKey, settings: settings, clock: clock)
        return TrustFixture(directory: dir, clock: clock, service: service, storage: storage, url: url, tokenKey: tokenKey)
    }

    /// A second instance on the same store (as another `trust serve` process would be): its own
    /// storage connections and service, the site's keys and settings, the same clock. Close its
    /// storage when done.
    func sibling() async throws -> TrustService {
        try await TrustService(storage: try await TrustSite.storage(url), issuerKey: service.issuerKey,
                               tokenKey: tokenKey, settings: service.settings, clock: clock)
    }

    func close() async {
        try? await storage.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A device with a fresh credential key, logged in; returns its tokens.
    func login(_ device: String, user: String, key: P256.Signing.PrivateKey = .init()) async throws -> TokenResponse {
        let code = try await service.addDevice(id: device, user: user, credentialKey: Array(key.publicKey.x963Representation))
        return try await service.exchange(code: code)
    }
}

/// Asserts that `body` throws a `TrustError` with `code`.
func XCTAssertTrustError<T>(_ code: TrustError.Code, _ body: () async throws -> T, file: StaticString = #filePath, line: UInt = #line) async {
    do {
        _ = try await body()
        XCTFail("expected \(code.rawValue), it succeeded", file: file, line: line)
    } catch let e as TrustError {
        XCTAssertEqual(e.code, code, e.message, file: file, line: line)
    } catch {
        XCTFail("expected TrustError \(code.rawValue), got \(error)", file: file, line: line)
    }
}
