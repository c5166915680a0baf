import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lock
import LockBenchTestSupport
import Push
import TrustPhone
@testable import TrustModel
@testable import TrustCore
@testable import TrustSQLite
@testable import TrustPostgres
@testable import TrustBackends
@testable import TrustHTTP
import XCTest

/// The change feed's promises on either store (PostgreSQL: NOTIFY; SQLite: rows of `changes`
/// followed by each instance): a change through one instance is pushed by the instance holding the
/// phone's subscription, once; a rolled-back change is never announced.
enum ChangeFeedCases {
    /// A phone subscribed through instance B; its grant is issued, then revoked, through instance
    /// A: B pushes each change, once (A holds no subscription, so nothing else reaches the relay).
    static func changesThroughOneInstanceArePushedByTheOther(_ backend: TrustBackend) async throws {
        let f = try await TrustFixture.make(backend: backend); defer { Task { await f.close() } }
        let b = try await f.sibling()
        let relay = PushRelay(clock: f.clock)
        let inbox = Inbox()
        try relay.register(token: "token-p1", device: PushDevice { _, data in inbox.add(data); return true })
        let pushA = TrustPushNotifier(relay: relay), pushB = TrustPushNotifier(relay: relay)
        pushB.register(device: "p1", token: "token-p1")
        let followA = pushA.follow(try XCTUnwrap(f.storage as? TrustChangeFeed))
        let followB = pushB.follow(try XCTUnwrap(b.storage as? TrustChangeFeed))
        defer { followA.cancel(); followB.cancel() }
        _ = try await f.login("p1", user: "alice")

        _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
        let issued = try await inbox.waitFor(1)
        XCTAssertEqual(issued.map { $0["trigger"] }, [PollTrigger.grantIssued.rawValue], "one push for the new grant: \(issued)")
        _ = try await f.service.revokeGrant(id: "g1", reason: "left")
        let all = try await inbox.waitFor(2)
        XCTAssertEqual(all.map { $0["trigger"] }, [PollTrigger.grantIssued.rawValue, PollTrigger.grantRevoked.rawValue],
                       "exactly one push per change reaches the phone: \(all)")
        XCTAssertEqual(Set(all.map { $0["device"] }), ["p1"])
        try await b.storage.close()
    }

    /// A failed write announces nothing: the announcement is part of the transaction.
    static func aRolledBackChangeIsNotAnnounced(_ backend: TrustBackend) async throws {
        let f = try await TrustFixture.make(backend: backend); defer { Task { await f.close() } }
        let changes = try XCTUnwrap(f.storage as? TrustChangeFeed).changes()
        struct Refused: Error {}
        _ = try? await f.storage.write { tx in
            try await tx.announce(TrustChange(affected: [.init(device: "ghost", trigger: .manual)]))
            throw Refused()
        }
        _ = try await f.storage.write { tx in try await tx.announce(TrustChange(affected: [.init(device: "real", trigger: .manual)])) }
        var iterator = changes.makeAsyncIterator()
        let first = await iterator.next()
        XCTAssertEqual(first?.affected.map(\.device), ["real"])
    }
}

