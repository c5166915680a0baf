import Codecs
import Crypto
import Foundation
@testable import Trust
import XCTest

/// A service on a fresh SQLite file with a manual clock, as the tests build it.
struct TrustFixture {
    static let t0 = RFC3339.parse("2026-03-02T08:00:00Z")!
    let directory: String
    let clock: ManualClock
    let service: TrustService
    let storage: SQLiteTrustStorage
    let group = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"

    static func make(_ settings: TrustSettings = TrustSettings()) async throws -> TrustFixture {
        let dir = NSTemporaryDirectory() + "lockbench-trust-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let clock = ManualClock(t0)
        let storage = try await SQLiteTrustStorage.open(path: dir + "/trust.sqlite")
        let service = try await TrustService(storage: storage, issuerKey: .init(), tokenKey: .init(), settings: settings, clock: clock)
        return TrustFixture(directory: dir, clock: clock, service: service, storage: storage)
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
