import AccessProtocol
import ByteCore
import Codecs
import Crypto
import Foundation
@testable import Lock
import OfflineUnlock
import LockBenchTestSupport
import XCTest

/// A lock built from real files: configuration, reader key, issuer key; documents issued with the
/// issuer's private key; decisions through the AccessDecider seam.
final class EmulatedLockTests: XCTestCase {
    let fixture = LockFixture()
    var t0: Date { fixture.t0 }
    var issuer: P256.Signing.PrivateKey { fixture.issuer }
    var credential: P256.Signing.PrivateKey { fixture.credential }
    var group: [UInt8] { fixture.group }
    var sub: [UInt8] { fixture.sub }
    func makeConfig(_ dir: String, policy: LockPolicy = LockPolicy()) throws -> String { try fixture.makeConfig(dir, policy: policy) }
    func document(until: TimeInterval = 8 * 3600) throws -> [UInt8] { try fixture.document(until: until) }
    func presentation(_ docs: [[UInt8]] = []) -> Presentation { fixture.presentation(docs) }

    func testConfigurationRoundTripAndErrors() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let path = try makeConfig(dir)
        let c = try LockConfiguration.load(path: path)
        XCTAssertEqual(c.model, "NDE")
        XCTAssertEqual(c.stateDirectoryPath, dir + "/state")
        XCTAssertEqual(try c.trustStore().issuerKeys, [Primitives.point(of: issuer)])
        XCTAssertEqual(try c.readerIdentity().groupID, group)
        // Defaults for a minimal file; a precise error for a bad one.
        try Data(#"{"model":"NDE","firmware":"1","reader":{"signingKey":"reader.key.pem","groupID":"\#(Hex.encode(group))","subID":"\#(Hex.encode(sub))"}}"#.utf8).write(to: URL(fileURLWithPath: dir + "/min.json"))
        let minimal = try LockConfiguration.load(path: dir + "/min.json")
        XCTAssertEqual(minimal.policy, LockPolicy())
        XCTAssertEqual(minimal.stateDirectory, "state")
        try Data(#"{"model":"NDE","firmware":"1","reader":{"signingKey":"reader.key.pem","groupID":"00","subID":"00"}}"#.utf8).write(to: URL(fileURLWithPath: dir + "/bad.json"))
        XCTAssertThrowsError(try LockConfiguration.load(path: dir + "/bad.json")) {
            XCTAssertEqual(($0 as? LockError)?.code, .invalidIdentity)
            XCTAssertTrue("\($0)".contains("reader.groupID"), "\($0)")
        }
        try Data(#"{"model":"NDE","firmware":"1","reader":{"signingKey":"k","groupID":"00","subID":"00"},"policy":{"clockLeeway":"soon"}}"#.utf8).write(to: URL(fileURLWithPath: dir + "/bad2.json"))
        XCTAssertThrowsError(try LockConfiguration.load(path: dir + "/bad2.json")) {
            XCTAssertEqual(($0 as? LockError)?.code, .invalidConfiguration)
            XCTAssertTrue("\($0)".contains("clockLeeway"), "\($0)")
        }
    }

    /// A stop inside the relock window secures the bolt and writes it; a secured bolt stays so.
    func testSecureNowClosesAnUnsecuredBoltAndPersistsIt() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let path = try makeConfig(dir)
        var lock: EmulatedLock? = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        XCTAssertFalse(try lock!.secureNow(), "already secured")
        XCTAssertTrue(lock!.decide(presentation([try document()])).isGrant)
        XCTAssertEqual(lock!.boltName, "unsecured")
        XCTAssertTrue(try lock!.secureNow())
        XCTAssertEqual(lock!.boltName, "secured")
        lock = nil
        let again = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        XCTAssertEqual(again.boltState, .secured)
        XCTAssertEqual(try AuditLog.verify(directory: dir + "/state").entries.count, 1, "the stop adds no audit line")
    }

    func testDecisionsMoveTheBoltAuditAndPersist() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let path = try makeConfig(dir)
        var lock: EmulatedLock? = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        XCTAssertTrue(lock!.wantsStepUp(credentialPublicKey: Primitives.point(of: credential)))
        XCTAssertTrue(lock!.decide(presentation([try document()])).isGrant)
        XCTAssertEqual(lock!.readerStatus, 0x0101)
        try lock!.advanceClock(6)
        XCTAssertEqual(lock!.boltName, "secured")
        _ = lock!.apply(.refused(Refusal(.protocol(.badCredentialSignature), detail: "AUTH1 signature"), transaction: TransactionID([1, 2]), interface: .ble))
        try lock!.setFastCache(Data([0xFA]))
        lock = nil
        // Restart: cached document, clock, FAST blob and audit chain survive.
        let again = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        XCTAssertNil(again.audit.damage)
        XCTAssertEqual(again.clock.now(), t0.addingTimeInterval(6))
        XCTAssertEqual(again.fastCache, Data([0xFA]))
        XCTAssertFalse(again.wantsStepUp(credentialPublicKey: Primitives.point(of: credential)))
        XCTAssertTrue(again.decide(presentation()).isGrant)
        let (entries, damage) = try AuditLog.verify(directory: dir + "/state")
        XCTAssertNil(damage)
        XCTAssertEqual(entries.map(\.decision), ["grant", "deny", "grant"])
        XCTAssertEqual(entries[1].reason, "bad_credential_signature")
        XCTAssertEqual(entries[1].transport, "ble")
        XCTAssertEqual(entries[2].credential, "d1")
    }

