import ByteCore
import Codecs
import Crypto
import Foundation
@testable import OfflineUnlock
import XCTest

/// One test per deny reason the engine owns, plus grants, caching, clock trust and revocation.
/// (bad_reader_signature, bad_credential_signature and secure_channel_failure are decided by the
/// access protocol before the engine is asked.)
final class EngineDecisionTests: XCTestCase {
    var f = Fixture()
    var state = EngineState(clock: TrustedClock(trustedAt: Fixture.t0.addingTimeInterval(-7200)))
    let now = Fixture.t0

    func decide(_ p: Presentation, at time: Date? = nil) -> Decision {
        f.core().decide(p, state: &state, at: time ?? now)
    }

    func assertDeny(_ reason: DenyReason, _ p: Presentation, at time: Date? = nil, file: StaticString = #filePath, line: UInt = #line) {
        let d = decide(p, at: time)
        XCTAssertEqual(d.denyReason, reason, "\(d)", file: file, line: line)
        if case .deny(_, let detail) = d { XCTAssertFalse(detail.isEmpty, file: file, line: line) }
    }

    func testGrantWithStepUpThenFromCache() {
        XCTAssertTrue(f.core().wantsStepUp(credentialPublicKey: f.credentialKey, state: state, at: now))
        XCTAssertEqual(decide(f.presentation(access: [f.accessDocument()])), .grant(credentialID: "d001"))
        XCTAssertFalse(f.core().wantsStepUp(credentialPublicKey: f.credentialKey, state: state, at: now))
        XCTAssertEqual(decide(f.presentation(), at: now.addingTimeInterval(60)), .grant(credentialID: "d001"))
        XCTAssertEqual(state.clock.highWaterMark, now.addingTimeInterval(60))
        // Past expiry the cached document no longer counts.
        XCTAssertTrue(f.core().wantsStepUp(credentialPublicKey: f.credentialKey, state: state, at: now.addingTimeInterval(9 * 3600)))
    }

    func testUnknownCredential() {
        assertDeny(.unknownCredential, f.presentation())
        XCTAssertEqual(DenyReason.unknownCredential.readerStatus, ReaderStatus.secured)
        XCTAssertTrue(DenyReason.unknownCredential.reportsLockState)
    }

    /// The credential announced an access document, the step-up answer held none.
    func testMissingDocument() {
        var p = f.presentation()
        p.announcedAccessDocument = true
        assertDeny(.missingDocument, p)
        XCTAssertEqual(DenyReason.missingDocument.readerStatus, ReaderStatus.keyNotFound)
        // A cached document still decides: the announcement only names what is missing.
        XCTAssertEqual(decide(f.presentation(access: [f.accessDocument()])), .grant(credentialID: "d001"))
        var again = f.presentation()
        again.announcedAccessDocument = true
        XCTAssertEqual(decide(again, at: now.addingTimeInterval(60)), .grant(credentialID: "d001"))
    }

    /// Reader rule ids name rules the reader defines; this one defines none. A non-critical access
    /// extension is skipped.
    func testReaderRuleIDsAndNonCriticalExtensions() throws {
        let rule = try ReaderRule(groupID: f.reader.groupID)
        let validity = IssuedDocument.Validity(signed: now.addingTimeInterval(-3600), validFrom: now.addingTimeInterval(-3600),
                                               validUntil: now.addingTimeInterval(8 * 3600))
        let named = try AccessDocument.issue(access: try AccessData(id: [0xD0, 0x02], readers: [rule], readerRuleIDs: [0xF118]),
                                         credentialPublicKey: f.credentialKey, validity: validity, issuerKey: f.issuer)
        assertDeny(.wrongReader, f.presentation(access: [named.encoded()]))
        let skipped = try AccessDocument.issue(access: try AccessData(id: [0xD0, 0x03], readers: [rule],
                                                                  extensions: [AccessExtension(id: 9, version: 1, critical: false)]),
                                           credentialPublicKey: f.credentialKey, validity: validity, issuerKey: f.issuer)
        XCTAssertEqual(decide(f.presentation(access: [skipped.encoded()])), .grant(credentialID: "d003"))
    }

    func testUntrustedIssuer() {
        assertDeny(.untrustedIssuer, f.presentation(access: [f.accessDocument(by: f.otherIssuer)]))
        var doc = try! AccessDocument(parsing: f.accessDocument())
        doc.document.issuerAuth.signature[0] ^= 0x80
        assertDeny(.untrustedIssuer, f.presentation(access: [doc.encoded()]))
    }

