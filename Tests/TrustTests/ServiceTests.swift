import Codecs
import Crypto
import Foundation
import OfflineUnlock
@testable import TrustModel
@testable import TrustCore
@testable import TrustSQLite
@testable import TrustPostgres
@testable import TrustBackends
@testable import TrustHTTP
import XCTest

/// The service issues exactly the documents the lock reads (docs/documents.md), keeps them current
/// through the poll, and manages credential states (Schlage guide).
final class ServiceTests: XCTestCase {
    func trustStore(_ f: TrustFixture) throws -> TrustStore {
        try TrustStore(issuerPublicKeys: [Array(f.service.issuerKey.publicKey.x963Representation)])
    }

    /// Key documents write MSO key 7 false (they are evidence of time for a lock after a power
    /// loss) unless the site asks for time verification.
    func testTheSiteSettingAsksForTimeVerification() async throws {
        for asked in [false, true] {
            var settings = TrustSettings()
            if asked { try settings.set("time-verification-required", "true") }
            let f = try await TrustFixture.make(settings); defer { Task { await f.close() } }
            let t = try await f.login("p1", user: "alice", key: P256.Signing.PrivateKey())
            _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
            let claims = try await f.service.authorize(bearer: t.access_token)
            let keys = try await f.service.poll(device: claims.sub.value, since: nil)!
            let doc = try AccessDocument(parsing: Array(Data(base64Encoded: keys.keys[0].document)!))
            XCTAssertEqual(doc.document.timeVerificationRequired, asked)
        }
        var s = TrustSettings()
        XCTAssertThrowsError(try s.set("time-verification-required", "maybe"))
        XCTAssertNil(try JSONDecoder().decode(TrustSettings.self, from: try JSONEncoder().encode(TrustSettings())).timeVerificationRequired)
    }

