import ByteCore
import Codecs
import Foundation
import LockBenchTestSupport
@testable import OfflineUnlock
import XCTest

/// The engine tracks what its decisions change (`EngineChanges`): the lock records exactly that
/// and undoes it when the record cannot be written, without comparing or copying the whole state.
final class EngineChangesTests: XCTestCase {
    var f = Fixture()
    let now = Fixture.t0

    func testAStepUpTouchesItsOwnKeysOnlyWhateverTheCacheHolds() {
        f.policy.replayWindow = 3
        var state = EngineState(clock: TrustedClock(trustedAt: now.addingTimeInterval(-7200)))
        // 40 other phones cached and a full replay window.
        for n in 0..<40 {
            let key = Primitives.point(of: TestFixtures.key(UInt8(0x50 + n)))
            XCTAssertTrue(f.core().decide(f.presentation(key: key, access: [f.accessDocument(key: key, id: [0xE0, UInt8(n)])]), state: &state, at: now).isGrant)
        }
        _ = state.takeChanges()
        let before = state
        XCTAssertTrue(f.core().decide(f.presentation(access: [f.accessDocument()]), state: &state, at: now).isGrant)
        let changes = state.takeChanges()
        XCTAssertEqual(Array(changes.documents.keys), [Hex.encode(f.credentialKey)])
        XCTAssertNil(changes.documents.values.first?.before)
        XCTAssertEqual(Array(changes.versions.keys), [Hex.encode(f.credentialKey)])
        XCTAssertEqual(changes.appendedTransactions.count, 1)
        XCTAssertFalse(changes.untracked)
        XCTAssertTrue(state.takeChanges().isEmpty, "taken once")

        // Undone: the state is the one before, replay window included (the dropped id is back).
        var undone = state
        undone.undo(changes)
        XCTAssertEqual(undone, before)
        XCTAssertEqual(undone.recentTransactionIDs, before.recentTransactionIDs)
        XCTAssertNil(undone.cachedDocuments[Hex.encode(f.credentialKey)])
    }

    func testAFailedDecisionIsUndoneToo() {
        var state = EngineState(clock: TrustedClock(trustedAt: now.addingTimeInterval(-7200)))
        let before = state
        // Denied outside its validity: the transaction id is remembered all the same.
        XCTAssertFalse(f.core().decide(f.presentation(access: [f.accessDocument()]), state: &state, at: now.addingTimeInterval(9 * 3600)).isGrant)
        let changes = state.takeChanges()
        XCTAssertEqual(changes.appendedTransactions.count, 1)
        state.undo(changes)
        XCTAssertEqual(state, before)
    }

    func testSettersMakeTheChangesUntracked() {
        var state = EngineState(clock: TrustedClock(trustedAt: now))
        XCTAssertFalse(state.takeChanges().untracked)
        state.cachedDocuments["aa"] = [1]
        XCTAssertTrue(state.takeChanges().untracked)
        state.highestVersion["aa"] = 0x0100
        XCTAssertTrue(state.takeChanges().untracked)
        state.recentTransactionIDs = ["t1"]
        XCTAssertTrue(state.takeChanges().untracked)
        // Decoded from disk: the base a journal starts from, nothing to record.
        let decoded = try! JSONDecoder().decode(EngineState.self, from: JSONEncoder().encode(state))
        var copy = decoded
        XCTAssertTrue(copy.takeChanges().isEmpty)
    }

    func testEvictionKeepsTheLatestExpiringWithoutSortingTheCache() {
        f.policy.maxCachedDocuments = 10
        var state = EngineState(clock: TrustedClock(trustedAt: now.addingTimeInterval(-7200)))
        // The rule, as a model: add, then drop the soonest-expiring other than the one just added.
        var model: [String: Date] = [:]
        for n in 0..<30 {
            let key = Primitives.point(of: TestFixtures.key(UInt8(0x80 + n)))
            let until = now.addingTimeInterval(3600 + Double((n * 7919) % 30) * 60)   // shuffled expiries
            model[Hex.encode(key)] = until
            if model.count > 10, let victim = model.filter({ $0.key != Hex.encode(key) }).min(by: { $0.value < $1.value }) {
                model[victim.key] = nil
            }
            XCTAssertTrue(f.core().decide(f.presentation(key: key, access: [f.accessDocument(key: key, id: [0xE1, UInt8(n)], until: until)]),
                                          state: &state, at: now).isGrant)
            XCTAssertLessThanOrEqual(state.cachedDocuments.count, 10)
            XCTAssertNotNil(state.cachedDocuments[Hex.encode(key)], "the document just added is never the one evicted")
        }
        XCTAssertEqual(Set(state.cachedDocuments.keys), Set(model.keys))
        // A cached document that does not verify counts as expired: it goes first.
        state.cachedDocuments[String(repeating: "ab", count: 65)] = [0xA0]
        f.core().verifyCachedDocuments(&state)
        let key = Primitives.point(of: TestFixtures.key(0xC0))
        XCTAssertTrue(f.core().decide(f.presentation(key: key, access: [f.accessDocument(key: key, id: [0xE2, 0], until: now.addingTimeInterval(7200))]),
                                      state: &state, at: now).isGrant)
        XCTAssertNil(state.cachedDocuments[String(repeating: "ab", count: 65)])
    }
}
