import ByteCore
import Codecs
import Crypto
import Foundation
@testable import OfflineUnlock
import XCTest

/// Issue 9 §1.1 and §1.4: one revocation list and one serial per issuer; a list revokes only its
/// own issuer's documents; entries are pruned only while the clock is trusted.
final class RevocationListTests: XCTestCase {
    var f = Fixture()
    var state = EngineState(clock: TrustedClock(trustedAt: Fixture.t0.addingTimeInterval(-7200)))
    let now = Fixture.t0

    /// A lock trusting two issuers: `f.issuer` (A) and `f.otherIssuer` (B).
    func core() -> DecisionCore {
        DecisionCore(reader: f.reader, policy: f.policy,
                     trust: try! TrustStore(issuerPublicKeys: [f.issuerPoint, Primitives.point(of: f.otherIssuer)]))
    }

    func decide(_ p: Presentation, at time: Date? = nil) -> Decision { core().decide(p, state: &state, at: time ?? now) }

    var aliceByKey: RevocationEntry {
        try! RevocationEntry(publicKeyHash: RevocationEntry.hash(credentialPublicKey: f.credentialKey), expiry: now.addingTimeInterval(86_400))
    }

    func testAnotherIssuersLaterListDoesNotLiftARevocation() {
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument()])).isGrant)
        XCTAssertEqual(decide(f.presentation(revocation: [f.revocationDocument(order: 1, entries: [aliceByKey])])).denyReason, .revoked)
        // Issuer B's unrelated list, signed later: A's list stays.
        let fromB = f.revocationDocument(order: 7, entries: [], by: f.otherIssuer)
        XCTAssertEqual(decide(f.presentation(revocation: [fromB])).denyReason, .revoked)
        XCTAssertEqual(decide(f.presentation()).denyReason, .revoked)
    }

    func testEachIssuerHasItsOwnOrder() {
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument()])).isGrant)
        // B's list is signed at +7 s; A's, signed at +2 s, still applies to A's documents.
        _ = decide(f.presentation(revocation: [f.revocationDocument(order: 7, entries: [], by: f.otherIssuer)]))
        XCTAssertEqual(decide(f.presentation(revocation: [f.revocationDocument(order: 2, entries: [aliceByKey])])).denyReason, .revoked)
        XCTAssertEqual(state.revocationLists.count, 2)
        XCTAssertEqual(state.revocationLists.values.map(\.issued).sorted(), [2, 7].map { Fixture.t0.addingTimeInterval(-60 + $0) })
    }

    func testAListRevokesOnlyItsOwnIssuersDocuments() {
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument()])).isGrant)
        // B names Alice's key and A's document id: Alice's document is A's, so B cannot revoke it.
        let byID = try! RevocationEntry(documentID: [0xD0, 0x01], expiry: now.addingTimeInterval(86_400))
        let fromB = f.revocationDocument(order: 1, entries: [aliceByKey, byID], by: f.otherIssuer)
        XCTAssertTrue(decide(f.presentation(revocation: [fromB])).isGrant)
        // A document from B for the same key is revoked by B's list.
        let bDoc = f.accessDocument(by: f.otherIssuer)
        XCTAssertEqual(decide(f.presentation(access: [bDoc])).denyReason, .revoked)
    }

    func testEveryListChangeIsReported() {
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument()])).isGrant)
        XCTAssertEqual(state.takeRevocationChanges(), [])
        _ = decide(f.presentation(revocation: [f.revocationDocument(order: 3, entries: [aliceByKey])]))
        let changes = state.takeRevocationChanges()
        XCTAssertEqual(changes.count, 1)
        XCTAssertEqual(changes.first?.previousIssued, nil)
        XCTAssertEqual(changes.first?.issued, Fixture.t0.addingTimeInterval(-60 + 3))
        XCTAssertEqual(changes.first?.kind, .applied)
        XCTAssertEqual(changes.first?.mode, .overwrite)
        XCTAssertEqual(changes.first?.addedEntries, 1)
        XCTAssertEqual(changes.first?.issuer, Hex.encode(CoseSign1.keyIdentifier(issuerPublicKey: f.issuerPoint)))
        XCTAssertEqual(state.takeRevocationChanges(), [], "taken once")
        // A list signed earlier changes nothing and reports nothing.
        _ = decide(f.presentation(revocation: [f.revocationDocument(order: 2, entries: [])]))
        XCTAssertEqual(state.takeRevocationChanges(), [])
        // Pruning an expired entry is a change too.
        state.clock.operatorSet(now.addingTimeInterval(2 * 86_400))
        _ = decide(f.presentation(access: [f.accessDocument(from: now.addingTimeInterval(86_400), until: now.addingTimeInterval(3 * 86_400))]),
                   at: now.addingTimeInterval(2 * 86_400))
        let pruned = state.takeRevocationChanges()
        XCTAssertEqual(pruned.map(\.kind), [.pruned])
        XCTAssertEqual(pruned.first?.removedEntries, 1)
    }

    /// §1.4: after a power loss and a clock set ahead, a tap (denied clock_untrusted) must not
    /// prune the entries; once the time is corrected the phone is still revoked.
    func testNoPruningUnderAnUntrustedClock() {
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument()])).isGrant)
        let soon = try! RevocationEntry(publicKeyHash: RevocationEntry.hash(credentialPublicKey: f.credentialKey), expiry: now.addingTimeInterval(3600))
        XCTAssertEqual(decide(f.presentation(revocation: [f.revocationDocument(order: 1, entries: [soon])])).denyReason, .revoked)
        state.clock.powerLoss()
        XCTAssertEqual(decide(f.presentation(), at: now.addingTimeInterval(3 * 3600)).denyReason, .clockUntrusted)
        state.clock.operatorSet(now.addingTimeInterval(600))
        XCTAssertEqual(decide(f.presentation(), at: now.addingTimeInterval(600)).denyReason, .revoked)
    }
}

