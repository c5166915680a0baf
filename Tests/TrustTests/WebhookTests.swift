import Crypto
import Foundation
import Hummingbird
import HTTPServing
import LockBenchTestSupport
import Logging
import NIOCore
import Synchronization
@testable import TrustModel
@testable import TrustCore
@testable import TrustHTTP
import XCTest

/// Webhooks (issue 22 §3): a test subscriber receives the administrative changes as events signed
/// with its secret, in order, without a gap, through refusals (retried with back-off) and across
/// a restart of the dispatcher (changes made while none ran are delivered by the next).
final class WebhookTests: XCTestCase {
    final class Subscriber: Sendable {
        struct Call: Sendable { var body: [UInt8]; var signature: String; var id: String; var at: Date; var accepted: Bool }
        let calls = Mutex<[Call]>([])
        /// How many requests are refused (500) before the subscriber accepts.
        let refuseFirst: Int
        init(refuseFirst: Int) { self.refuseFirst = refuseFirst }
        var accepted: [Call] { calls.withLock { $0.filter(\.accepted) } }
        var all: [Call] { calls.withLock { $0 } }

        /// Runs `dispatcher`'s passes until this subscriber has accepted `n` events (a failure
        /// after 20 s).
        func deliver(until n: Int, _ dispatcher: WebhookDispatcher, file: StaticString = #filePath, line: UInt = #line) async throws {
            let deadline = Date().addingTimeInterval(20)
            while accepted.count < n {
                guard Date() < deadline else { return XCTFail("\(accepted.count) of \(n) events delivered in 20 s", file: file, line: line) }
                await dispatcher.deliverDue()
                try await Task.sleep(nanoseconds: 20_000_000)
            }
        }
    }