extension ChangeFeedCases {
    /// `trust serve --push-relay` as a user runs it: `instances` servers on one store (`db`; nil:
    /// the site's SQLite file), `push serve` as the relay and the admin command line, each its own
    /// process. The phone logs in at the first server and registers its push token with the last;
    /// its grant revoked by the command line reaches the relay as one push, from the last (the
    /// others hold no token for it), and the phone's next poll carries the revocation.
    /// With `providerKey`, the relay verifies senders (`push serve --provider-key`) and the
    /// servers sign their pushes (`trust serve --push-provider-key`); an unsigned push is refused.
    static func trustServePushesAChangeTheAdminCommandLineMade(db: String?, instances: Int, providerKey: Bool = false,
                                                               in test: XCTestCase) async throws {
        let dir = try LockBenchProcess.temporaryDirectory(test).path + "/site"
        let site = try TrustSite.create(at: dir, settings: TrustSettings())
        let admin = try await site.service(database: db)
        let code = try await admin.addDevice(id: "p1", user: "alice", credentialKey: Array(P256.Signing.PrivateKey().publicKey.x963Representation))
        _ = try await admin.addGrant(id: "g1", user: "alice", readers: ["a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"])
        try await admin.storage.close()
        var relayArguments = [String](), signing = [String]()
        if providerKey {
            let key = P256.Signing.PrivateKey()
            try PrivateKeyFile.write(key, to: dir + "/push-provider.key.pem")
            try Data(key.publicKey.pemRepresentation.utf8).write(to: URL(fileURLWithPath: dir + "/push-provider.pub.pem"))
            relayArguments = ["--provider-key", dir + "/push-provider.pub.pem"]
            signing = ["--push-provider-key", dir + "/push-provider.key.pem"]
        }
        let (relay, relayPort) = try CrashTests.start(["push", "serve", "--port", "0"] + relayArguments)
        defer { relay.terminate(); relay.waitUntilExit() }
        let relayURL = "http://127.0.0.1:\(relayPort)"
        let dbArguments = db.map { ["--db", $0] } ?? []
        var servers: [(Process, Int)] = []
        defer { for (p, _) in servers { p.terminate(); p.waitUntilExit() } }
        for _ in 0..<instances { servers.append(try CrashTests.serve(dir, dbArguments + ["--push-relay", relayURL] + signing)) }
        let (first, last) = (servers[0].1, servers[instances - 1].1)

        func call(_ method: String, _ url: String, bearer: String? = nil, body: String? = nil) async throws -> (Int, String) {
            var r = URLRequest(url: URL(string: url)!)
            r.httpMethod = method
            if let bearer { r.setValue("Bearer " + bearer, forHTTPHeaderField: "Authorization") }
            if let body { r.httpBody = Data(body.utf8); r.setValue("application/json", forHTTPHeaderField: "Content-Type") }
            let (data, response) = try await URLSession.shared.data(for: r)
            return ((response as! HTTPURLResponse).statusCode, String(decoding: data, as: UTF8.self))
        }
        let phone = TrustClient(baseURL: "http://127.0.0.1:\(first)")
        defer { Task { await phone.shutdown() } }
        let login = try await phone.token([("grant_type", "authorization_code"), ("code", code)])
        let firstPoll = try await phone.keys(accessToken: login.access_token, since: nil)
        let before = try XCTUnwrap(firstPoll)
        XCTAssertEqual(before.keys.map(\.grant), ["g1"])

        // The phone's token: opened at the relay, registered with the last instance only.
        let inboxSecret = "tok-p1-secret-0123456789"
        let opened = try await call("POST", relayURL + "/lockbench/devices/tok-p1", bearer: inboxSecret)
        XCTAssertEqual(opened.0, 204)
        let tokenURL = "http://127.0.0.1:\(last)/v1/push-token"
        let registered = try await call("PUT", tokenURL, bearer: login.access_token, body: #"{"token":"tok-p1"}"#)
        XCTAssertEqual(registered.0, 204, registered.1)
        let empty = try await call("PUT", tokenURL, bearer: login.access_token, body: #"{"token":""}"#)
        XCTAssertEqual(empty.0, 400)
        let unauthorized = try await call("PUT", tokenURL, bearer: "not-a-token", body: #"{"token":"tok-p1"}"#)
        XCTAssertEqual(unauthorized.0, 401)

        // The revocation, by the admin command line against the same store.
        let revoke = try LockBenchProcess.run(["trust", "grant", "revoke", "--site", dir] + dbArguments + ["--grant", "g1", "--reason", "left"])
        XCTAssertEqual(revoke.status, 0, revoke.stderr)
        let (status, inbox) = try await call("GET", relayURL + "/lockbench/devices/tok-p1/inbox?wait=10", bearer: inboxSecret)
        XCTAssertEqual(status, 200)
        XCTAssertTrue(inbox.contains(#""lockbench-trust":"1""#) && inbox.contains(#""device":"p1""#), inbox)
        XCTAssertEqual(inbox.components(separatedBy: "lockbench-trust").count - 1, 1, "one push, from the last instance: \(inbox)")
        let (_, more) = try await call("GET", relayURL + "/lockbench/devices/tok-p1/inbox?wait=1", bearer: inboxSecret)
        XCTAssertEqual(more, "[]", "no second push (the other instances hold no token for p1)")
        // The push is a hint; the poll it triggers carries the change.
        let afterPoll = try await phone.keys(accessToken: login.access_token, since: before.cursor)
        let after = try XCTUnwrap(afterPoll)
        XCTAssertEqual(after.deleted, before.keys.map(\.id), "the revoked grant's key comes back deleted")
        if providerKey {
            // The relay took the servers' pushes, and refuses one nobody signed.
            let (status, body) = try await call("POST", relayURL + "/3/device/tok-p1", body: #"{"aps":{"content-available":1}}"#)
            XCTAssertEqual(status, 403, body)
            XCTAssertTrue(body.contains("MissingProviderToken"), body)
            let (forged, forgedBody) = try await call("POST", relayURL + "/3/device/tok-p1",
                                                      bearer: try ProviderToken.sign(key: P256.Signing.PrivateKey(), issuer: "x", issuedAt: Date()),
                                                      body: #"{"aps":{"content-available":1}}"#)
            XCTAssertEqual(forged, 403, forgedBody)
            XCTAssertTrue(forgedBody.contains("InvalidProviderToken"), forgedBody)
        }
    }
}

/// Pushes as a relay's device receives them.
final class Inbox: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [[String: String]] = []
    func add(_ d: [String: String]) { lock.withLock { items.append(d) } }
    var count: Int { lock.withLock { items.count } }
    var all: [[String: String]] { lock.withLock { items } }

    /// Waits (up to 10 s) for `n` pushes, then 300 ms more for one too many; returns them all.
    func waitFor(_ n: Int) async throws -> [[String: String]] {
        let deadline = Date().addingTimeInterval(10)
        while count < n && Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
        try await Task.sleep(nanoseconds: 300_000_000)
        return all
    }
}

/// The SQLite store's change feed: the admin command line and `trust serve` are separate
/// processes on one file, so a change reaches the server only through the file.
final class SQLiteChangeFeedTests: XCTestCase {
    func testChangesThroughOneInstanceArePushedByTheOtherToItsPhone() async throws {
        try await ChangeFeedCases.changesThroughOneInstanceArePushedByTheOther(.sqlite)
    }

    func testARolledBackChangeIsNotAnnounced() async throws {
        try await ChangeFeedCases.aRolledBackChangeIsNotAnnounced(.sqlite)
    }

    /// A subscriber hears what is committed after it subscribed — not the history — in order,
    /// also a burst longer than one read; the table keeps only the newest rows.
    func testOnlyNewChangesInOrderAndTheTableStaysBounded() async throws {
        let f = try await TrustFixture.make(backend: .sqlite); defer { Task { await f.close() } }
        func announce(_ devices: Range<Int>) async throws {
            _ = try await f.storage.write { tx in
                for i in devices { try await tx.announce(TrustChange(affected: [.init(device: "d\(i)", trigger: .manual)])) }
            }
        }
        try await announce(0..<3)
        let changes = try XCTUnwrap(f.storage as? TrustChangeFeed).changes()
        let burst = SQLiteChangeFollower.batch * 2 + 10
        try await announce(3..<(3 + burst))
        var iterator = changes.makeAsyncIterator()
        var heard = [String]()
        while heard.count < burst, let change = await iterator.next() { heard += change.affected.map(\.device) }
        XCTAssertEqual(heard, (3..<(3 + burst)).map { "d\($0)" }, "the burst, in order, without the three before the subscription")

        let retained = SQLiteChangeFollower.retained
        try await announce(0..<(retained - burst + 50))
        let rows = try await f.storage.read { tx in try await (tx as! SQLiteTransaction).q("SELECT count(*) AS n FROM changes") }
        XCTAssertEqual(rows.first?.column("n")?.integer, retained, "the newest \(retained) rows are kept")
    }

    /// `trust serve --push-relay` on the default SQLite site, as a user runs it: the server, the
    /// relay and the admin command line each a process (`ChangeFeedCases`).
    func testTrustServePushesAChangeTheAdminCommandLineMade() async throws {
        try await ChangeFeedCases.trustServePushesAChangeTheAdminCommandLineMade(db: nil, instances: 1, in: self)
    }

    /// The same with the relay verifying senders (issue 22 §1.5): `trust serve
    /// --push-provider-key` signs, `push serve --provider-key` verifies every push.
    func testTrustServeSignsItsPushesForARelayThatVerifiesSenders() async throws {
        try await ChangeFeedCases.trustServePushesAChangeTheAdminCommandLineMade(db: nil, instances: 1, providerKey: true, in: self)
    }
}
