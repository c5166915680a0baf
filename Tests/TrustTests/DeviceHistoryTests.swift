import Codecs
import Foundation
import LockBenchTestSupport
import Push
@testable import TrustCore
@testable import TrustModel
import XCTest

/// Issue 22 §3, "why did this phone lose its key": every device keeps a bounded history of what
/// happened to its keys and why, its pushes, and its refused polls and refreshes, on both backends.
final class DeviceHistoryTests: XCTestCase {
    func testTheHistorySaysWhyAPhoneLostItsKey() async throws { try await history(.sqlite) }
    func testTheHistorySaysWhyAPhoneLostItsKeyOnPostgreSQL() async throws { try await history(.postgres) }

    func history(_ backend: TrustBackend) async throws {
        let f = try await TrustFixture.make(backend: backend); defer { Task { await f.close() } }
        let login = try await f.login("p1", user: "alice")
        let family = try await f.service.authorize(bearer: login.access_token).fam

        // Issued (inside the grant's transaction), then refreshed by a poll past expectedUpdate (the
        // poll path's batched write), then deleted when the grant is revoked.
        _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
        f.clock.advance(f.service.settings.pollInterval + 1)
        let refreshed = try await f.service.poll(device: "p1", since: nil, family: family)
        XCTAssertEqual(refreshed?.keys.first?.iteration, 2)
        let revoked = try await f.service.revokeGrant(id: "g1", reason: "left")

        // A refresh token used twice past the grace window: the login ends, and a poll with it is refused.
        _ = try await f.service.refresh(token: login.refresh_token)
        f.clock.advance(f.service.settings.refreshGrace + 1)
        await XCTAssertTrustError(.invalidGrant) { try await f.service.refresh(token: login.refresh_token) }
        await XCTAssertTrustError(.invalidToken) { try await f.service.poll(device: "p1", since: nil, family: family) }
        // Retried at once: refused again, recorded once (a refused poll is a write; a minute apart at most).
        await XCTAssertTrustError(.invalidToken) { try await f.service.poll(device: "p1", since: nil, family: family) }

        // A push queued, then one the relay refuses (the token retired).
        let relay = PushRelay(clock: f.clock)
        try relay.register(token: "token-p1", device: PushDevice { _, _ in true })
        let notifier = TrustPushNotifier(relay: relay, storage: f.storage)
        notifier.register(device: "p1", token: "token-p1")
        let sent = await notifier.notify([(device: "p1", trigger: .manual)])
        XCTAssertEqual(sent, 1)
        relay.unregister(token: "token-p1")
        let refused = await notifier.notify([(device: "p1", trigger: .manual)])
        XCTAssertEqual(refused, 0)

        let events = try await f.service.deviceHistory(device: "p1")
        XCTAssertEqual(events.map(\.kind), [.keyIssued, .grantIssued, .keyRefreshed, .keyDeleted, .grantRevoked,
                                             .refreshFailed, .pollFailed, .pushSent, .pushFailed], "\(events)")
        XCTAssertEqual(events.map(\.seq), events.map(\.seq).sorted(), "oldest first")
        XCTAssertEqual(Set(events.map(\.seq)).count, events.count, "each event its own number")
        let byKind = Dictionary(events.map { ($0.kind, $0) }) { a, _ in a }
        XCTAssertEqual(byKind[.keyIssued]?.key, KeyRecord.id(grant: "g1", device: "p1"))
        XCTAssertEqual(byKind[.keyIssued]?.iteration, 1)
        XCTAssertEqual(byKind[.keyRefreshed]?.iteration, 2)
        XCTAssertEqual(byKind[.keyRefreshed]?.at, RFC3339.format(f.clock.now().addingTimeInterval(-(f.service.settings.refreshGrace + 1))))
        XCTAssertNil(byKind[.keyDeleted]?.iteration)
        XCTAssertEqual(byKind[.grantRevoked]?.detail, "revocation serial \(try XCTUnwrap(revoked.revocationSerial))")
        XCTAssertEqual(byKind[.refreshFailed]?.reason, "invalid_grant")
        XCTAssertTrue(byKind[.refreshFailed]?.detail?.contains("reused") ?? false, "\(events)")
        XCTAssertEqual(byKind[.pollFailed]?.reason, "login-revoked")
        XCTAssertNil(byKind[.pushSent]?.reason)
        XCTAssertEqual(byKind[.pushFailed]?.reason, "unregistered")
        XCTAssertEqual(byKind[.pushFailed]?.detail, "manual")

        // Bounded per device: a batch of 100 leaves the newest `retained`, and another device's
        // history alone. The backend's two-statement trim and the one-row default agree.
        _ = try await f.login("p2", user: "bob")
        try await f.storage.recordDeviceEvents([DeviceEvent(seq: 0, device: "p2", kind: .pushSent, at: f.clock.now())])
        try await f.storage.write { tx in
            let batch = try await tx.numbered((0..<100).map { DeviceEvent(seq: 0, device: "p1", kind: .pollFailed, at: f.clock.now(), detail: "n\($0)") })
            try await tx.appendDeviceEvents(batch, keep: DeviceEvent.retained)
        }
        let kept = try await f.service.deviceHistory(device: "p1")
        XCTAssertEqual(kept.count, DeviceEvent.retained)
        XCTAssertEqual(kept.first?.detail, "n\(100 - DeviceEvent.retained)")
        XCTAssertEqual(kept.last?.detail, "n99")
        let other = try await f.service.deviceHistory(device: "p2")
        XCTAssertEqual(other.map(\.kind), [.pushSent])
        try await f.storage.write { tx in
            let batch = try await tx.numbered((0..<70).map { DeviceEvent(seq: 0, device: "p2", kind: .pollFailed, at: f.clock.now(), detail: "m\($0)") })
            try await tx.appendDeviceEventsOneByOne(batch, keep: 10)
        }
        let trimmed = try await f.service.deviceHistory(device: "p2")
        XCTAssertEqual(trimmed.map(\.detail), (60..<70).map { "m\($0)" })

        // No rows for a device that does not exist, whoever names it; an id that is no device id is refused.
        try await f.storage.recordDeviceEvents([DeviceEvent(seq: 0, device: "nobody", kind: .pushFailed, at: f.clock.now())])
        let stray = try await f.storage.read { tx in try await tx.settings(prefix: DeviceEvent.rowPrefix(device: "nobody"), limit: 10) }
        XCTAssertEqual(stray.count, 0)
        await XCTAssertTrustError(.notFound) { try await f.service.deviceHistory(device: "nobody") }
        await XCTAssertTrustError(.invalidRequest) { try await f.service.deviceHistory(device: "../p1") }
        await XCTAssertTrustError(.invalidRequest) { try await f.service.deviceHistory(device: String(repeating: "p", count: 65)) }
    }

