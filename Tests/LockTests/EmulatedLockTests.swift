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
    let t0 = TestFixtures.monday
    let issuer = P256.Signing.PrivateKey()
    let credential = P256.Signing.PrivateKey()
    let group = TestFixtures.groupID, sub = TestFixtures.subID

    func makeConfig(_ dir: String, policy: LockPolicy = LockPolicy()) throws -> String {
        let reader = P256.Signing.PrivateKey()
        try reader.pemRepresentation.write(toFile: dir + "/reader.key.pem", atomically: true, encoding: .utf8)
        try issuer.publicKey.pemRepresentation.write(toFile: dir + "/issuer.pub.pem", atomically: true, encoding: .utf8)
        let config = LockConfiguration(model: "NDE", firmware: "03.20.00",
                                       reader: .init(signingKey: "reader.key.pem", groupID: Hex.encode(group), subID: Hex.encode(sub)),
                                       trustedIssuers: ["issuer.pub.pem"], policy: policy, stateDirectory: "state",
                                       clock: RFC3339.format(t0))
        let path = dir + "/lock.json"
        try config.encoded().write(to: URL(fileURLWithPath: path))
        return path
    }

    func document(until: TimeInterval = 8 * 3600) throws -> [UInt8] {
        TestFixtures.accessDocument(credentialPublicKey: Primitives.point(of: credential), id: [0xD1],
                                    from: t0.addingTimeInterval(-60), until: t0.addingTimeInterval(until), issuer: issuer)
    }

    func presentation(_ docs: [[UInt8]] = []) -> Presentation {
        Presentation(credentialPublicKey: Primitives.point(of: credential), transactionID: Primitives.randomBytes(16),
                     interface: .nfc, protocolVersion: 0x0100, fast: false, accessDocuments: docs)
    }

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

    /// The `ble` section: defaults, durations as text, a bad group resolving key or duration named.
    func testBLESettingsDefaultsDurationsAndErrors() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        _ = try makeConfig(dir)
        func load(_ ble: String) throws -> LockConfiguration {
            try Data(#"{"model":"NDE","firmware":"1","reader":{"signingKey":"reader.key.pem","groupID":"\#(Hex.encode(group))","subID":"\#(Hex.encode(sub))"},"ble":\#(ble)}"#.utf8)
                .write(to: URL(fileURLWithPath: dir + "/ble.json"))
            return try LockConfiguration.load(path: dir + "/ble.json")
        }
        let defaults = try XCTUnwrap(load(#"{"transport":"tcp:127.0.0.1:9"}"#).ble)
        XCTAssertEqual(defaults.idleTimeout, 5)
        XCTAssertEqual(defaults.transactionTimeout, 10)
        XCTAssertEqual(defaults.tagRotation, 900)
        XCTAssertNil(defaults.address)
        XCTAssertNil(defaults.groupResolvingKey)
        let set = try XCTUnwrap(load(#"{"address":"C3:12:34:56:78:9A","idleTimeout":"2s","transactionTimeout":"1m","tagRotation":"1h","groupResolvingKey":"000102030405060708090a0b0c0d0e0f"}"#).ble)
        XCTAssertEqual(set.address, "C3:12:34:56:78:9A")
        XCTAssertEqual(set.idleTimeout, 2)
        XCTAssertEqual(set.transactionTimeout, 60)
        XCTAssertEqual(set.tagRotation, 3600)
        let again = try JSONDecoder().decode(LockConfiguration.BLE.self, from: try JSONEncoder().encode(set))
        XCTAssertEqual(again, set)
        XCTAssertThrowsError(try load(#"{"groupResolvingKey":"00"}"#)) {
            XCTAssertEqual(($0 as? LockError)?.code, .invalidConfiguration)
            XCTAssertTrue("\($0)".contains("ble.groupResolvingKey") && "\($0)".contains("32 hex digits"), "\($0)")
        }
        XCTAssertThrowsError(try load(#"{"idleTimeout":"0s"}"#)) {
            XCTAssertTrue("\($0)".contains("ble.idleTimeout"), "\($0)")
        }
        XCTAssertThrowsError(try load(#"{"transactionTimeout":"soon"}"#)) {
            XCTAssertTrue("\($0)".contains("ble.transactionTimeout"), "\($0)")
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

    func testStorageFailureDeniesAndKeepsTheBoltSecured() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let lock = try EmulatedLock(configuration: LockConfiguration.load(path: try makeConfig(dir)))
        // Make the state file's directory unwritable for the atomic rename.
        try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: dir + "/state")
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: dir + "/state") }
        if getuid() == 0 {
            // root ignores directory permissions: make the state path a directory instead.
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: dir + "/state")
            try? FileManager.default.removeItem(atPath: dir + "/state/state.json")
            try FileManager.default.createDirectory(atPath: dir + "/state/state.json.tmp", withIntermediateDirectories: true)
        }
        let d = lock.decide(presentation([try document()]))
        // Before issue 10: the engine's `malformed_input` with a "storage failure:" detail.
        XCTAssertEqual(d.reason, .lock(LockReason.storageFailure), "\(d)")
        XCTAssertEqual(d.refusal?.code, "storage_failure")
        XCTAssertTrue(d.refusal?.detail.hasPrefix("storage failure:") ?? false, "\(d)")
        XCTAssertEqual(lock.boltName, "secured")
    }
}