    func testClockControls() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let lock = try EmulatedLock(configuration: LockConfiguration.load(path: try makeConfig(dir)))
        XCTAssertTrue(lock.decide(presentation([try document()])).isGrant)
        try lock.setClock(t0.addingTimeInterval(-3600), trusted: false)
        XCTAssertEqual(lock.decide(presentation()).reason, .engine(.clockRollback))
        try lock.setClock(t0.addingTimeInterval(60), trusted: false)
        try lock.powerLoss()
        XCTAssertTrue(lock.wantsStepUp(credentialPublicKey: Primitives.point(of: credential)))
        XCTAssertEqual(lock.decide(presentation()).reason, .engine(.clockUntrusted))
        try lock.setClock(t0.addingTimeInterval(120), trusted: true)
        XCTAssertTrue(lock.decide(presentation()).isGrant)
        try lock.jam()
        XCTAssertEqual(lock.readerStatus, 0x0102)
        try lock.clearJam()
        XCTAssertEqual(lock.readerStatus, 0x0100)
    }

    /// §2.10: a tap writes the journal only, so a snapshot that cannot be written (here the state
    /// file's temporary path is taken) neither undoes nor delays a durable decision; the journal
    /// still holds its state change for recovery.
    func testASnapshotThatCannotBeWrittenDoesNotUndoADurableDecision() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let lock = try EmulatedLock(configuration: LockConfiguration.load(path: try makeConfig(dir)))
        lock.snapshotInterval = 1
        let snapshot = try Data(contentsOf: URL(fileURLWithPath: dir + "/state/state.json"))
        try FileManager.default.createDirectory(atPath: dir + "/state/state.json.tmp", withIntermediateDirectories: true)
        let outcome = lock.apply(.presentation(presentation([try document()])))
        XCTAssertTrue(outcome.decision.isGrant, "\(outcome)")
        XCTAssertEqual(lock.boltName, "unsecured")
        XCTAssertThrowsError(try lock.flush(), "the snapshot cannot be written")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: dir + "/state/state.json")), snapshot)
        let (entries, damage) = try AuditLog.verify(directory: dir + "/state")
        XCTAssertNil(damage)
        // The failed snapshot of the clean stop is reported in the log, not swallowed (issue 20 §2).
        XCTAssertEqual(entries.map(\.decision), ["grant", AuditEntry.snapshotFailedEvent])
        XCTAssertNotNil(entries.first?.state?.documents)
    }

    // MARK: Issue 9

    /// §1.1: every revocation list change is an audit entry, written before the decision's own.
    func testRevocationListChangesAreAudited() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let lock = try EmulatedLock(configuration: LockConfiguration.load(path: try makeConfig(dir)))
        XCTAssertTrue(lock.decide(presentation([try document()])).isGrant)
        let entry = try RevocationEntry(publicKeyHash: RevocationEntry.hash(credentialPublicKey: Primitives.point(of: credential)), expiry: t0.addingTimeInterval(86_400))
        let list = RevocationDocument.issue(revocation: RevocationData(entries: [entry]), issued: t0.addingTimeInterval(-60),
                                            expiry: t0.addingTimeInterval(86_400), issuerKey: issuer).encoded()
        var p = presentation()
        p.revocationDocuments = [list]
        XCTAssertEqual(lock.decide(p).reason, .engine(.revoked))
        let (entries, damage) = try AuditLog.verify(directory: dir + "/state")
        XCTAssertNil(damage)
        XCTAssertEqual(entries.map(\.decision), ["grant", AuditEntry.revocationListEvent, "deny"])
        XCTAssertEqual(entries.map(\.seq), [1, 2, 3])
        let kid = Hex.encode(CoseSign1.keyIdentifier(issuerPublicKey: Primitives.point(of: issuer)))
        XCTAssertEqual(entries[1].detail, "revocation list of issuer \(kid) changed (overwrite, signed 2026-03-02T08:59:00Z; before: none): +1 −0, 1 entry")
        XCTAssertEqual(entries[1].transaction, entries[2].transaction)
    }

    /// §1.6/§3.14: a clock moved beyond year 9999 is refused (nothing saved), not trapped on.
    func testClockCannotBeMovedOutOfRange() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let path = try makeConfig(dir)
        var lock: EmulatedLock? = try EmulatedLock(configuration: LockConfiguration.load(path: path))
        for seconds in [1e300, -1e300, .infinity, 300_000_000_000] {
            XCTAssertThrowsError(try lock!.advanceClock(seconds)) { XCTAssertEqual(($0 as? LockError)?.code, .invalidInput, "\($0)") }
        }
        XCTAssertThrowsError(try lock!.setClock(Date(timeIntervalSince1970: .nan), trusted: true))
        XCTAssertEqual(lock!.clock.now(), t0)
        lock = nil
        XCTAssertEqual(try EmulatedLock(configuration: LockConfiguration.load(path: path)).clock.now(), t0)
    }

    /// §3.14: a state file holding a time no date can be (written by an older LockBench) is
    /// refused as corrupt with the way out in the message.
    func testStateWithAnImpossibleTimeIsRefused() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let path = try makeConfig(dir)
        try EmulatedLock(configuration: LockConfiguration.load(path: path)).flush()
        // A state file with a valid MAC whose clock no date can be (e.g. saved by an older LockBench).
        let key = try AuditLog.openKey(dir + "/state/audit.key", history: true)
        let store = StateStore(directory: dir + "/state", auditKey: key)
        var state = try XCTUnwrap(store.load())
        state.clock = .frozen(Date(timeIntervalSince1970: 1e300))
        try store.save(state)
        XCTAssertThrowsError(try EmulatedLock(configuration: LockConfiguration.load(path: path))) {
            XCTAssertEqual(($0 as? LockError)?.code, .corruptState, "\($0)")
            XCTAssertTrue("\($0)".contains("clock set"), "\($0)")
        }
    }

    /// §3.14: every policy value is bounded when the configuration is read.
    func testConfigurationRefusesUnboundedPolicy() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        _ = try makeConfig(dir)
        let base = #"{"model":"NDE","firmware":"1","reader":{"signingKey":"reader.key.pem","groupID":"\#(Hex.encode(group))","subID":"\#(Hex.encode(sub))"},"policy":"#
        let cases: [(String, String)] = [
            (#"{"relockTime":"inf"}"#, "relockTime"), (#"{"relockTime":"1e300"}"#, "relockTime"),
            (#"{"clockLeeway":"inf"}"#, "clockLeeway"), (#"{"clockLeeway":"nan"}"#, "clockLeeway"),
            (#"{"maxDocumentLifetime":"1e300"}"#, "maxDocumentLifetime"), (#"{"maxDocumentLifetime":"100000d"}"#, "maxDocumentLifetime"),
            (#"{"relockTime":"2h"}"#, "relockTime"), (#"{"clockLeeway":"-5m"}"#, "clockLeeway"),
            (#"{"scheduleUTCOffsetMinutes":9223372036854775807}"#, "scheduleUTCOffsetMinutes"),
            (#"{"scheduleUTCOffsetMinutes":-900}"#, "scheduleUTCOffsetMinutes"),
            (#"{"replayWindow":-1}"#, "replayWindow"), (#"{"maxCachedDocuments":100000000}"#, "maxCachedDocuments"),
        ]
        for (policy, field) in cases {
            try Data((base + policy + "}").utf8).write(to: URL(fileURLWithPath: dir + "/p.json"))
            XCTAssertThrowsError(try LockConfiguration.load(path: dir + "/p.json"), policy) {
                XCTAssertEqual(($0 as? LockError)?.code, .invalidConfiguration, "\($0)")
                XCTAssertTrue("\($0)".contains(field), "\($0)")
            }
        }
        // A policy built in code is checked when a lock opens.
        var policy = LockPolicy()
        policy.relockTime = .infinity
        let bad = try makeConfig(dir, policy: LockPolicy())
        var config = try LockConfiguration.load(path: bad)
        config.policy = policy
        XCTAssertThrowsError(try EmulatedLock(configuration: config)) { XCTAssertEqual(($0 as? LockError)?.code, .invalidConfiguration) }
    }
}
