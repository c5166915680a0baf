import Crypto
import Foundation
@testable import TrustModel
@testable import TrustCore
@testable import TrustSQLite
@testable import TrustPostgres
@testable import TrustBackends
@testable import TrustHTTP
import XCTest

/// The storage conformance suite, run against every backend (SQLite and PostgreSQL): the write
/// path's batching (a failing body rolls back alone), polls stored by compare-and-swap, rotations
/// decided together — each must behave exactly as one at a time, on either store.
final class StorageTests: XCTestCase {
    /// Runs `body` once per backend; an error names the backend it happened on.
    func forEachBackend(_ body: (TrustBackend) async throws -> Void) async throws {
        for backend in TrustBackend.allCases {
            do { try await body(backend) } catch { XCTFail("\(backend.rawValue): \(error)") }
        }
    }

    func testAFailingBodyInABatchRollsBackAloneAndTheOthersCommit() async throws {
        try await forEachBackend { backend in
            let f = try await TrustFixture.make(backend: backend); defer { Task { await f.close() } }
            struct Refused: Error {}
            // Body 0 holds the writer while the other 39 queue: they form one batch, with 3 that throw.
            let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
                for i in 0..<40 {
                    group.addTask {
                        if i > 0 { try? await Task.sleep(nanoseconds: 50_000_000) }
                        do {
                            try await f.storage.write { tx in
                                if i == 0 { try await Task.sleep(nanoseconds: 300_000_000) }
                                try await tx.setSetting("batch.\(i)", "written")
                                if i % 10 == 7 { throw Refused() }
                            }
                            return (i, true)
                        } catch { return (i, false) }
                    }
                }
                var out = [Int: Bool]()
                for await (i, ok) in group { out[i] = ok }
                return out
            }
            for i in 0..<40 {
                let stored = try await f.storage.read { tx in try await tx.setting("batch.\(i)") }
                if i % 10 == 7 {
                    XCTAssertEqual(outcomes[i], false, "body \(i) threw: its writer hears so")
                    XCTAssertNil(stored, "body \(i) threw: none of its writes happened")
                } else {
                    XCTAssertEqual(outcomes[i], true)
                    XCTAssertEqual(stored, "written", "body \(i) committed although another body of its batch threw")
                }
            }
        }
    }

    /// Keys signed from a snapshot are stored only while the device's keys and the revocation list
    /// are still at the versions the poll read.
    func testPollKeysAreStoredOnlyIfNothingMovedSinceTheRead() async throws {
        try await forEachBackend { backend in
            let f = try await TrustFixture.make(backend: backend); defer { Task { await f.close() } }
            _ = try await f.login("p1", user: "alice")
            _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
            let state = try await f.storage.read { tx in try await tx.pollState(device: "p1", family: nil) }
            let keysAt = state.keys.map(\.sequence).max()
            XCTAssertNotNil(keysAt)
            var next = try XCTUnwrap(state.keys.first)
            next.iteration += 1
            let key = next

            // The device's keys moved (an older version read): refused, nothing written.
            let stale = try await f.storage.write { tx in
                try await TrustService.store([.init(device: "p1", keysAt: keysAt! - 1, listAt: state.list?.sequence, keys: [key], at: f.clock.now())], tx: tx)
            }
            XCTAssertNil(try stale[0].get())
            // The list moved: refused.
            let listMoved = try await f.storage.write { tx in
                try await TrustService.store([.init(device: "p1", keysAt: keysAt, listAt: 999, keys: [key], at: f.clock.now())], tx: tx)
            }
            XCTAssertNil(try listMoved[0].get())
            let unchanged = try await f.storage.read { tx in try await tx.keys(device: "p1") }
            XCTAssertEqual(unchanged.map(\.iteration), [1])

            // Unchanged: stored with the next sequence; a second write of the same device in the same
            // batch was planned from the same read, so it is refused (it re-plans).
            let both = try await f.storage.write { tx in
                try await TrustService.store([.init(device: "p1", keysAt: keysAt, listAt: state.list?.sequence, keys: [key], at: f.clock.now()),
                                              .init(device: "p1", keysAt: keysAt, listAt: state.list?.sequence, keys: [key], at: f.clock.now())], tx: tx)
            }
            let written = try XCTUnwrap(try both[0].get())
            XCTAssertNil(try both[1].get())
            XCTAssertEqual(written[0].sequence, state.sequence + 1)
            let after = try await f.storage.read { tx in try await tx.pollState(device: "p1", family: nil) }
            XCTAssertEqual(after.keys.map(\.iteration), [2])
            XCTAssertEqual(after.sequence, state.sequence + 1)
        }
    }

    /// Polls of one device at once re-issue its key once: one iteration, the same document for all.
    func testConcurrentPollsOfOneDeviceReissueOnce() async throws {
        try await forEachBackend { backend in
            let f = try await TrustFixture.make(backend: backend); defer { Task { await f.close() } }
            _ = try await f.login("p1", user: "alice")
            _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
            let initial = try await f.service.poll(device: "p1", since: nil)
            let first = try XCTUnwrap(initial)
            f.clock.advance(8 * 3600)
            let answers = try await withThrowingTaskGroup(of: PollResult?.self) { group in
                for _ in 0..<20 { group.addTask { try await f.service.poll(device: "p1", since: Int64(first.cursor)!) } }
                var out = [PollResult?]()
                for try await r in group { out.append(r) }
                return out
            }
            XCTAssertEqual(answers.count, 20)
            let keys = answers.compactMap { $0?.keys.first }
            XCTAssertEqual(keys.count, 20, "every poll from the old cursor gets the re-issued key")
            XCTAssertEqual(Set(keys.map(\.iteration)), [2], "re-issued once")
            XCTAssertEqual(Set(keys.map(\.document)).count, 1, "the same document for every poll")
            let stored = try await f.storage.read { tx in try await tx.keys(device: "p1") }
            XCTAssertEqual(stored.map(\.iteration), [2])
            // From the newest cursor nothing changed.
            let cursor = answers.compactMap { $0.flatMap { Int64($0.cursor) } }.max()!
            let none = try await f.service.poll(device: "p1", since: cursor)
            XCTAssertNil(none)
        }
    }

    /// With no grace window, 50 rotations of one token at once: one wins, the rest are reuse, the
    /// family is revoked and no token of it is live — never two.
    func testFiftyConcurrentRefreshesWithoutGraceRevokeTheFamily() async throws {
        try await forEachBackend { backend in
            var settings = TrustSettings()
            settings.refreshGrace = 0
            let f = try await TrustFixture.make(settings, backend: backend); defer { Task { await f.close() } }
            let t = try await f.login("p1", user: "alice")
            let fam = try await f.service.authorize(bearer: t.access_token).fam
            let results = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<50 { group.addTask { (try? await f.service.refresh(token: t.refresh_token)) != nil } }
                var out = [Bool]()
                for await r in group { out.append(r) }
                return out
            }
            XCTAssertEqual(results.filter { $0 }.count, 1, "exactly one rotation wins")
            let family = try await f.storage.read { tx in try await tx.family(fam) }
            XCTAssertNotNil(family?.revokedAt, "reuse revoked the family")
            let tokens = try await f.storage.read { tx in try await tx.refreshTokens(family: fam) }
            XCTAssertEqual(tokens.filter { $0.state == .active }.count, 0)
            XCTAssertEqual(tokens.count, 2, "the presented token and the one successor")
        }
    }

    /// Many phones rotating at once (batched): each gets a new token and can rotate again.
    func testConcurrentRotationsOfManyFamiliesAreIndependent() async throws {
        try await forEachBackend { backend in
            let f = try await TrustFixture.make(backend: backend); defer { Task { await f.close() } }
            var first = [String]()
            for i in 0..<30 { first.append(try await f.login("p\(i)", user: "u\(i)").refresh_token) }
            let tokens = first
            let second = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for i in 0..<30 { group.addTask { (i, try await f.service.refresh(token: tokens[i]).refresh_token) } }
                var out = [Int: String]()
                for try await (i, r) in group { out[i] = r }
                return out
            }
            for i in 0..<30 {
                let next = try XCTUnwrap(second[i])
                XCTAssertNotEqual(next, first[i])
                _ = try await f.service.refresh(token: next)
            }
        }
    }

    /// A version-1 file (before the grant and device indexes) is migrated on open.
    func testSchemaOneIsMigrated() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        _ = try await f.storage.write { tx in
            let t = tx as! SQLiteTransaction
            _ = try await t.q("DROP INDEX grants_by_user")
            _ = try await t.q("DROP INDEX devices_by_user")
            _ = try await t.q("PRAGMA user_version = 1")
        }
        let reopened = try await SQLiteTrustStorage.open(path: (f.storage as! SQLiteTrustStorage).path)
        let indexes = try await reopened.read { tx in
            try await (tx as! SQLiteTransaction).q("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '%_by_user'")
        }.compactMap { $0.column("name")?.string }
        XCTAssertEqual(Set(indexes), ["grants_by_user", "devices_by_user"])
        let version = try await reopened.read { tx in try await (tx as! SQLiteTransaction).q("PRAGMA user_version") }
        XCTAssertEqual(version.first?.column("user_version")?.integer, SQLiteTrustStorage.schemaVersion)
        try await reopened.close()
    }
}