    func testDigestMismatch() {
        var doc = try! AccessDocument(parsing: f.accessDocument())
        doc.document.items = try! AccessDocument(parsing: f.accessDocument(readers: [try! ReaderRule(groupID: Array(repeating: 0, count: 16))])).document.items
        assertDeny(.digestMismatch, f.presentation(access: [doc.encoded()]))
    }

    func testDocumentKeyMismatch() {
        let other = Primitives.point(of: f.otherCredential)
        assertDeny(.documentKeyMismatch, f.presentation(access: [f.accessDocument(key: other)]))
    }

    func testNotYetValid() {
        assertDeny(.notYetValid, f.presentation(access: [f.accessDocument(from: now.addingTimeInterval(3600), until: now.addingTimeInterval(7200), signed: now.addingTimeInterval(-60))]))
        // Within the leeway it is fine.
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument(from: now.addingTimeInterval(200), until: now.addingTimeInterval(7200), signed: now.addingTimeInterval(-60))])).isGrant)
    }

    func testExpired() {
        assertDeny(.expired, f.presentation(access: [f.accessDocument(from: now.addingTimeInterval(-7200), until: now.addingTimeInterval(-3600))]))
        // Cached, then expired later.
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument()])).isGrant)
        assertDeny(.expired, f.presentation(), at: now.addingTimeInterval(8 * 3600 + 301))
    }

    func testValidityTooLong() {
        f.policy.maxDocumentLifetime = 86_400
        assertDeny(.validityTooLong, f.presentation(access: [f.accessDocument(until: now.addingTimeInterval(2 * 86_400))]))
    }

    func testWrongReader() {
        let elsewhere = try! ReaderRule(groupID: Array(repeating: 0xEE, count: 16))
        assertDeny(.wrongReader, f.presentation(access: [f.accessDocument(readers: [elsewhere])]))
        let otherSub = try! ReaderRule(groupID: f.reader.groupID, subID: Array(repeating: 0xEE, count: 16))
        assertDeny(.wrongReader, f.presentation(access: [f.accessDocument(readers: [otherSub])]))
        let thisSub = try! ReaderRule(groupID: f.reader.groupID, subID: f.reader.subID)
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument(readers: [thisSub])])).isGrant)
    }

    func testOutsideSchedule() {
        let weekend = try! WeeklySchedule(parsing: "weekends 00:00-24:00")
        assertDeny(.outsideSchedule, f.presentation(access: [f.accessDocument(schedules: [weekend])]))
        let office = try! WeeklySchedule(parsing: "mon-fri 08:00-18:00")
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument(schedules: [weekend, office])])).isGrant)
        // The lock's zone moves the window: 09:00Z is 19:00 at UTC+10.
        f.policy.scheduleUTCOffsetMinutes = 600
        assertDeny(.outsideSchedule, f.presentation())
    }

    func testRevokedByKeyHashAndByDocumentID() {
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument()])).isGrant)
        let byID = try! RevocationEntry(documentID: [0xD0, 0x01], expiry: now.addingTimeInterval(86_400))
        assertDeny(.revoked, f.presentation(revocation: [f.revocationDocument(order: 1, entries: [byID])]))
        XCTAssertEqual(state.revocationLists.values.map(\.issued), [Fixture.t0.addingTimeInterval(-60 + 1)])
        // A cached credential is refused from then on, with no documents presented.
        assertDeny(.revoked, f.presentation())
        // A newer list without the entry lifts it; an older one is ignored.
        XCTAssertTrue(decide(f.presentation(revocation: [f.revocationDocument(order: 2, entries: [])])).isGrant)
        XCTAssertTrue(decide(f.presentation(revocation: [f.revocationDocument(order: 1, entries: [byID])])).isGrant)
        let byKey = try! RevocationEntry(publicKeyHash: RevocationEntry.hash(credentialPublicKey: f.credentialKey), expiry: now.addingTimeInterval(86_400))
        assertDeny(.revoked, f.presentation(revocation: [f.revocationDocument(order: 3, entries: [byKey])]))
        // Entries drop after their expiry.
        XCTAssertTrue(decide(f.presentation(), at: now.addingTimeInterval(86_400 + 400)).isGrant == false) // document expired by then
        XCTAssertTrue(state.revocationLists.values.allSatisfy(\.entries.isEmpty))
    }

    func testUntrustedRevocationDocumentDenies() {
        let doc = RevocationDocument.issue(revocation: .init(entries: []), issued: now, expiry: now.addingTimeInterval(3600), issuerKey: f.otherIssuer)
        assertDeny(.untrustedIssuer, f.presentation(access: [f.accessDocument()], revocation: [doc.encoded()]))
        assertDeny(.malformedInput, f.presentation(access: [f.accessDocument()], revocation: [[0x01]]))
    }

    func testClockUntrustedUntilTrustedTimeArrives() {
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument()])).isGrant)
        state.clock.powerLoss()
        XCTAssertTrue(f.core().wantsStepUp(credentialPublicKey: f.credentialKey, state: state, at: now))
        // The cached document carries no new time: untrusted.
        assertDeny(.clockUntrusted, f.presentation(), at: now.addingTimeInterval(600))
        // A document signed before the high-water mark is no evidence.
        assertDeny(.clockUntrusted, f.presentation(access: [f.accessDocument(signed: now.addingTimeInterval(-60))]), at: now.addingTimeInterval(600))
        // One signed after it restores trust.
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument(signed: now.addingTimeInterval(300))]), at: now.addingTimeInterval(600)).isGrant)
        XCTAssertTrue(state.clock.trusted)
        // The operator can restore trust too.
        state.clock.powerLoss()
        assertDeny(.clockUntrusted, f.presentation(), at: now.addingTimeInterval(700))
        state.clock.operatorSet(now.addingTimeInterval(700))
        XCTAssertTrue(decide(f.presentation(), at: now.addingTimeInterval(700)).isGrant)
    }

    /// MSO key 7 (NFC_RDR_NEG_STEPUP_AD_TIME_VERIFICATION_REQUIRED): a document asking for time
    /// verification is granted under a trusted clock, refused (`time_not_verified`) under an
    /// untrusted one, and never restores trust; the same document without key 7 still does.
    func testATimeVerificationDocumentIsNoEvidenceOfTime() {
        let later = now.addingTimeInterval(600)
        let asking = f.accessDocument(signed: now.addingTimeInterval(300), timeVerificationRequired: true)
        XCTAssertTrue(try IssuedDocument(parsing: asking).timeVerificationRequired)
        XCTAssertFalse(try IssuedDocument(parsing: f.accessDocument()).timeVerificationRequired, "LockBench writes key 7 false unless asked")
        XCTAssertTrue(decide(f.presentation(access: [asking])).isGrant, "a lock whose time is verified accepts it")
        state.clock.powerLoss()
        let d = decide(f.presentation(access: [asking]), at: later)
        XCTAssertEqual(d.denyReason, .timeNotVerified, "\(d)")
        if case .deny(_, let detail) = d { XCTAssertTrue(detail.contains("MSO key 7"), detail) }
        XCTAssertFalse(state.clock.trusted, "a key-7 document restored the clock")
        XCTAssertEqual(DenyReason.timeNotVerified.readerStatus >> 8, 0x00, "a failure status")
        // A revocation document asking for time verification is no evidence either.
        let list = RevocationDocument.issue(revocation: .init(entries: []), issued: now.addingTimeInterval(300),
                                            expiry: now.addingTimeInterval(86_400), issuerKey: f.issuer)
        var asked = list.document
        asked.timeVerificationRequired = true
        XCTAssertFalse(state.clock.evidence(asked, now: later, leeway: 300, maxLifetime: f.policy.maxDocumentLifetime))
        XCTAssertFalse(state.clock.trusted)
        // Without key 7 the same signed time restores trust, as before.
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument(signed: now.addingTimeInterval(300))]), at: later).isGrant)
        XCTAssertTrue(state.clock.trusted)
        XCTAssertTrue(decide(f.presentation(access: [asking]), at: later).isGrant, "trusted again: the key-7 document opens")
    }

    /// A lock set without schedule support (policy `supportsSchedules` false) refuses a document
    /// using schedules (`schedules_not_supported`) and still grants one without; the ordinary lock
    /// evaluates the same document.
    func testALockWithoutScheduleSupportRefusesDocumentsUsingThem() throws {
        let always = try WeeklySchedule(parsing: "daily 00:00-24:00")
        let scheduled = f.accessDocument(id: [0xD0, 0x02], schedules: [always])
        XCTAssertTrue(decide(f.presentation(access: [scheduled])).isGrant)
        f.policy.supportsSchedules = false
        assertDeny(.schedulesNotSupported, f.presentation(access: [scheduled]))
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument()])).isGrant)
        // A rule naming the schedule by id (the official case's document).
        var rule = try ReaderRule(groupID: f.reader.groupID)
        rule.allowScheduleIDs = 1
        let byID = f.accessDocument(id: [0xD0, 0x03], readers: [rule], schedules: [always])
        let d = decide(f.presentation(access: [byID]))
        XCTAssertEqual(d.denyReason, .schedulesNotSupported, "\(d)")
        if case .deny(_, let detail) = d { XCTAssertTrue(detail.contains("supportsSchedules false") && detail.contains("allow schedules"), detail) }
    }

    func testThePolicyWritesScheduleSupportOnlyWhenOff() throws {
        var policy = LockPolicy()
        XCTAssertFalse(String(decoding: try JSONEncoder().encode(policy), as: UTF8.self).contains("supportsSchedules"))
        policy.supportsSchedules = false
        let json = try JSONEncoder().encode(policy)
        XCTAssertTrue(String(decoding: json, as: UTF8.self).contains("\"supportsSchedules\":false"))
        XCTAssertFalse(try JSONDecoder().decode(LockPolicy.self, from: json).supportsSchedules)
        XCTAssertTrue(try JSONDecoder().decode(LockPolicy.self, from: Data("{}".utf8)).supportsSchedules)
        XCTAssertThrowsError(try JSONDecoder().decode(LockPolicy.self, from: Data("{\"supportsSchedules\": \"no\"}".utf8)))
    }

    func testClockRollback() {
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument()])).isGrant)
        assertDeny(.clockRollback, f.presentation(), at: now.addingTimeInterval(-301))
        XCTAssertTrue(decide(f.presentation(), at: now.addingTimeInterval(-299)).isGrant)   // within leeway
    }

    func testReplayOfTransactionID() {
        let tid = Array(repeating: UInt8(0x5A), count: 16)
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument()], tid: tid)).isGrant)
        assertDeny(.replay, f.presentation(tid: tid))
        f.policy.replayWindow = 2
        state.recentTransactionIDs = []
        _ = decide(f.presentation(tid: [1])); _ = decide(f.presentation(tid: [2])); _ = decide(f.presentation(tid: [3]))
        XCTAssertTrue(decide(f.presentation(tid: [1])).isGrant)   // fell out of the window
    }

    func testUnsupportedVersionAndDowngrade() {
        assertDeny(.unsupportedVersion, f.presentation(access: [f.accessDocument()], version: 0x0200))
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument()], version: 0x0100)).isGrant)
        assertDeny(.downgrade, f.presentation(version: 0x0009))
        var g = Fixture()
        g.policy.minimumProtocolVersion = 0x0100
        var fresh = EngineState(clock: TrustedClock(trustedAt: now))
        XCTAssertEqual(g.core().decide(g.presentation(access: [g.accessDocument()], version: 0x0009), state: &fresh, at: now).denyReason, .downgrade)
    }

    func testMalformedInput() {
        assertDeny(.malformedInput, f.presentation(access: [[0xA1, 0x01]]))
        assertDeny(.malformedInput, f.presentation(access: [Array("not cbor".utf8)]))
        assertDeny(.malformedInput, f.presentation(access: [f.revocationDocument(order: 1, entries: [])]))
    }

    func testEveryEngineReasonHasItsOwnCode() {
        // Every DenyReason is the engine's (the protocol's, transport's and lock's reasons live
        // with their layers). That each one is produced and tested is pinned, with no list to
        // edit, by DenyReasonTests.testEveryDenyReasonFromARealTransaction (AccessProtocolTests):
        // a new reason fails there until a real transaction produces it.
        XCTAssertEqual(Set(DenyReason.allCases.map(\.rawValue)).count, DenyReason.allCases.count, "two reasons share a code")
    }

    func testCacheEvictsSoonestExpiring() {
        f.policy.maxCachedDocuments = 2
        let keys = (0..<3).map { _ in P256.Signing.PrivateKey() }
        for (i, k) in keys.enumerated() {
            let p = Primitives.point(of: k)
            let d = decide(f.presentation(key: p, access: [f.accessDocument(key: p, until: now.addingTimeInterval(Double(3 - i) * 3600))]))
            XCTAssertTrue(d.isGrant, "\(d)")
        }
        XCTAssertEqual(state.cachedDocuments.count, 2)
        XCTAssertNil(state.cachedDocuments[Hex.encode(Primitives.point(of: keys[1]))])   // expired soonest of the others
    }

    func testStateRoundTripsThroughJSON() throws {
        XCTAssertTrue(decide(f.presentation(access: [f.accessDocument()], revocation: [f.revocationDocument(order: 4, entries: [try RevocationEntry(documentID: [1], expiry: now.addingTimeInterval(999))])])).isGrant)
        let data = try JSONEncoder().encode(state)
        XCTAssertEqual(try JSONDecoder().decode(EngineState.self, from: data), state)
    }

    func testEngineClassUsesInjectedTimeAndReportsState() {
        let time = Monitor(now)
        let engine = OfflineUnlockEngine(core: f.core(), state: state, now: { time.withLock { $0 } })
        let saved = Monitor<EngineState?>(nil)
        engine.onStateChange = { state in saved.withLock { $0 = state } }
        XCTAssertTrue(engine.wantsStepUp(credentialPublicKey: f.credentialKey))
        XCTAssertTrue(engine.decide(f.presentation(access: [f.accessDocument()])).isGrant)
        XCTAssertEqual(saved.withLock { $0 }?.cachedDocuments.count, 1)
        XCTAssertFalse(engine.wantsStepUp(credentialPublicKey: f.credentialKey))
        time.withLock { [now] in $0 = now.addingTimeInterval(-3600) }
        XCTAssertEqual(engine.decide(f.presentation()).denyReason, .clockRollback)
    }
}