    func testPollIssuesAccessDocumentsWithExpectedUpdateAndIteration() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let key = P256.Signing.PrivateKey()
        let t = try await f.login("p1", user: "alice", key: key)
        _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group], schedules: ["mon-fri 08:00-18:00"])
        let claims = try await f.service.authorize(bearer: t.access_token)
        let first = try await f.service.poll(device: claims.sub.value, since: nil)!
        XCTAssertEqual(first.keys.count, 1)
        let doc = try AccessDocument(parsing: Array(Data(base64Encoded: first.keys[0].document)!))
        XCTAssertEqual(try doc.document.verify(trust: try trustStore(f)), Array(f.service.issuerKey.publicKey.x963Representation))
        XCTAssertEqual(doc.credentialPublicKey, Array(key.publicKey.x963Representation))
        XCTAssertEqual(doc.validity.signed, TrustFixture.t0)
        XCTAssertEqual(doc.validity.validUntil, TrustFixture.t0.addingTimeInterval(8 * 3600))
        XCTAssertEqual(doc.validity.expectedUpdate, TrustFixture.t0.addingTimeInterval(8 * 3600))
        // The re-issue count is the poll's; the document carries no validity iteration, so the
        // lock's Aliro §7.2.3 rule (iterations compared across the issuer, 8 apart is invalid)
        // never turns one phone's key invalid because another's was re-issued.
        XCTAssertNil(doc.validity.validityIteration)
        XCTAssertEqual(first.keys[0].iteration, 1)
        XCTAssertEqual(doc.access.readers.map(\.description), [f.group])
        XCTAssertEqual(doc.access.schedules.count, 1)

        // Before expectedUpdate: nothing changed (204).
        f.clock.advance(8 * 3600 - 1)
        let none = try await f.service.poll(device: "p1", since: Int64(first.cursor)!)
        XCTAssertNil(none)
        // At expectedUpdate: re-issued, next iteration, same document id.
        f.clock.advance(1)
        let second = try await f.service.poll(device: "p1", since: Int64(first.cursor)!)!
        let doc2 = try AccessDocument(parsing: Array(Data(base64Encoded: second.keys[0].document)!))
        XCTAssertNil(doc2.validity.validityIteration)
        XCTAssertEqual(doc2.id, doc.id)
        XCTAssertEqual(doc2.validity.expectedUpdate, TrustFixture.t0.addingTimeInterval(16 * 3600))
        XCTAssertEqual(second.keys[0].iteration, 2)
        XCTAssertGreaterThan(Int64(second.cursor)!, Int64(first.cursor)!)
    }

    func testRevokeDeletesKeysAndPublishesTheNextSerial() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        _ = try await f.login("p1", user: "alice")
        _ = try await f.login("p2", user: "bob")
        _ = try await f.service.addGrant(id: "ga", user: "alice", readers: [f.group])
        _ = try await f.service.addGrant(id: "gb", user: "bob", readers: [f.group + ":" + String(repeating: "b", count: 32)])
        let p1 = try await f.service.poll(device: "p1", since: nil)!
        let change = try await f.service.revokeGrant(id: "ga", reason: "left the company")
        XCTAssertEqual(change.revocationSerial, 1)
        // Tapkey manual polling: alice (grant revoked), bob (a grant on the same lock was revoked).
        XCTAssertEqual(change.affected, [.init(device: "p1", trigger: .grantRevoked), .init(device: "p2", trigger: .lockGrantsRevoked)])
        let after = try await f.service.poll(device: "p1", since: Int64(p1.cursor)!)!
        XCTAssertEqual(after.deleted, ["ga/p1"])
        XCTAssertEqual(after.revocation?.serial, 1)
        let list = try RevocationDocument(parsing: Array(Data(base64Encoded: after.revocation!.document)!))
        _ = try list.document.verify(trust: try trustStore(f))
        let docID = try AccessDocument(parsing: Array(Data(base64Encoded: p1.keys[0].document)!)).id
        XCTAssertEqual(list.revocation.entries.map(\.documentID), [docID])
        let reason = try await f.service.grants(user: "alice").first?.reason
        XCTAssertEqual(reason, "left the company")
        // Bob's poll carries the same list.
        let bob = try await f.service.poll(device: "p2", since: nil)!
        XCTAssertEqual(bob.revocation?.serial, 1)
        // Each further list: the next serial.
        _ = try await f.service.setCredential(device: "p2", to: .suspended)
        let serial = try await f.service.revocationList()?.serial
        XCTAssertEqual(serial, 2)
        await XCTAssertTrustError(.conflict) { try await f.service.revokeGrant(id: "ga", reason: "again") }
    }

    func testCredentialStates() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let key = P256.Signing.PrivateKey()
        _ = try await f.login("p1", user: "alice", key: key)
        _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
        _ = try await f.service.poll(device: "p1", since: nil)
        let hash = RevocationEntry.hash(credentialPublicKey: Array(key.publicKey.x963Representation))

        let suspended = try await f.service.setCredential(device: "p1", to: .suspended)
        XCTAssertEqual(suspended.revocationSerial, 1)
        var list = try RevocationDocument(parsing: try await f.service.revocationList()!.document)
        XCTAssertEqual(list.revocation.entries.compactMap(\.publicKeyHash), [hash])
        let suspendedKeys = try await f.service.poll(device: "p1", since: nil)!.keys.count
        XCTAssertEqual(suspendedKeys, 0, "a suspended credential holds no keys")
        await XCTAssertTrustError(.conflict) { try await f.service.setCredential(device: "p1", to: .suspended) }

        let suspendedList = list
        _ = try await f.service.setCredential(device: "p1", to: .active)
        list = try RevocationDocument(parsing: try await f.service.revocationList()!.document)
        let resumedSerial = try await f.service.revocationList()?.serial
        XCTAssertEqual(resumedSerial, 2)
        XCTAssertEqual(list.revocation.changeMode, .overwrite, "the service publishes whole lists")
        XCTAssertGreaterThan(list.issued, suspendedList.issued, "signed strictly after the list it replaces (a lock orders lists by signed time)")
        XCTAssertTrue(list.revocation.entries.isEmpty, "resume lifts the suspension")
        let resumedKeys = try await f.service.poll(device: "p1", since: nil)!.keys.count
        XCTAssertEqual(resumedKeys, 1)

        _ = try await f.service.setCredential(device: "p1", to: .deactivated)
        list = try RevocationDocument(parsing: try await f.service.revocationList()!.document)
        XCTAssertEqual(list.revocation.entries.compactMap(\.publicKeyHash), [hash])
        // Final: no resume, no suspend, no new login; delete still allowed.
        await XCTAssertTrustError(.final) { try await f.service.setCredential(device: "p1", to: .active) }
        await XCTAssertTrustError(.final) { try await f.service.setCredential(device: "p1", to: .suspended) }
        await XCTAssertTrustError(.final) { try await f.service.enroll(device: "p1") }
        _ = try await f.service.setCredential(device: "p1", to: .deleted)
        await XCTAssertTrustError(.final) { try await f.service.setCredential(device: "p1", to: .active) }
        await XCTAssertTrustError(.notFound) { try await f.service.setCredential(device: "nobody", to: .suspended) }
    }

    func testModifiedGrantGetsANewDocumentIDAndTheOldOneIsRevoked() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        _ = try await f.login("p1", user: "alice")
        _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
        let before = try await f.service.poll(device: "p1", since: nil)!
        let change = try await f.service.modifyGrant(id: "g1", readers: nil, schedules: ["daily 06:00-07:00"])
        XCTAssertEqual(change.affected, [.init(device: "p1", trigger: .grantModified)])
        let after = try await f.service.poll(device: "p1", since: Int64(before.cursor)!)!
        let old = try AccessDocument(parsing: Array(Data(base64Encoded: before.keys[0].document)!))
        let new = try AccessDocument(parsing: Array(Data(base64Encoded: after.keys[0].document)!))
        XCTAssertNotEqual(old.id, new.id)
        XCTAssertEqual(new.access.schedules.count, 1)
        XCTAssertEqual(try RevocationDocument(parsing: Array(Data(base64Encoded: after.revocation!.document)!)).revocation.entries.map(\.documentID), [old.id])
    }

    func testInputsAreChecked() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        await XCTAssertTrustError(.invalidRequest) { try await f.service.addDevice(id: "a/b", user: "alice", credentialKey: Array(P256.Signing.PrivateKey().publicKey.x963Representation)) }
        await XCTAssertTrustError(.invalidRequest) { try await f.service.addDevice(id: "p", user: "alice", credentialKey: [4, 1, 2]) }
        await XCTAssertTrustError(.invalidRequest) { try await f.service.addGrant(id: "g", user: "alice", readers: []) }
        await XCTAssertTrustError(.invalidRequest) { try await f.service.addGrant(id: "g", user: "alice", readers: ["zz"]) }
        await XCTAssertTrustError(.invalidRequest) { try await f.service.addGrant(id: "g", user: "alice", readers: [f.group], schedules: ["someday"]) }
        _ = try await f.service.addGrant(id: "g", user: "alice", readers: [f.group])
        await XCTAssertTrustError(.conflict) { try await f.service.addGrant(id: "g", user: "alice", readers: [f.group]) }
        var s = TrustSettings()
        XCTAssertThrowsError(try s.set("key-lifetime", "forever"))
        XCTAssertThrowsError(try s.set("no-such", "1h"))
        try s.set("poll-interval", "0")
        XCTAssertEqual(s.pollInterval, 0)
    }

    /// The store survives a reopen (durable), and the schema migration is idempotent.
    func testStoreReopens() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        _ = try await f.login("p1", user: "alice")
        _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
        let again = try await SQLiteTrustStorage.open(path: f.directory + "/trust.sqlite")
        let grants = try await again.read { tx in try await tx.grants(user: nil) }
        XCTAssertEqual(grants.map(\.id), ["g1"])
        try await again.close()
    }
}
