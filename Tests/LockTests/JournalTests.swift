import ByteCore
import Codecs
import Crypto
import Foundation
@testable import Lock
import LockBenchTestSupport
import OfflineUnlock
import XCTest

/// §2.10: one journal, one fsync. A decision and the state change it causes are one audit entry
/// (`state` delta); `state.json` is a snapshot the journal is replayed onto.
final class JournalTests: XCTestCase {
    let base = LockFixture()

    /// The files of a state directory as a crash would leave them (everything acknowledged is
    /// fsynced), copied beside it, and the configuration pointing at the copy.
    func crashCopy(_ dir: String, _ path: String) throws -> LockConfiguration {
        let copy = dir + "/crashed"
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        for name in ["state.json", "audit.log", "audit.key"] {
            try FileManager.default.copyItem(atPath: dir + "/state/" + name, toPath: copy + "/" + name)
        }
        var config = try LockConfiguration.load(path: path)
        config.stateDirectory = copy
        return config
    }

    func testRecoveryReplaysTheJournalAfterTheSnapshot() throws {
        let dir = try temporaryDirectory("lockbench-journal").path
        let path = try base.makeConfig(dir)
        let lock = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        let snapshot = try Data(contentsOf: URL(fileURLWithPath: dir + "/state/state.json"))
        XCTAssertTrue(lock.decide(base.presentation([try base.document()])).isGrant)    // caches the document
        try lock.tick()
        XCTAssertTrue(lock.decide(base.presentation()).isGrant)
        XCTAssertEqual(lock.decide(Presentation(credentialPublicKey: Primitives.point(of: P256.Signing.PrivateKey()),
                                                transactionID: Primitives.randomBytes(16), interface: .ble, protocolVersion: 0x0100,
                                                fast: false)).reason, .engine(.unknownCredential))
        // Taps wrote the journal only: the snapshot is the one the lock started with.
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: dir + "/state/state.json")), snapshot)
        let entries = try AuditLog.verify(directory: dir + "/state").entries
        XCTAssertEqual(entries.count, 3)
        XCTAssertNotNil(entries[0].state?.documents, "the step-up record carries the cached document")
        XCTAssertEqual(entries.compactMap { $0.state?.transactions?.count }, [1, 1, 1])

        let recovered = try EmulatedLock(configuration: crashCopy(dir, path))
        XCTAssertEqual(recovered.engine.state, lock.engine.state, "snapshot + journal = the state the lock acknowledged")
        XCTAssertEqual(recovered.boltName, lock.boltName)
        XCTAssertFalse(recovered.wantsStepUp(credentialPublicKey: Primitives.point(of: base.credential)))
        XCTAssertNil(recovered.audit.damage)
        // A replayed transaction is refused after the crash too.
        var replayed = base.presentation()
        replayed.transactionID = Hex.decode(entries[1].transaction)!
        XCTAssertEqual(recovered.decide(replayed).reason, .engine(.replay))
    }

    func testTheStepUpRecordDoesNotGrowWithTheCache() throws {
        let dir = try temporaryDirectory("lockbench-journal").path
        var policy = LockPolicy()
        policy.maxCachedDocuments = 64
        let path = try base.makeConfig(dir, policy: policy)
        let lock = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        var sizes = [Int]()
        let log = dir + "/state/audit.log"
        for n in 0..<40 {
            let phone = P256.Signing.PrivateKey()
            let doc = TestFixtures.accessDocument(credentialPublicKey: Primitives.point(of: phone), id: [0xD1],
                                                  from: base.t0.addingTimeInterval(-60), until: base.t0.addingTimeInterval(3600), issuer: base.issuer)
            let before = try FileManager.default.attributesOfItem(atPath: log)[.size] as! Int
            let p = Presentation(credentialPublicKey: Primitives.point(of: phone), transactionID: Primitives.randomBytes(16),
                                 interface: .nfc, protocolVersion: 0x0100, fast: false, accessDocuments: [doc])
            XCTAssertTrue(lock.decide(p).isGrant, "phone \(n)")
            sizes.append(try FileManager.default.attributesOfItem(atPath: log)[.size] as! Int - before)
        }
        XCTAssertEqual(lock.engine.state.cachedDocuments.count, 40)
        // The 40th phone's record is the size of the 2nd's: the delta, not the cache.
        XCTAssertLessThan(abs(sizes[39] - sizes[1]), 64, "record sizes \(sizes)")
        XCTAssertLessThan(sizes[39], 2048, "record sizes \(sizes)")
    }

    /// A step-up at a full cache evicts the document expiring soonest: its record carries the
    /// added document and the evicted one, and recovery replays both (the engine tracked them; no
    /// comparison of the whole cache).
    func testAnEvictionRidesInTheStepUpsRecordAndIsReplayed() throws {
        let dir = try temporaryDirectory("lockbench-journal").path
        var policy = LockPolicy()
        policy.maxCachedDocuments = 3
        let path = try base.makeConfig(dir, policy: policy)
        let lock = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        var keys = [String]()
        for n in 0..<5 {
            let phone = P256.Signing.PrivateKey()
            keys.append(Hex.encode(Primitives.point(of: phone)))
            let doc = TestFixtures.accessDocument(credentialPublicKey: Primitives.point(of: phone), id: [0xD2, UInt8(n)],
                                                  from: base.t0.addingTimeInterval(-60), until: base.t0.addingTimeInterval(3600 + Double(n) * 60),
                                                  issuer: base.issuer)
            XCTAssertTrue(lock.decide(Presentation(credentialPublicKey: Primitives.point(of: phone), transactionID: Primitives.randomBytes(16),
                                                   interface: .nfc, protocolVersion: 0x0100, fast: false, accessDocuments: [doc])).isGrant)
        }
        XCTAssertEqual(Set(lock.engine.state.cachedDocuments.keys), Set(keys.suffix(3)))
        let entries = try AuditLog.verify(directory: dir + "/state").entries
        XCTAssertEqual(entries.last?.state?.documents.map { Array($0.keys) }, [keys[4]])
        XCTAssertEqual(entries.last?.state?.documentsRemoved, [keys[1]])
        let recovered = try EmulatedLock(configuration: crashCopy(dir, path))
        XCTAssertEqual(recovered.engine.state, lock.engine.state)
    }

    /// A state directory written before the journal — entries without `state`, a `state.json`
    /// recording the last one — is its own snapshot: opened as it is, nothing replayed, no damage.
    func testAnOldStateDirectoryIsReadAsItsOwnSnapshot() throws {
        let dir = try temporaryDirectory("lockbench-journal").path
        let path = try base.makeConfig(dir)
        var lock: EmulatedLock? = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        XCTAssertTrue(lock!.decide(base.presentation([try base.document()])).isGrant)
        let engine = lock!.engine.state
        lock = nil                                                  // a clean stop: snapshot at the head
        // Entries as an older LockBench wrote them (no `state`), after the snapshot's head.
        let key = try AuditLog.openKey(dir + "/state/audit.key", history: true)
        let old = try AuditLog(directory: dir + "/state", key: key)
        try old.append(time: base.t0, credential: "d1", transport: .nfc, decision: .grant(credentialID: "d1"), transaction: [UInt8](repeating: 7, count: 16))
        let head = old.head
        let reopened = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        XCTAssertNil(reopened.audit.damage)
        XCTAssertEqual(reopened.audit.head, head)
        XCTAssertEqual(reopened.engine.state, engine)
    }

    /// The AccessIteration (Aliro 0.9.4 §7.2.3) rides in the decision's record: a crash after the
    /// grant that raised it cannot bring an issuer's removed documents back.
    func testAnAccessIterationIsJournalledAndRecovered() throws {
        let dir = try temporaryDirectory("lockbench-journal").path
        let path = try base.makeConfig(dir)
        let lock = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        let nine = TestFixtures.accessDocument(credentialPublicKey: Primitives.point(of: base.credential), id: [0xD9],
                                               from: base.t0.addingTimeInterval(-60), until: base.t0.addingTimeInterval(3600),
                                               issuer: base.issuer, validityIteration: 9)
        XCTAssertTrue(lock.decide(base.presentation([nine])).isGrant)
        let entries = try AuditLog.verify(directory: dir + "/state").entries
        XCTAssertEqual(entries.last?.state?.accessIterations?.values.sorted(), [9])
        let recovered = try EmulatedLock(configuration: crashCopy(dir, path))
        XCTAssertEqual(recovered.engine.state.accessIterations, lock.engine.state.accessIterations)
        XCTAssertEqual(recovered.engine.state.accessIterations.values.sorted(), [9])
        // A document of another credential 8 below is refused after the crash too.
        let stranger = P256.Signing.PrivateKey()
        let one = TestFixtures.accessDocument(credentialPublicKey: Primitives.point(of: stranger), id: [0xD1],
                                              from: base.t0.addingTimeInterval(-60), until: base.t0.addingTimeInterval(3600),
                                              issuer: base.issuer, validityIteration: 1)
        var p = base.presentation([one])
        p.credentialPublicKey = Primitives.point(of: stranger)
        XCTAssertEqual(recovered.decide(p).reason, .engine(.iterationRemoved))
    }

    func testDeltasRoundTripThroughTheChain() throws {
        var before = PersistedLockState(engine: EngineState(clock: TrustedClock(trustedAt: base.t0)), clock: .frozen(base.t0))
        before.engine.cachedDocuments = ["aa": [1, 2, 3], "bb": [4]]
        before.engine.recentTransactionIDs = ["t1", "t2", "t3"]
        var after = before
        after.engine.cachedDocuments["cc"] = [5]
        after.engine.cachedDocuments["aa"] = nil
        after.engine.recentTransactionIDs = ["t2", "t3", "t4"]
        after.engine.highestVersion["cc"] = 0x0100
        after.engine.accessIterations["1ssuer"] = 9
        after.bolt = .jammed
        let delta = StateDelta(from: before, to: after, replayWindow: 3)
        XCTAssertEqual(delta.transactions, ["t4"])
        XCTAssertEqual(delta.documentsRemoved, ["aa"])
        XCTAssertEqual(delta.documents?.keys.sorted(), ["cc"])
        XCTAssertEqual(delta.accessIterations, ["1ssuer": 9])
        let decoded = try JSONDecoder().decode(StateDelta.self, from: JSONEncoder().encode(delta))
        var replayed = before
        decoded.apply(to: &replayed, replayWindow: 3)
        XCTAssertEqual(replayed, after)
        XCTAssertTrue(StateDelta(from: after, to: after, replayWindow: 3).isEmpty)
    }
}
