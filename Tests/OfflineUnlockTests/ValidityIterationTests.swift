import ByteCore
import Codecs
import Crypto
import Foundation
import LockBenchTestSupport
@testable import OfflineUnlock
import XCTest

/// Aliro 0.9.4 §7.2.3 as the official cases enforce it (`ValidityIteration`): each rejection
/// reason, the AccessIteration kept per issuer, the cached path, documents without an iteration,
/// state files without the field, and the fault that turns it off.
final class ValidityIterationTests: XCTestCase {
    var f = Fixture()
    var state = EngineState(clock: TrustedClock(trustedAt: Fixture.t0.addingTimeInterval(-7200)))
    let now = Fixture.t0
    let third = Primitives.point(of: TestFixturesKey.third)

    func decide(_ p: Presentation, core: DecisionCore? = nil) -> Decision { (core ?? f.core()).decide(p, state: &state, at: now) }

    func document(_ key: [UInt8], _ iteration: Int?, signedAfter seconds: TimeInterval = 0, by issuer: P256.Signing.PrivateKey? = nil) -> [UInt8] {
        f.accessDocument(key: key, signed: Fixture.t0.addingTimeInterval(-3600 + seconds), by: issuer, iteration: iteration)
    }

    var issuerKid: String { Hex.encode(CoseSign1.keyIdentifier(issuerPublicKey: f.issuerPoint)) }

    /// NFC_RDR_NEG_STEPUP_AD_VALIDITY_ITERATION: 1 (A), 9 (B), 3 (A) granted; 1 (C) refused.
    func testTheCasesFourTaps() {
        let a = f.credentialKey, b = Primitives.point(of: f.otherCredential)
        XCTAssertTrue(decide(f.presentation(key: a, access: [document(a, 1)])).isGrant)
        XCTAssertEqual(state.accessIterations, [issuerKid: 1])
        XCTAssertTrue(decide(f.presentation(key: b, access: [document(b, 9)])).isGrant)
        XCTAssertEqual(state.accessIterations[issuerKid], 9)
        // A's held document (1) is now 8 below: the reader must ask for the newer one.
        XCTAssertTrue(f.core().wantsStepUp(credentialPublicKey: a, state: state, at: now))
        XCTAssertTrue(decide(f.presentation(key: a, access: [document(a, 3, signedAfter: 2)])).isGrant)
        let d = decide(f.presentation(key: third, access: [document(third, 1)]))
        XCTAssertEqual(d.denyReason, .iterationRemoved, "\(d)")
        XCTAssertNil(state.cachedDocuments[Hex.encode(third)], "a refused document is not cached")
        XCTAssertEqual(DenyReason.iterationRemoved.readerStatus >> 8, 0x00, "the case expects a failure status (high byte 00)")
        // 9 − 2 = 7 is still in.
        XCTAssertTrue(decide(f.presentation(key: third, access: [document(third, 2)])).isGrant)
    }

    /// NFC_RDR_NEG_STEPUP_AD_CREDENTIAL_ISSUER_REMOVED: 9 then 0 for the same credential, the 0
    /// signed later; the same iteration twice is fine (NFC_RDR_STEPUP_AD_SAME_DOC_TWICE).
    func testCredentialIssuerRemoved() {
        let a = f.credentialKey
        let nine = document(a, 9)
        XCTAssertTrue(decide(f.presentation(key: a, access: [nine])).isGrant)
        XCTAssertTrue(decide(f.presentation(key: a, access: [nine])).isGrant, "the same document again")
        let d = decide(f.presentation(key: a, access: [document(a, 0, signedAfter: 1)]))
        XCTAssertEqual(d.denyReason, .credentialIssuerRemoved, "\(d)")
        if case .deny(_, let detail) = d { XCTAssertTrue(detail.contains("7.2.3"), detail) }
        // 8 is below 9 as well, and only 1 below the AccessIteration: still the credential's rule.
        XCTAssertEqual(decide(f.presentation(key: a, access: [document(a, 8, signedAfter: 2)])).denyReason, .credentialIssuerRemoved)
        XCTAssertTrue(decide(f.presentation(key: a)).isGrant, "the held document (9) still decides")
        XCTAssertTrue(DenyReason.credentialIssuerRemoved.dropsPersistentKey)
        XCTAssertTrue(DenyReason.iterationRemoved.dropsPersistentKey)
        XCTAssertFalse(DenyReason.unknownCredential.dropsPersistentKey, "NFC_RDR_FAST keeps a refused stranger's Kpersistent")
    }

