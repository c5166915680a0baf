import ByteCore
import Codecs
import Foundation
@testable import OfflineUnlock
import XCTest

/// Issue 11: a lock holding an unexpired cached document never asked the phone to step up, so a
/// newer revocation list (or access document) the phone carried waited until the cache expired.
/// The phone's signed timestamps (`91`, `92`) newer than what the lock holds now make it ask;
/// absent, zero or equal timestamps do not (no step-up on every tap).
final class StepUpTimestampTests: XCTestCase {
    var f = Fixture()
    var state = EngineState(clock: TrustedClock(trustedAt: Fixture.t0.addingTimeInterval(-7200)))
    let now = Fixture.t0
    lazy var documentSigned = now.addingTimeInterval(-3600)   // the fixture's access document

    override func setUp() {
        // The phone is known: its access document is cached, unexpired.
        XCTAssertTrue(f.core().decide(f.presentation(access: [f.accessDocument()]), state: &state, at: now).isGrant)
    }

    func wants(_ t: SignedTimestamps) -> Bool {
        f.core().wantsStepUp(credentialPublicKey: f.credentialKey, timestamps: t, state: state, at: now)
    }

    func testNoTimestampsKeepTheCachedDocument() {
        XCTAssertFalse(wants(.none))
        XCTAssertFalse(wants(SignedTimestamps(credential: documentSigned)))
        XCTAssertFalse(wants(SignedTimestamps(credential: documentSigned.addingTimeInterval(-60))))
    }

    func testANewerAccessDocumentIsFetched() {
        XCTAssertTrue(wants(SignedTimestamps(credential: documentSigned.addingTimeInterval(1))))
    }

    func testARevocationListTheLockDoesNotHoldIsFetched() {
        XCTAssertTrue(wants(SignedTimestamps(revocation: now.addingTimeInterval(-600))))
    }

    func testARevocationListNewerThanTheIssuersIsFetchedAndOnceTakenNoLonger() {
        let issued = now.addingTimeInterval(-600)
        let list = f.revocationDocument(order: 0, entries: [], issued: issued)
        XCTAssertTrue(f.core().decide(f.presentation(access: [f.accessDocument()], revocation: [list]), state: &state, at: now).isGrant)
        XCTAssertEqual(state.revocationLists.values.first?.issued, issued)
        XCTAssertFalse(wants(SignedTimestamps(revocation: issued)), "the same list: no step-up on every tap")
        XCTAssertFalse(wants(SignedTimestamps(revocation: issued.addingTimeInterval(-60))))
        XCTAssertTrue(wants(SignedTimestamps(revocation: issued.addingTimeInterval(60))))
    }

    func testAnotherIssuersListDoesNotCountForThisDocument() {
        // The lock holds a list from another issuer only: this phone's issuer has none.
        let other = f.revocationDocument(order: 5, entries: [], issued: now.addingTimeInterval(-60), by: f.otherIssuer)
        let core = DecisionCore(reader: f.reader, policy: f.policy,
                                trust: try! TrustStore(issuerPublicKeys: [f.issuerPoint, Primitives.point(of: f.otherIssuer)]))
        XCTAssertTrue(core.decide(f.presentation(access: [f.accessDocument()], revocation: [other]), state: &state, at: now).isGrant)
        XCTAssertEqual(state.revocationLists.count, 1)
        XCTAssertTrue(core.wantsStepUp(credentialPublicKey: f.credentialKey, timestamps: SignedTimestamps(revocation: now.addingTimeInterval(-600)),
                                       state: state, at: now))
    }
}