/// The in-memory memo of decoded, verified cached documents (`VerifiedDocuments`): it saves the
/// decoding and issuer-signature check of a cached document, and never changes a decision.
final class EngineDocumentMemoTests: XCTestCase {
    var f = Fixture()
    let now = Fixture.t0
    var keyHex: String { Hex.encode(f.credentialKey) }

    /// A state holding the fixture's document, accepted by a decision (so the memo knows it).
    func acceptedState() -> EngineState {
        var state = EngineState(clock: TrustedClock(trustedAt: now))
        XCTAssertTrue(f.core().decide(f.presentation(access: [f.accessDocument()]), state: &state, at: now).isGrant)
        return state
    }

    func testAcceptedDocumentIsRememberedVerified() {
        let state = acceptedState()
        let bytes = state.cachedDocuments[keyHex]!
        XCTAssertEqual(state.verified.verdict(key: keyHex, bytes: bytes, trust: f.trust())?.document?.id, [0xD0, 0x01])
    }

    func testStateFromDiskIsVerifiedOnceWhenTheEngineTakesIt() throws {
        let loaded = try JSONDecoder().decode(EngineState.self, from: try JSONEncoder().encode(acceptedState()))
        XCTAssertNil(loaded.verified.verdict(key: keyHex, bytes: loaded.cachedDocuments[keyHex]!, trust: f.trust()))
        let engine = OfflineUnlockEngine(core: f.core(), state: loaded, now: { [now] in now })
        let s = engine.state
        XCTAssertNotNil(s.verified.verdict(key: keyHex, bytes: s.cachedDocuments[keyHex]!, trust: f.trust())?.document)
        XCTAssertFalse(engine.wantsStepUp(credentialPublicKey: f.credentialKey))
        XCTAssertTrue(engine.decide(f.presentation()).isGrant)
        XCTAssertEqual(engine.cachedDocumentID(credentialPublicKey: f.credentialKey), "d001")
    }