    /// `trust device history ID [--json]` as an operator runs it.
    func testTheHistoryCommand() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        _ = try LockBenchProcess.runEach([
            "trust init site", "key reader site/front-door", "key credential site/alice-phone",
            "trust device add --site site --device alice-phone --user alice --credential-key site/alice-phone.pub.pem",
            "trust grant add --site site --grant g1 --user alice --reader-identity site/front-door.reader.json --whole-group",
            "trust grant revoke --site site --grant g1 --reason lost",
        ], in: dir)
        let text = try LockBenchProcess.run(["trust", "device", "history", "alice-phone", "--site", "site"], currentDirectory: dir)
        XCTAssertEqual(text.status, 0, text.stderr)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 4, text.stdout)
        XCTAssertTrue(lines[0].hasSuffix("key-issued  key=g1/alice-phone iteration=1"), text.stdout)
        XCTAssertTrue(lines[1].contains("grant-issued"), text.stdout)
        XCTAssertTrue(lines[2].contains("key-deleted"), text.stdout)
        XCTAssertTrue(lines[3].contains("grant-revoked") && lines[3].contains("revocation serial 1"), text.stdout)
        let json = try LockBenchProcess.run(["trust", "device", "history", "alice-phone", "--site", "site", "--json"], currentDirectory: dir)
        XCTAssertEqual(json.status, 0, json.stderr)
        let events = try JSONDecoder().decode([DeviceEvent].self, from: Data(json.stdout.utf8))
        XCTAssertEqual(events.map(\.kind), [.keyIssued, .grantIssued, .keyDeleted, .grantRevoked])
        let missing = try LockBenchProcess.run(["trust", "device", "history", "bob-phone", "--site", "site"], currentDirectory: dir)
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("no device bob-phone"), missing.stderr)
    }

    /// A history row is written member by member (`DeviceEvent.encoded`), not with `JSONEncoder`:
    /// it reads back as the same event for every kind, with members absent or present and text
    /// that needs escaping; and rows `JSONEncoder` wrote (older rows) still read.
    func testAHistoryRowReadsBackAsTheEventItWasAndOldRowsStillRead() throws {
        let at = Date(timeIntervalSince1970: 1_772_438_400)
        var events = DeviceEvent.Kind.allCases.map { DeviceEvent(seq: 7, device: "p1", kind: $0, at: at) }
        events.append(DeviceEvent(seq: Int64.max, device: "p.1@x", kind: .keyRefreshed, at: at, key: "g1/p1", grant: "g1", iteration: 12))
        events.append(DeviceEvent(seq: 0, device: "p-1", kind: .pushFailed, at: at, reason: "quote\"back\\slash/\u{1}\n",
                                  detail: "é\u{301} 日本 \t tab and \"more\""))
        events.append(DeviceEvent(seq: 3, device: "p_1", kind: .keyDeleted, at: at, key: "g2/p_1", grant: "g2"))
        for e in events {
            let row = e.encoded()
            XCTAssertEqual(try DeviceEvent(parsing: row), e, row)
            let old = String(decoding: try JSONEncoder().encode(e), as: UTF8.self)
            XCTAssertEqual(try DeviceEvent(parsing: old), e, old)
            // The same members as JSONEncoder writes, none added, none left out.
            let mine = try JSONSerialization.jsonObject(with: Data(row.utf8)) as? NSDictionary
            let theirs = try JSONSerialization.jsonObject(with: Data(old.utf8)) as? NSDictionary
            XCTAssertEqual(mine, theirs, row)
        }
    }
}
