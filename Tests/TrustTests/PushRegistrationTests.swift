import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Push
import TrustCore
import TrustHTTP
import TrustModel
import XCTest

/// Issue 22 §2.2: push registrations survive a restart of `trust serve`: a token registered at
/// PUT /v1/push-token is stored before the 204, and a new service on the same database pushes to
/// it at once (before, the phone was forgotten until its next login, up to 30 days later).
final class PushRegistrationTests: XCTestCase {
    func testARegisteredTokenIsPushedToAfterARestart() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let tokens = try await f.login("p1", user: "alice")
        let relay = PushRelay(clock: f.clock)
        let received = Received()
        try relay.register(token: "token-p1", device: PushDevice { _, data in received.add(data); return true })

        let before = TrustPushNotifier(relay: relay, storage: f.storage)
        let app = Application(router: TrustAPI.router(service: f.service, pushTokens: { try await before.registerDurably(device: $0, token: $1) }))
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/push-token", method: .put,
                                     headers: [.authorization: "Bearer " + tokens.access_token, .contentType: "application/json"],
                                     body: ByteBuffer(string: #"{"token":"token-p1"}"#)) { r in XCTAssertEqual(r.status, .noContent) }
        }
        // "Restart": a new notifier on the same database knows the phone before it logs in again.
        let after = TrustPushNotifier(relay: relay, storage: f.storage)
        XCTAssertEqual(after.tokens(of: "p1"), [])
        let restored = try await after.restore()
        XCTAssertEqual(restored, 1)
        XCTAssertEqual(after.tokens(of: "p1"), ["token-p1"])
        let change = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
        let queued = await after.notify(change)
        XCTAssertEqual(queued, 1)
        await relay.deliverDue()
        XCTAssertEqual(received.all.map { $0["device"] }, ["p1"])
        // A token the relay retired is forgotten in the database too.
        relay.unregister(token: "token-p1")
        _ = await after.notify(change)
        let again = TrustPushNotifier(relay: relay, storage: f.storage)
        let none = try await again.restore()
        XCTAssertEqual(none, 0)
    }
}

private final class Received: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [[String: String]] = []
    func add(_ d: [String: String]) { lock.withLock { list.append(d) } }
    var all: [[String: String]] { lock.withLock { list } }
}