    /// The state file is not authenticated: a cached document altered on disk is refused at load,
    /// and the reader steps up instead of trusting it.
    func testTamperedCachedDocumentOnDiskIsRefused() throws {
        var state = acceptedState()
        var doc = try AccessDocument(parsing: state.cachedDocuments[keyHex]!)
        doc.document.issuerAuth.signature[0] ^= 0x80
        state.cachedDocuments[keyHex] = doc.encoded()
        let loaded = try JSONDecoder().decode(EngineState.self, from: try JSONEncoder().encode(state))
        let engine = OfflineUnlockEngine(core: f.core(), state: loaded, now: { [now] in now })
        XCTAssertTrue(engine.wantsStepUp(credentialPublicKey: f.credentialKey))
        XCTAssertEqual(engine.decide(f.presentation()).denyReason, .unknownCredential)
        XCTAssertNil(engine.cachedDocumentID(credentialPublicKey: f.credentialKey))
    }

    /// Bytes replaced without the engine are a miss: the decision is about the new bytes.
    func testBytesReplacedByHandAreNotServedFromTheMemo() {
        var state = acceptedState()
        let other = f.accessDocument(id: [0xD0, 0x02], readers: [try! ReaderRule(groupID: Array(repeating: 0, count: 16))])
        state.cachedDocuments[keyHex] = other
        XCTAssertEqual(f.core().decide(f.presentation(), state: &state, at: now).denyReason, .wrongReader)
        XCTAssertEqual(state.verified.verdict(key: keyHex, bytes: other, trust: f.trust())?.document?.id, [0xD0, 0x02])
    }