    /// A held document the issuer has since removed: no step-up skipped, no decision from it.
    func testAHeldDocumentRemovedDecidesNothing() {
        let a = f.credentialKey, b = Primitives.point(of: f.otherCredential)
        XCTAssertTrue(decide(f.presentation(key: a, access: [document(a, 1)])).isGrant)
        XCTAssertFalse(f.core().wantsStepUp(credentialPublicKey: a, state: state, at: now))
        XCTAssertTrue(decide(f.presentation(key: b, access: [document(b, 9)])).isGrant)
        XCTAssertTrue(f.core().wantsStepUp(credentialPublicKey: a, state: state, at: now))
        XCTAssertEqual(decide(f.presentation(key: a)).denyReason, .iterationRemoved)
        // Its own document again (NFC_RDR_STEPUP_FAST_KPERSISTENT_REMOVED tap 4): refused, and the
        // held copy goes.
        XCTAssertEqual(decide(f.presentation(key: a, access: [document(a, 1)])).denyReason, .iterationRemoved)
        XCTAssertNil(state.cachedDocuments[Hex.encode(a)])
        // The re-issued one (10) is granted and raises the AccessIteration.
        XCTAssertTrue(decide(f.presentation(key: a, access: [document(a, 10)])).isGrant)
        XCTAssertEqual(state.accessIterations[issuerKid], 10)
        XCTAssertTrue(decide(f.presentation(key: b)).isGrant, "B's 9 is 1 below 10")
    }

    /// Documents without an iteration keep LockBench's rule: ordered by signed time (§9), never
    /// refused by an iteration; each issuer has its own AccessIteration.
    func testNoIterationAndOtherIssuers() throws {
        let a = f.credentialKey, b = Primitives.point(of: f.otherCredential)
        XCTAssertTrue(decide(f.presentation(key: a, access: [document(a, 100)])).isGrant)
        XCTAssertTrue(decide(f.presentation(key: b, access: [document(b, nil)])).isGrant)
        XCTAssertTrue(decide(f.presentation(key: a, access: [document(a, nil, signedAfter: 1)])).isGrant, "no iteration: no iteration rule")
        // Another trusted issuer at iteration 1 is not measured against the first one's 100.
        let core = DecisionCore(reader: f.reader, policy: f.policy, trust: try TrustStore(issuerPublicKeys: [f.issuerPoint, Primitives.point(of: f.otherIssuer)]))
        XCTAssertTrue(decide(f.presentation(key: third, access: [document(third, 1, by: f.otherIssuer)]), core: core).isGrant)
        XCTAssertEqual(state.accessIterations.count, 2)
    }

    /// Iterations from hostile documents: extremes compare without trapping.
    func testExtremesDoNotTrap() {
        XCTAssertTrue(ValidityIteration.isRemoved(Int.min, accessIteration: Int.max), "an overflowing gap is beyond the threshold")
        XCTAssertTrue(ValidityIteration.isRemoved(Int.max - 8, accessIteration: Int.max))
        XCTAssertFalse(ValidityIteration.isRemoved(Int.max, accessIteration: Int.min))
        XCTAssertFalse(ValidityIteration.isRemoved(5, accessIteration: nil))
        let a = f.credentialKey
        XCTAssertTrue(decide(f.presentation(key: a, access: [document(a, Int.max)])).isGrant)
        XCTAssertEqual(decide(f.presentation(key: third, access: [document(third, Int.min)])).denyReason, .iterationRemoved)
    }

    /// The fault `ignore-validity-iteration`: nothing remembered, nothing refused.
    func testTheFaultIgnoresIterations() {
        var core = f.core()
        core.ignoresValidityIteration = true
        let a = f.credentialKey, b = Primitives.point(of: f.otherCredential)
        XCTAssertTrue(decide(f.presentation(key: b, access: [document(b, 9)]), core: core).isGrant)
        XCTAssertTrue(decide(f.presentation(key: third, access: [document(third, 1)]), core: core).isGrant)
        XCTAssertTrue(decide(f.presentation(key: a, access: [document(a, 9)]), core: core).isGrant)
        XCTAssertTrue(decide(f.presentation(key: a, access: [document(a, 0, signedAfter: 1)]), core: core).isGrant)
        XCTAssertEqual(state.accessIterations, [:])
    }

    /// The AccessIteration is part of the persisted state; a state file without it still loads.
    func testPersistedAndOldStateFilesLoad() throws {
        let a = f.credentialKey
        XCTAssertTrue(decide(f.presentation(key: a, access: [document(a, 9)])).isGrant)
        let json = try JSONEncoder().encode(state)
        XCTAssertTrue(String(decoding: json, as: UTF8.self).contains("accessIterations"))
        let back = try JSONDecoder().decode(EngineState.self, from: json)
        XCTAssertEqual(back.accessIterations, [issuerKid: 9])
        var old = try JSONSerialization.jsonObject(with: json) as! [String: Any]
        old["accessIterations"] = nil
        let legacy = try JSONDecoder().decode(EngineState.self, from: JSONSerialization.data(withJSONObject: old))
        XCTAssertEqual(legacy.accessIterations, [:])
        // A decision's change is taken (the lock journals it) and undone when it cannot be.
        var s = EngineState(clock: TrustedClock(trustedAt: now))
        _ = s.takeChanges()
        XCTAssertTrue(f.core().decide(f.presentation(key: a, access: [document(a, 4)]), state: &s, at: now).isGrant)
        let changes = s.takeChanges()
        XCTAssertEqual(changes.iterations[issuerKid]?.after, 4)
        XCTAssertNil(changes.iterations[issuerKid]?.before ?? nil)
        s.undo(changes)
        XCTAssertEqual(s.accessIterations, [:])
    }
}

enum TestFixturesKey {
    static let third = TestFixtures.key(0x66)
}