    /// A subscriber's endpoint at `/hook` on loopback: records every call (body, signature, event
    /// id) and refuses the first `refuseFirst` with 500, as a subscriber that is down would.
    static func serve(_ subscriber: Subscriber) async throws -> BackgroundHTTPServer? {
        let router = Router(context: BasicRequestContext.self)
        router.post("/hook") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 16)
            let refuse = subscriber.calls.withLock { $0.count < subscriber.refuseFirst }
            subscriber.calls.withLock {
                $0.append(.init(body: Array(body.readableBytesView), signature: request.headers[.init("LockBench-Signature")!] ?? "",
                                id: request.headers[.init("LockBench-Event-Id")!] ?? "", at: Date(), accepted: !refuse))
            }
            return Response(status: refuse ? .internalServerError : .noContent)
        }
        return try await BackgroundHTTPServer.start(router: router, host: "127.0.0.1", port: 0, serverName: "subscriber",
                                                    logger: Logger(label: "subscriber"))
    }

    /// The subscriber's check: the signature over `t.BODY` with the secret, made within 5 minutes.
    static func verify(_ call: Subscriber.Call, secret: String) -> Bool {
        let parts = Dictionary(uniqueKeysWithValues: call.signature.split(separator: ",").compactMap { p -> (String, String)? in
            let kv = p.split(separator: "=", maxSplits: 1); return kv.count == 2 ? (String(kv[0]), String(kv[1])) : nil
        })
        guard let t = parts["t"].flatMap({ Int64($0) }), let v1 = parts["v1"], abs(Date().timeIntervalSince1970 - Double(t)) < 300 else { return false }
        return WebhookDispatcher.signature(secret: secret, time: t, body: call.body) == "t=\(t),v1=\(v1)"
    }

    func testSignedOrderedRetriedAndDeliveredAcrossARestart() async throws { try await signedOrdered(.sqlite) }
    func testSignedOrderedRetriedAndDeliveredAcrossARestartOnPostgreSQL() async throws { try await signedOrdered(.postgres) }

    func signedOrdered(_ backend: TrustBackend) async throws {
        let f = try await TrustFixture.make(backend: backend); defer { Task { await f.close() } }
        let subscriber = Subscriber(refuseFirst: 2)
        guard let server = try await Self.serve(subscriber) else { return XCTFail("no subscriber") }
        defer { Task { await server.stop() } }

        _ = try await f.service.addDevice(id: "p1", user: "alice", credentialKey: Array(P256.Signing.PrivateKey().publicKey.x963Representation))
        _ = try await f.service.addDevice(id: "p2", user: "alice", credentialKey: Array(P256.Signing.PrivateKey().publicKey.x963Representation))
        _ = try await f.service.addGrant(id: "g0", user: "alice", readers: [f.group])   // before any subscriber: no event
        let hook = try await f.service.addWebhook(url: server.baseURL + "/hook")
        _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])

        let first = WebhookDispatcher(service: f.service, backoff: 0.2, maxBackoff: 1)
        try await subscriber.deliver(until: 2, first)
        let tries = subscriber.all
        XCTAssertEqual(tries.count, 4, "two refusals, then the two events")
        XCTAssertGreaterThanOrEqual(tries[1].at.timeIntervalSince(tries[0].at), 0.2, "back-off after the first refusal")
        XCTAssertGreaterThanOrEqual(tries[2].at.timeIntervalSince(tries[1].at), 0.4, "doubled after the second")
        XCTAssertEqual(tries[0].id, tries[2].id, "a refused event is sent again before any later one")

        // No dispatcher runs while these happen; the next one delivers them.
        _ = try await f.service.revokeGrant(id: "g1", reason: "left")
        _ = try await f.service.setCredential(device: "p1", to: .suspended)
        await first.release()   // stopped gracefully: the next instance need not wait out the lease
        let second = WebhookDispatcher(service: f.service, backoff: 0.2, maxBackoff: 1)
        try await subscriber.deliver(until: 5, second)
        let deadline = Date().addingTimeInterval(20)
        while try await f.service.nextWebhookEvent(for: hook) != nil, Date() < deadline {
            await second.deliverDue(); try await Task.sleep(nanoseconds: 20_000_000)
        }

        let events = try subscriber.accepted.map { try JSONDecoder().decode(TrustService.WebhookEvent.self, from: Data($0.body)) }
        XCTAssertEqual(events.map(\.seq), Array(1...Int64(events.count)), "in order, no gap, none twice")
        XCTAssertEqual(Array(events.map(\.type).prefix(5)), ["grant-issued", "grant-issued", "grant-revoked", "grant-revoked", "credential-changed"])
        XCTAssertEqual(events.filter { $0.type == "credential-changed" }.map(\.device), ["p1"])
        XCTAssertEqual(Set(events.prefix(2).map(\.device)), ["p1", "p2"])
        for call in subscriber.all { XCTAssertTrue(Self.verify(call, secret: hook.secret), call.signature) }
        var forged = subscriber.accepted[0]
        forged.body[forged.body.count - 2] ^= 1
        XCTAssertFalse(Self.verify(forged, secret: hook.secret), "a changed body fails the check")
        XCTAssertFalse(Self.verify(subscriber.accepted[0], secret: "whsec_other"), "another secret fails the check")
        let left = try await f.storage.read { tx in try await tx.settings(prefix: "webhook-event.", limit: 100) }
        XCTAssertTrue(left.isEmpty, "acknowledged events are deleted: \(left.map(\.name))")
        let removed = try await f.service.deleteWebhook(id: hook.id)
        XCTAssertTrue(removed)
        _ = try await f.service.addGrant(id: "g2", user: "alice", readers: [f.group])
        let none = try await f.storage.read { tx in try await tx.settings(prefix: "webhook-event.", limit: 100) }
        XCTAssertTrue(none.isEmpty, "no subscriber, no events stored")
    }

    func testApprovalsEnrolmentsAndFailedRefreshesAreEvents() async throws { try await moreEvents(.sqlite) }
    func testApprovalsEnrolmentsAndFailedRefreshesAreEventsOnPostgreSQL() async throws { try await moreEvents(.postgres) }

    /// Beyond the administrative changes: a device enrolled, an approval requested and answered, a
    /// key refresh refused, each written in its change's own transaction (a refused request writes
    /// none), delivered signed and in order across a restart of the dispatcher.
    func moreEvents(_ backend: TrustBackend) async throws {
        let f = try await TrustFixture.make(backend: backend); defer { Task { await f.close() } }
        let subscriber = Subscriber(refuseFirst: 0)
        guard let server = try await Self.serve(subscriber) else { return XCTFail("no subscriber") }
        defer { Task { await server.stop() } }
        let hook = try await f.service.addWebhook(url: server.baseURL + "/hook")

        _ = try await f.login("alice-phone", user: "alice")
        _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
        let bob = try await f.login("bob-phone", user: "bob")
        let asked = try await f.service.requestApproval(ApprovalRequest(approver: "alice", lock: f.group), requester: "bob-phone")
        // Refused (carol holds no grant): its transaction wrote nothing, so no event either.
        await XCTAssertTrustError(.forbidden) { try await f.service.requestApproval(ApprovalRequest(approver: "carol", lock: f.group), requester: "bob-phone") }
        let first = WebhookDispatcher(service: f.service, backoff: 0.2, maxBackoff: 1)
        try await subscriber.deliver(until: 4, first)
        await first.release()

        // While no dispatcher runs: an answer and a refused refresh (a reused token); the next delivers them.
        _ = try await f.service.answerApproval(id: asked.id, device: "alice-phone", .deny)
        _ = try await f.service.refresh(token: bob.refresh_token)
        f.clock.advance(f.service.settings.refreshGrace + 1)
        await XCTAssertTrustError(.invalidGrant) { try await f.service.refresh(token: bob.refresh_token) }
        let second = WebhookDispatcher(service: f.service, backoff: 0.2, maxBackoff: 1)
        try await subscriber.deliver(until: 6, second)
        let deadline = Date().addingTimeInterval(20)
        while try await f.service.nextWebhookEvent(for: hook) != nil, Date() < deadline {
            await second.deliverDue(); try await Task.sleep(nanoseconds: 20_000_000)
        }

        let events = try subscriber.accepted.map { try JSONDecoder().decode(TrustService.WebhookEvent.self, from: Data($0.body)) }
        XCTAssertEqual(events.map(\.seq), Array(1...Int64(events.count)), "in order, no gap, none twice")
        XCTAssertEqual(events.map(\.type), ["device-enrolled", "grant-issued", "device-enrolled", "approval-requested", "approval-answered", "key-refresh-failed"])
        XCTAssertEqual(events.map(\.device), ["alice-phone", "alice-phone", "bob-phone", "bob-phone", "alice-phone", "bob-phone"])
        XCTAssertEqual(events[3].approval, asked.id); XCTAssertEqual(events[4].approval, asked.id)
        XCTAssertEqual(events[4].reason, "denied:denied")
        XCTAssertEqual(events[5].reason, "invalid_grant")
        for call in subscriber.all { XCTAssertTrue(Self.verify(call, secret: hook.secret), call.signature) }
    }

    /// As a user runs it: `trust webhook add`, `trust serve` delivering changes the command line
    /// makes, stopped, a change made while it is down, and started again: the subscriber gets every
    /// event, in order, each signed with the secret `webhook add` printed.
    func testTrustServeDeliversAcrossItsRestart() async throws {
        let subscriber = Subscriber(refuseFirst: 0)
        guard let server = try await Self.serve(subscriber) else { return XCTFail("no subscriber") }
        defer { Task { await server.stop() } }
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let made = try LockBenchProcess.runEach([
            "trust init site", "key reader site/front-door", "key credential site/alice-phone",
            "trust device add --site site --device alice-phone --user alice --credential-key site/alice-phone.pub.pem",
            "trust webhook add --site site --url \(server.baseURL)/hook",
        ], in: dir).joined(separator: "\n")
        let secret = try XCTUnwrap(made.range(of: #"whsec_[A-Za-z0-9_-]+"#, options: .regularExpression).map { String(made[$0]) }, made)
        func serve() throws -> InteractiveProcess {
            let p = try InteractiveProcess(["trust", "serve", "--site", "site", "--port", "0"], currentDirectory: dir)
            addTeardownBlock { p.terminate() }
            _ = try p.waitForLine(containing: "listening on", timeout: 60)
            return p
        }
        func waitFor(_ n: Int) async throws {
            let deadline = Date().addingTimeInterval(30)
            while subscriber.accepted.count < n {
                guard Date() < deadline else { return XCTFail("\(subscriber.accepted.count) of \(n) events in 30 s") }
                try await Task.sleep(nanoseconds: 50_000_000)
            }
        }
        let first = try serve()
        _ = try LockBenchProcess.runEach(["trust grant add --site site --grant g1 --user alice --reader-identity site/front-door.reader.json --whole-group"], in: dir)
        try await waitFor(1)
        first.terminate()
        _ = try LockBenchProcess.runEach(["trust grant revoke --site site --grant g1 --reason left"], in: dir)
        try await Task.sleep(nanoseconds: 500_000_000)
        XCTAssertEqual(subscriber.accepted.count, 1, "nothing is delivered while no server runs")
        _ = try serve()
        try await waitFor(2)
        let events = try subscriber.accepted.map { try JSONDecoder().decode(TrustService.WebhookEvent.self, from: Data($0.body)) }
        XCTAssertEqual(events.map(\.type), ["grant-issued", "grant-revoked"])
        XCTAssertEqual(events.map(\.seq), [1, 2])
        for call in subscriber.accepted { XCTAssertTrue(Self.verify(call, secret: secret), call.signature) }
    }

    /// Item 5 of the operator work: two `trust serve` processes on one PostgreSQL database deliver
    /// one ordered stream (a lease per subscriber, taken in the writers' serialized transactions):
    /// every event once, in order, and when the instance delivering stops, the other takes over
    /// within the lease (`--webhook-lease 2`). Without the lease both instances post every event.
    func testTwoTrustServeInstancesDeliverOneOrderedStream() async throws {
        let url = try ThrowawayPostgres.database()
        let subscriber = Subscriber(refuseFirst: 0)
        guard let server = try await Self.serve(subscriber) else { return XCTFail("no subscriber") }
        defer { Task { await server.stop() } }
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let made = try LockBenchProcess.runEach([
            "trust init site --db \(url)", "key reader site/front-door", "key credential site/alice-phone",
            "trust device add --site site --db \(url) --device alice-phone --user alice --credential-key site/alice-phone.pub.pem",
            "trust webhook add --site site --db \(url) --url \(server.baseURL)/hook",
        ], in: dir).joined(separator: "\n")
        let secret = try XCTUnwrap(made.range(of: #"whsec_[A-Za-z0-9_-]+"#, options: .regularExpression).map { String(made[$0]) }, made)
        func serve() throws -> InteractiveProcess {
            let p = try InteractiveProcess(["trust", "serve", "--site", "site", "--db", url, "--port", "0", "--webhook-lease", "2"], currentDirectory: dir)
            addTeardownBlock { p.terminate() }
            _ = try p.waitForLine(containing: "listening on", timeout: 60)
            return p
        }
        func change(_ n: Int) throws {
            _ = try LockBenchProcess.runEach(["trust grant add --site site --db \(url) --grant g\(n) --user alice --reader-identity site/front-door.reader.json --whole-group"], in: dir)
        }
        func delivered(_ n: Int) async throws -> [Int64] {
            let deadline = Date().addingTimeInterval(30)
            while subscriber.accepted.count < n {
                guard Date() < deadline else { XCTFail("\(subscriber.accepted.count) of \(n) events in 30 s"); break }
                try await Task.sleep(nanoseconds: 50_000_000)
            }
            try await Task.sleep(nanoseconds: 1_000_000_000)   // a second instance posting too would show by now
            return try subscriber.accepted.map { try JSONDecoder().decode(TrustService.WebhookEvent.self, from: Data($0.body)).seq }
        }

        let a = try serve(), b = try serve()
        for n in 1...6 { try change(n) }
        var seqs = try await delivered(6)
        XCTAssertEqual(seqs, Array(1...6), "one stream from two instances: each event once, in order")
        // Whichever delivered, stop one, then the other with a fresh instance beside it: at least one
        // handover happens, and the stream goes on without a gap or a repeat.
        a.terminate()
        try change(7)
        seqs = try await delivered(7)
        XCTAssertEqual(seqs, Array(1...7))
        let c = try serve()
        b.terminate()
        try change(8)
        seqs = try await delivered(8)
        XCTAssertEqual(seqs, Array(1...8), "the remaining instance took over")
        // Killed (no graceful release): the lease runs out (2 s) and a new instance takes over.
        let d = try serve()
        kill(c.process.processIdentifier, SIGKILL)
        c.process.waitUntilExit()
        try change(9)
        seqs = try await delivered(9)
        XCTAssertEqual(seqs, Array(1...9), "a killed holder's lease runs out and the other instance delivers")
        d.terminate()
        for call in subscriber.accepted { XCTAssertTrue(Self.verify(call, secret: secret), call.signature) }
    }
}