    /// A memo made under one trust store does not count under another.
    func testAnotherTrustStoreVerifiesAgain() throws {
        var state = acceptedState()
        let core = DecisionCore(reader: f.reader, policy: f.policy,
                                trust: try TrustStore(issuerPublicKeys: [Primitives.point(of: f.otherIssuer)]))
        XCTAssertTrue(core.wantsStepUp(credentialPublicKey: f.credentialKey, state: state, at: now))
        XCTAssertEqual(core.decide(f.presentation(), state: &state, at: now).denyReason, .unknownCredential)
        XCTAssertTrue(f.core().decide(f.presentation(), state: &state, at: now).isGrant)
    }

    /// Checks that depend on time still run on a decision from the memo.
    func testExpiryRemovesTheDocumentAndItsMemo() {
        var state = acceptedState()
        let bytes = state.cachedDocuments[keyHex]!
        let later = now.addingTimeInterval(9 * 3600)
        XCTAssertEqual(f.core().decide(f.presentation(), state: &state, at: later).denyReason, .expired)
        XCTAssertNil(state.cachedDocuments[keyHex])
        XCTAssertNil(state.verified.verdict(key: keyHex, bytes: bytes, trust: f.trust()))
    }

    func testRevocationStillAppliesToAMemoizedDocument() throws {
        var state = acceptedState()
        let revocation = f.revocationDocument(order: 1, entries: [try RevocationEntry(documentID: [0xD0, 0x01], expiry: now.addingTimeInterval(3600))])
        XCTAssertEqual(f.core().decide(f.presentation(revocation: [revocation]), state: &state, at: now).denyReason, .revoked)
        XCTAssertEqual(f.core().decide(f.presentation(), state: &state, at: now).denyReason, .revoked)
    }

