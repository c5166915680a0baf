import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
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

/// What only a shared store has to get right: two instances (two `TrustService`s, each with its
/// own connections, as two `trust serve` processes) on one PostgreSQL database never fork a token
/// family, publish strictly increasing revocation serials, and push a change made through one to a
/// phone subscribed through the other. Plus the schema's version, the URL and the CLI's exits.
final class PostgresTests: XCTestCase {
    func testFiftyRotationsOfOneTokenAcrossTwoInstancesNeverFork() async throws {
        var settings = TrustSettings()
        settings.refreshGrace = 0
        let f = try await TrustFixture.make(settings, backend: .postgres); defer { Task { await f.close() } }
        let b = try await f.sibling()
        let t = try await f.login("p1", user: "alice")
        let fam = try await f.service.authorize(bearer: t.access_token).fam
        let instances = [f.service, b]
        let wins = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<50 { group.addTask { (try? await instances[i % 2].refresh(token: t.refresh_token)) != nil } }
            var n = 0
            for await won in group where won { n += 1 }
            return n
        }
        XCTAssertEqual(wins, 1, "exactly one rotation wins, whichever instance it reached")
        let family = try await b.storage.read { tx in try await tx.family(fam) }
        XCTAssertNotNil(family?.revokedAt, "the other 49 are reuse: the family is revoked")
        let tokens = try await b.storage.read { tx in try await tx.refreshTokens(family: fam) }
        XCTAssertEqual(tokens.filter { $0.state == .active }.count, 0, "no live token after reuse")
        XCTAssertEqual(tokens.count, 2, "the presented token and one successor: never two")
        try await b.storage.close()
    }

    /// With the grace window (the default), concurrent rotations of many phones across both
    /// instances each yield one new token that rotates again.
    func testRotationsOfManyFamiliesAcrossTwoInstancesAreIndependent() async throws {
        let f = try await TrustFixture.make(backend: .postgres); defer { Task { await f.close() } }
        let b = try await f.sibling()
        var first = [String]()
        for i in 0..<20 { first.append(try await f.login("p\(i)", user: "u\(i)").refresh_token) }
        let tokens = first, instances = [f.service, b]
        let second = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for i in 0..<20 { group.addTask { (i, try await instances[i % 2].refresh(token: tokens[i]).refresh_token) } }
            var out = [Int: String]()
            for try await (i, r) in group { out[i] = r }
            return out
        }
        for i in 0..<20 {
            let next = try XCTUnwrap(second[i])
            XCTAssertNotEqual(next, first[i])
            _ = try await instances[(i + 1) % 2].refresh(token: next)
        }
        try await b.storage.close()
    }

    func testRevocationSerialsAndTheChangeSequenceIncreaseAcrossInstances() async throws {
        let f = try await TrustFixture.make(backend: .postgres); defer { Task { await f.close() } }
        let b = try await f.sibling()
        for i in 0..<16 {
            _ = try await f.login("p\(i)", user: "u\(i)")
            _ = try await f.service.addGrant(id: "g\(i)", user: "u\(i)", readers: [f.group])
        }
        let before = try await f.storage.read { tx in try await tx.currentSequence() }
        let instances = [f.service, b]
        let serials = try await withThrowingTaskGroup(of: UInt64?.self) { group in
            for i in 0..<16 { group.addTask { try await instances[i % 2].revokeGrant(id: "g\(i)", reason: "test").revocationSerial } }
            var out = [UInt64]()
            for try await s in group { out.append(try XCTUnwrap(s)) }
            return out
        }
        XCTAssertEqual(Set(serials).count, 16, "every revocation published its own serial: \(serials.sorted())")
        XCTAssertEqual(serials.max()! - serials.min()!, 15, "consecutive serials, none skipped or repeated")
        let list = try await b.storage.read { tx in try await tx.revocationList() }
        XCTAssertEqual(list?.serial, serials.max(), "the stored list is the newest")
        let revoked = try await b.storage.read { tx in try await tx.revocations() }
        XCTAssertEqual(revoked.count, 16, "no revocation lost to a concurrent one")
        let after = try await b.storage.read { tx in try await tx.currentSequence() }
        XCTAssertGreaterThan(after, before)
        // Sequence numbers taken from both instances at once are all distinct and increasing.
        let taken = try await withThrowingTaskGroup(of: Int64.self) { group in
            for i in 0..<40 { group.addTask { try await instances[i % 2].storage.write { tx in try await tx.nextSequence() } } }
            var out = [Int64]()
            for try await n in group { out.append(n) }
            return out
        }
        XCTAssertEqual(Set(taken).count, 40)
        XCTAssertEqual(taken.min(), after + 1)
        XCTAssertEqual(taken.max(), after + 40)
        try await b.storage.close()
    }

    /// Two `lockbench trust serve` processes on one database behind no balancer: a login through
    /// one is good at the other, and 50 rotations of one token spread over both (no grace window)
    /// leave one winner and a revoked family.
    func testTwoTrustServeProcessesOnOneDatabase() async throws {
        let url = try ThrowawayPostgres.database()
        let dir = try LockBenchProcess.temporaryDirectory(self).path + "/site"
        var settings = TrustSettings()
        settings.refreshGrace = 0
        let site = try TrustSite.create(at: dir, settings: settings)
        let admin = try await site.service(database: url)
        let code = try await admin.addDevice(id: "p1", user: "alice", credentialKey: Array(P256.Signing.PrivateKey().publicKey.x963Representation))
        _ = try await admin.addGrant(id: "g1", user: "alice", readers: ["a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"])
        let (a, portA) = try CrashTests.serve(dir, ["--db", url])
        defer { a.terminate(); a.waitUntilExit() }
        let (b, portB) = try CrashTests.serve(dir, ["--db", url])
        defer { b.terminate(); b.waitUntilExit() }
        let clients = [TrustClient(baseURL: "http://127.0.0.1:\(portA)"), TrustClient(baseURL: "http://127.0.0.1:\(portB)")]

        do {
            let login = try await clients[0].token([("grant_type", "authorization_code"), ("code", code)])
            let fam = try await admin.authorize(bearer: login.access_token).fam
            let keys = try await clients[1].keys(accessToken: login.access_token, since: nil)
            XCTAssertEqual(keys?.keys.map(\.grant), ["g1"], "instance B answers a login made at instance A")
            let wins = await withTaskGroup(of: Bool.self) { group in
                for i in 0..<50 {
                    group.addTask { (try? await clients[i % 2].token([("grant_type", "refresh_token"), ("refresh_token", login.refresh_token)])) != nil }
                }
                var n = 0
                for await won in group where won { n += 1 }
                return n
            }
            XCTAssertEqual(wins, 1, "one rotation wins across both processes")
            let tokens = try await admin.storage.read { tx in try await tx.refreshTokens(family: fam) }
            XCTAssertEqual(tokens.filter { $0.state == .active }.count, 0)
            XCTAssertEqual(tokens.count, 2, "the presented token and one successor: never two")
        } catch {
            for c in clients { await c.shutdown() }
            throw error
        }
        for c in clients { await c.shutdown() }
        try await admin.storage.close()
    }

    /// `trust serve --push-relay` as a user runs it: two instances on one database and `push serve`
    /// as the relay, each its own process. The phone registers its push token through instance B;
    /// its grant revoked by the admin command line (a fourth process) reaches the relay as one
    /// push from B (A holds no token for it), and the phone's next poll carries the revocation.
    func testTrustServeInstancesPushChangesMadeByAnyProcess() async throws {
        try await ChangeFeedCases.trustServePushesAChangeTheAdminCommandLineMade(db: try ThrowawayPostgres.database(), instances: 2, in: self)
    }

    /// The whole loop as a user runs it, every actor its own process: a site made with the CLI on
    /// PostgreSQL, two `trust serve --push-relay`, `push serve`, and `phone run --push-relay` logged
    /// in at instance B. The grant revoked with the CLI reaches the phone as a push, and the poll
    /// that the push triggers deletes its key — nobody types `poll`.
    func testPhoneRunDeletesARevokedKeyOnThePushFromAnyInstance() throws {
        let (url, dir, code) = try cliSite()
        let serve = { (arguments: [String]) throws -> String in try self.serve(arguments, in: dir) }
        let relay = try serve(["push", "serve", "--port", "0"])
        _ = try serve(["trust", "serve", "--site", "site", "--db", url, "--port", "0", "--push-relay", relay])
        let b = try serve(["trust", "serve", "--site", "site", "--db", url, "--port", "0", "--push-relay", relay])
        let phone = try InteractiveProcess(["phone", "run", "--trust", b, "--device", "alice-phone", "--key", "site/alice-phone.key.pem",
                                            "--code", code, "--trust-reader", "site/front-door.reader.json", "--transport", "socket",
                                            "--port", "0", "--push-relay", relay], currentDirectory: dir)
        addTeardownBlock { phone.terminate() }
        let polled = try phone.waitForLine(containing: "polled", timeout: 30)
        XCTAssertTrue(polled.contains("trigger=login") && polled.contains("keys=1"), polled)
        _ = try phone.waitForLine(containing: "push-registered", timeout: 30)

        let revoke = try LockBenchProcess.run(["trust", "grant", "revoke", "--site", "site", "--db", url, "--grant", "g1", "--reason", "left"],
                                              currentDirectory: dir)
        XCTAssertEqual(revoke.status, 0, revoke.stderr)
        let pushed = try phone.waitForLine(containing: "push ", timeout: 30)
        XCTAssertTrue(pushed.contains("trigger=grant-revoked"), pushed)
        let deleted = try phone.waitForLine(containing: "polled", timeout: 30)
        XCTAssertTrue(deleted.contains("trigger=grant-revoked") && deleted.contains("deleted=1"), deleted)
        phone.send("show")
        let state = try phone.waitForLine(containing: "state ")
        XCTAssertTrue(state.contains("keys=0"), state)
    }

    /// `phone run`'s push commands against `push serve` and `trust serve --push-relay`, each its own
    /// process: a wake-up subscription wakes the phone with the data; after `force-quit` a trust
    /// push is discarded (no poll happens), after `launch` one arrives again; `rotate-push-token`
    /// registers the new token before dropping the old, and both the trust push and the wake-up
    /// subscription follow it.
    func testPhoneRunPushCommandsAgainstTheRelay() throws {
        let (url, dir, code) = try cliSite()
        let serve = { (arguments: [String]) throws -> String in try self.serve(arguments, in: dir) }
        let relay = try serve(["push", "serve", "--port", "0", "--app", "demo"])
        let trust = try serve(["trust", "serve", "--site", "site", "--db", url, "--port", "0", "--push-relay", relay])
        let phone = try InteractiveProcess(["phone", "run", "--trust", trust, "--device", "alice-phone", "--key", "site/alice-phone.key.pem",
                                            "--code", code, "--trust-reader", "site/front-door.reader.json", "--transport", "socket",
                                            "--port", "0", "--push-relay", relay, "--wakeup-app", "demo"], currentDirectory: dir)
        addTeardownBlock { phone.terminate() }
        _ = try phone.waitForLine(containing: "push-registered", timeout: 30)
        func admin(_ command: String) throws {
            let r = try LockBenchProcess.run(command.split(separator: " ").map(String.init) + ["--site", "site", "--db", url], currentDirectory: dir)
            XCTAssertEqual(r.status, 0, "\(command): \(r.stderr)")
        }
        func write(_ path: String, _ json: String) throws {
            var r = URLRequest(url: URL(string: relay + "/base/demo/" + path)!)
            r.httpMethod = "PUT"; r.httpBody = Data(json.utf8)
            let done = DispatchSemaphore(value: 0)
            URLSession.shared.dataTask(with: r) { _, _, _ in done.signal() }.resume()
            done.wait()
        }

        phone.send("subscribe doors value")
        _ = try phone.waitForLine(containing: "subscribed path=doors")
        try write("doors/front", #"{"state":"open"}"#)
        let woken = try phone.waitForLine(containing: "wakeup ", timeout: 15)
        XCTAssertTrue(woken.contains("t=value") && woken.contains("open"), woken)
        phone.send("subscribe doors sideways")
        _ = try phone.waitForLine(containing: "mode 'sideways' is one of")

        // Force-quit: the grant's revocation is pushed, the OS discards it, the phone does not poll.
        phone.send("force-quit")
        _ = try phone.waitForLine(containing: "force-quit")
        try admin("trust grant revoke --grant g1 --reason left")
        Thread.sleep(forTimeInterval: 2)
        XCTAssertFalse(phone.allLines.contains { $0.hasPrefix("push ") }, "a force-quit app got a background push: \(phone.allLines)")
        phone.send("launch")
        _ = try phone.waitForLine(containing: "launched")
        // Opening the app polls (issue 22 §2.3): the revocation the OS discarded is not lost.
        let onLaunch = try phone.waitForLine(containing: "polled", timeout: 15)
        XCTAssertTrue(onLaunch.contains("trigger=manual") && onLaunch.contains("deleted=1"), "launch polls and drops g1's key: \(onLaunch)")
        try admin("trust grant add --grant g2 --user alice --reader-identity site/front-door.reader.json --whole-group")
        let pushed = try phone.waitForLine(containing: "push ", timeout: 15)
        XCTAssertTrue(pushed.contains("trigger=grant-issued"), pushed)
        let polled = try phone.waitForLine(containing: "polled", timeout: 15)
        XCTAssertTrue(polled.contains("keys=1"), "the poll brings g2: \(polled)")

        // A new token: the trust push and the wake-up subscription follow it; the old one is gone.
        phone.send("rotate-push-token")
        let rotated = try phone.waitForLine(containing: "push-token-rotated", timeout: 15)
        let old = try XCTUnwrap(rotated.split(separator: " ").first { $0.hasPrefix("old=") }?.dropFirst(4))
        try admin("trust grant revoke --grant g2 --reason left")
        let again = try phone.waitForLine(containing: "push ", timeout: 15)
        XCTAssertTrue(again.contains("trigger=grant-revoked"), again)
        try write("doors/back", #"{"state":"shut"}"#)
        let wokenAgain = try phone.waitForLine(containing: "wakeup ", timeout: 15)
        XCTAssertTrue(wokenAgain.contains("shut"), wokenAgain)
        var gone = URLRequest(url: URL(string: relay + "/lockbench/devices/\(old)/inbox")!)
        gone.httpMethod = "GET"
        let status = Box()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: gone) { _, r, _ in status.value = (r as? HTTPURLResponse)?.statusCode ?? 0; done.signal() }.resume()
        done.wait()
        XCTAssertEqual(status.value, 404, "the old token is retired at the relay")
    }

    /// A site made with the CLI on a fresh PostgreSQL database: a reader, alice's phone (its login
    /// code), grant g1 on the reader's group.
    /// Issue 22 §2.1: `trust serve` pushes an approval request to the approver's phone and the
    /// answer to the requester's, each its own process: bob asks, alice's phone is woken and fetches
    /// it without being told to; alice approves, bob's phone is woken and holds the unlock command.
    func testApprovalRequestsAndAnswersArePushedBetweenSeparateProcesses() throws {
        let (url, dir, aliceCode) = try cliSite()
        let bobCode = LockBenchProcess.loginCode(in: try LockBenchProcess.runEach([
            "key credential site/bob-phone",
            "trust device add --site site --db \(url) --device bob-phone --user bob --credential-key site/bob-phone.pub.pem",
        ], in: dir))
        let relay = try serve(["push", "serve", "--port", "0"], in: dir)
        let trust = try serve(["trust", "serve", "--site", "site", "--db", url, "--port", "0", "--push-relay", relay], in: dir)
        func phone(_ device: String, _ code: String) throws -> InteractiveProcess {
            let p = try InteractiveProcess(["phone", "run", "--trust", trust, "--device", device, "--key", "site/\(device).key.pem", "--code", code,
                                            "--trust-reader", "site/front-door.reader.json", "--transport", "socket", "--port", "0",
                                            "--push-relay", relay], currentDirectory: dir)
            addTeardownBlock { p.terminate() }
            _ = try p.waitForLine(containing: "push-registered", timeout: 30)
            return p
        }
        let alice = try phone("alice-phone", aliceCode), bob = try phone("bob-phone", bobCode)
        bob.send("request-unlock alice site/front-door.reader.json")
        _ = try bob.waitForLine(containing: "requested", timeout: 15)
        // Alice typed nothing: the push woke her phone, which fetched the request.
        let woken = try alice.waitForLine(containing: "approval=", timeout: 15)
        XCTAssertTrue(woken.contains("requester=bob-phone"), woken)
        let fetched = try alice.waitForLine(containing: "fetched", timeout: 15)
        XCTAssertTrue(fetched.contains("new=1"), fetched)
        alice.send("approve")
        _ = try alice.waitForLine(containing: "approved", timeout: 15)
        // Bob typed nothing either: the answer's push brought the unlock command.
        _ = try bob.waitForLine(containing: "approval=", timeout: 15)
        let got = try bob.waitForLine(containing: "fetched", timeout: 15)
        XCTAssertTrue(got.contains("unlocks=1"), got)
    }

    func cliSite() throws -> (url: String, dir: URL, code: String) {
        let url = try ThrowawayPostgres.database()
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let code = LockBenchProcess.loginCode(in: try LockBenchProcess.runEach([
            "trust init site --db \(url)", "key reader site/front-door", "key credential site/alice-phone",
            "trust device add --site site --db \(url) --device alice-phone --user alice --credential-key site/alice-phone.pub.pem",
            "trust grant add --site site --db \(url) --grant g1 --user alice --reader-identity site/front-door.reader.json --whole-group",
        ], in: dir))
        XCTAssertFalse(code.isEmpty, "trust device add prints a login code")
        return (url, dir, code)
    }

    /// Starts a `lockbench … serve` in `dir` (stopped at teardown); its URL.
    func serve(_ arguments: [String], in dir: URL) throws -> String {
        let p = try InteractiveProcess(arguments, currentDirectory: dir)
        addTeardownBlock { p.terminate() }
        let listening = try p.waitForLine(containing: "listening on", timeout: 60)
        return try XCTUnwrap(listening.range(of: "http://").map { String(listening[$0.lowerBound...]) })
    }

    /// A phone subscribed through instance B; its grant is issued, then revoked, through instance
    /// A: B pushes each change, once (`ChangeFeedCases`, also on SQLite).
    func testChangesThroughOneInstanceArePushedByTheOtherToItsPhone() async throws {
        try await ChangeFeedCases.changesThroughOneInstanceArePushedByTheOther(.postgres)
    }

    /// A failed write announces nothing: NOTIFY is delivered at COMMIT only.
    func testARolledBackChangeIsNotAnnounced() async throws {
        try await ChangeFeedCases.aRolledBackChangeIsNotAnnounced(.postgres)
    }

    func testAChangeNamingManyDevicesIsSplitUnderTheNotifyLimit() {
        let change = TrustChange(affected: (0..<500).map { .init(device: String(repeating: "d", count: 60) + "\($0)", trigger: .lockGrantsRevoked) },
                                 revocationSerial: 7)
        let payloads = ChangePayload.encode(change)
        XCTAssertGreaterThan(payloads.count, 1)
        XCTAssertTrue(payloads.allSatisfy { $0.utf8.count < 8000 })
        let back = payloads.compactMap(ChangePayload.decode)
        XCTAssertEqual(back.flatMap(\.affected), change.affected)
        XCTAssertEqual(back.first?.revocationSerial, 7)
        XCTAssertNil(ChangePayload.decode("{\"a\":[[\"x\",\"no-such-trigger\"]]}"))
        XCTAssertNil(ChangePayload.decode("not json"))
    }

    func testTheSchemaIsVersionedAndANewerDatabaseIsRefused() async throws {
        let url = try ThrowawayPostgres.database()
        let s = try await PostgresTrustStorage.open(url: url)
        let version = try await s.read { tx in try await (tx as! PostgresTransaction).q("SELECT value FROM meta WHERE name = 'schema_version'") }
        XCTAssertEqual(try PGRow(try XCTUnwrap(version.first)).text("value"), String(PostgresTrustStorage.schemaVersion))
        _ = try await s.write { tx in _ = try await (tx as! PostgresTransaction).q("UPDATE meta SET value = '99' WHERE name = 'schema_version'") }
        try await s.close()
        // Opening again (as a second instance would) migrates nothing and refuses the newer schema.
        do {
            let again = try await PostgresTrustStorage.open(url: url)
            try await again.close()
            XCTFail("a database from a newer version was opened")
        } catch let e as TrustStorageError {
            XCTAssertTrue(e.description.contains("schema version 99"), e.description)
        }
    }

    func testBadURLsAreUsageErrorsAndAnUnreachableServerAnEnvironmentError() async throws {
        for bad in ["postgres://", "postgres://host/db", "postgres://u@/db", "postgres://u@host", "postgres://u@host:99999/db",
                    "postgres://u@host/db?sslmode=maybe", "mysql://u@host/db"] {
            await XCTAssertTrustError(.invalidRequest) { try await TrustSite.storage(bad) }
        }
        let port = try ThrowawayPostgres.freePort()
        do {
            _ = try await TrustSite.storage("postgres://u@127.0.0.1:\(port)/db?sslmode=disable")
            XCTFail("nothing listens there")
        } catch let e as TrustStorageError {
            XCTAssertTrue(e.description.contains("127.0.0.1:\(port)"), e.description)
        }
    }

    func testTheCLIExitsTwoOnABadURLAndThreeOnAnUnreachableServer() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self).path
        let bad = try LockBenchProcess.run(["trust", "init", dir + "/a", "--db", "postgres://nohost"])
        XCTAssertEqual(bad.status, 2, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("postgres://USER"), bad.stderr)
        let port = try ThrowawayPostgres.freePort()
        let down = try LockBenchProcess.run(["trust", "init", dir + "/b", "--db", "postgres://u@127.0.0.1:\(port)/db?sslmode=disable"])
        XCTAssertEqual(down.status, 3, down.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/b"), "no half site is left behind")
        let url = try ThrowawayPostgres.database()
        let ok = try LockBenchProcess.run(["trust", "init", dir + "/c", "--db", url])
        XCTAssertEqual(ok.status, 0, ok.stderr)
        let add = try LockBenchProcess.run(["trust", "grant", "add", "--site", dir + "/c", "--db", url, "--grant", "g1", "--user", "alice",
                                            "--reader", "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1", "--json"])
        XCTAssertEqual(add.status, 0, add.stderr)
        let again = try LockBenchProcess.run(["trust", "grant", "add", "--site", dir + "/c", "--db", url, "--grant", "g1", "--user", "alice",
                                              "--reader", "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"])
        XCTAssertEqual(again.status, 1, "the grant is in PostgreSQL, so a second add conflicts: \(again.stderr)")
        // --push-relay: an http(s) URL (on either store: `SQLiteChangeFeedTests`).
        let badRelay = try LockBenchProcess.run(["trust", "serve", "--site", dir + "/c", "--db", url, "--port", "0", "--push-relay", "relay:8490"])
        XCTAssertEqual(badRelay.status, 2, badRelay.stderr)
        XCTAssertTrue(badRelay.stderr.contains("is not an http(s) URL"), badRelay.stderr)
    }
}


private final class Box: @unchecked Sendable { var value = 0 }