/// Issue 9 §1.5: trust comes back only with a document whose signed time lies within the policy's
/// maximum document lifetime of the high-water mark, and for a clock no further ahead than that.
final class ClockTrustBoundTests: XCTestCase {
    var f = Fixture()
    var state = EngineState(clock: TrustedClock(trustedAt: Fixture.t0))
    let now = Fixture.t0
    let year2030 = RFC3339.parse("2030-06-01T12:00:00Z")!

    func decide(_ p: Presentation, at time: Date) -> Decision { f.core().decide(p, state: &state, at: time) }

    func testAFutureDatedDocumentDoesNotRestoreTrust() {
        state.clock.powerLoss()
        let oneDay = f.accessDocument(from: year2030.addingTimeInterval(-3600), until: year2030.addingTimeInterval(20 * 3600), signed: year2030.addingTimeInterval(-3600))
        XCTAssertEqual(decide(f.presentation(access: [oneDay]), at: year2030).denyReason, .clockUntrusted)
        XCTAssertFalse(state.clock.trusted)
        XCTAssertEqual(state.clock.highWaterMark, now, "the high-water mark did not move to 2030")
    }

    func testAFreshDocumentDoesNotVouchForAClockFarAhead() {
        state.clock.powerLoss()
        // Signed just after the high-water mark, but the lock's clock reads 2030.
        let fresh = f.accessDocument(from: now, until: now.addingTimeInterval(8 * 3600), signed: now.addingTimeInterval(60))
        XCTAssertEqual(decide(f.presentation(access: [fresh]), at: year2030).denyReason, .clockUntrusted)
        XCTAssertEqual(state.clock.highWaterMark, now)
    }

    func testADocumentWithinTheBoundRestoresTrust() {
        state.clock.powerLoss()
        let later = now.addingTimeInterval(2 * 86_400)      // two days after the mark: within 7d
        let doc = f.accessDocument(from: later.addingTimeInterval(-600), until: later.addingTimeInterval(8 * 3600), signed: later.addingTimeInterval(-600))
        XCTAssertTrue(decide(f.presentation(access: [doc]), at: later).isGrant)
        XCTAssertTrue(state.clock.trusted)
        XCTAssertEqual(state.clock.highWaterMark, later)
    }

    func testBeyondTheBoundOnlyTheOperatorRestoresTrust() {
        state.clock.powerLoss()
        let later = now.addingTimeInterval(8 * 86_400)      // 8 days: beyond the 7-day lifetime
        let doc = f.accessDocument(from: later.addingTimeInterval(-600), until: later.addingTimeInterval(8 * 3600), signed: later.addingTimeInterval(-600))
        XCTAssertEqual(decide(f.presentation(access: [doc]), at: later).denyReason, .clockUntrusted)
        state.clock.operatorSet(later)
        XCTAssertTrue(decide(f.presentation(access: [doc]), at: later).isGrant)
    }
}