    func testEvictionForgetsTheEvicted() {
        f.policy.maxCachedDocuments = 1
        var state = acceptedState()
        let first = state.cachedDocuments[keyHex]!
        let other = Primitives.point(of: f.otherCredential)
        XCTAssertTrue(f.core().decide(f.presentation(key: other, access: [f.accessDocument(key: other)]), state: &state, at: now).isGrant)
        XCTAssertEqual(Array(state.cachedDocuments.keys), [Hex.encode(other)])
        XCTAssertNil(state.verified.verdict(key: keyHex, bytes: first, trust: f.trust()))
    }

    func testMemoIsNotPartOfEquality() throws {
        let state = acceptedState()
        let loaded = try JSONDecoder().decode(EngineState.self, from: try JSONEncoder().encode(state))
        XCTAssertEqual(loaded, state)
    }
}

final class RecentTransactionIDsTests: XCTestCase {
    /// Ids set by hand may repeat; dropping the oldest copy keeps the newer one.
    func testWindowWithRepeatedIDs() {
        var r = RecentTransactionIDs(["aa", "aa", "bb"])
        r.append("cc", keepingLast: 3)
        XCTAssertEqual(r.order, ["aa", "bb", "cc"])
        XCTAssertTrue(r.contains("aa"))
        r.append("dd", keepingLast: 3)
        XCTAssertEqual(r.order, ["bb", "cc", "dd"])
        XCTAssertFalse(r.contains("aa"))
        XCTAssertTrue(r.contains("bb"))
        XCTAssertEqual(r, RecentTransactionIDs(["bb", "cc", "dd"]))
    }
}
