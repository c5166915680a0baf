import Foundation
import LockBenchTestSupport
import XCTest

/// Issue 20 §5: hostile files through the shipped binary. Each was accepted (or refused without
/// naming what was wrong); each is now refused with exit 2 and a message naming the field or the
/// file and the rule.
final class HostileFilesEndToEndTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = try LockBenchProcess.temporaryDirectory(self)
        try lb(["key", "issuer", "issuer"])
        try lb(["key", "reader", "door", "--group", String(repeating: "a1", count: 16), "--sub", String(repeating: "b1", count: 16)])
        try lb(["config", "create", "--reader-identity", "door.reader.json", "--issuer", "issuer.pub.pem",
                "--clock", "2026-03-02T09:00:00Z", "--out", "door.lock.json"])
    }

    @discardableResult
    func lb(_ args: [String], expect status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> LockBenchProcess.Result {
        let r = try LockBenchProcess.run(args, currentDirectory: dir)
        XCTAssertEqual(r.status, status, "lockbench \(args.joined(separator: " "))\nstdout: \(r.stdout)\nstderr: \(r.stderr)", file: file, line: line)
        return r
    }

    var config: [String: Any] {
        get throws { try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("door.lock.json"))) as! [String: Any] }
    }

    /// `config check` on `text` as the configuration: exit 2, and the message has every word of `words`.
    func refused(_ text: String, _ words: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        try Data(text.utf8).write(to: dir.appendingPathComponent("bad.lock.json"))
        let r = try lb(["config", "check", "--config", "bad.lock.json"], expect: 2, file: file, line: line)
        for w in words { XCTAssertTrue(r.stderr.contains(w), "\(words): \(r.stderr)", file: file, line: line) }
        XCTAssertFalse(r.stderr.contains("not valid JSON"), r.stderr, file: file, line: line)
    }

    func edited(_ change: (inout [String: Any]) -> Void) throws -> String {
        var c = try config
        change(&c)
        return String(decoding: try JSONSerialization.data(withJSONObject: c), as: UTF8.self)
    }

    func testOutOfRangeNumbersNameTheField() throws {
        let original = String(decoding: try Data(contentsOf: dir.appendingPathComponent("door.lock.json")), as: UTF8.self)
        for value in ["1e30", "1.5", "100000000000000000000"] {
            let text = original.replacingOccurrences(of: "\"maxCachedDocuments\" : 256", with: "\"maxCachedDocuments\" : \(value)")
            XCTAssertNotEqual(text, original)
            try refused(text, ["policy.maxCachedDocuments", value, "whole-number"])
        }
    }

    func testDuplicateKeysAreRefused() throws {
        let original = String(decoding: try Data(contentsOf: dir.appendingPathComponent("door.lock.json")), as: UTF8.self)
        try refused(original.replacingOccurrences(of: "\"relockTime\" : \"5s\"", with: "\"relockTime\" : \"5s\", \"relockTime\" : \"1h\""),
                    ["\"relockTime\" appears twice", "policy"])
    }

    func testConfigurationFieldsThatCheckPassedAreRefused() throws {
        try refused(try edited { c in var p = c["policy"] as! [String: Any]; p["supportedProtocolVersions"] = []; c["policy"] = p },
                    ["supportedProtocolVersions", "at least one version"])
        try refused(try edited { $0["stateDirectory"] = "" }, ["stateDirectory is empty"])
        try Data("x".utf8).write(to: dir.appendingPathComponent("afile"))
        try refused(try edited { $0["stateDirectory"] = "afile" }, ["stateDirectory", "is a file"])
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("keydir"), withIntermediateDirectories: false)
        try refused(try edited { $0["auditKeyFile"] = "keydir" }, ["auditKeyFile", "is a directory"])
        try Data(repeating: 7, count: 31).write(to: dir.appendingPathComponent("short.key"))
        try refused(try edited { $0["auditKeyFile"] = "short.key" }, ["auditKeyFile", "31 bytes", "32"])
        try refused(try edited { $0["ble"] = ["address": "ZZ:12:34:56:78:9A"] }, ["ble.address", "ZZ:12:34:56:78:9A"])
        try refused(try edited { $0["firmware"] = "" }, ["firmware is empty"])
    }

    func testAKeyFileWithTwoBlocksIsRefused() throws {
        try lb(["key", "issuer", "other"])
        let two = try String(contentsOf: dir.appendingPathComponent("issuer.pub.pem"), encoding: .utf8)
            + "\n" + (try String(contentsOf: dir.appendingPathComponent("other.pub.pem"), encoding: .utf8))
        try two.write(to: dir.appendingPathComponent("two.pub.pem"), atomically: true, encoding: .utf8)
        try refused(try edited { $0["trustedIssuers"] = ["two.pub.pem"] }, ["two.pub.pem", "2 PEM blocks"])
        let keys = try String(contentsOf: dir.appendingPathComponent("issuer.key.pem"), encoding: .utf8)
            + "\n" + (try String(contentsOf: dir.appendingPathComponent("other.key.pem"), encoding: .utf8))
        try keys.write(to: dir.appendingPathComponent("two.key.pem"), atomically: true, encoding: .utf8)
        chmod(dir.appendingPathComponent("two.key.pem").path, 0o600)
        let r = try lb(["doc", "revoke", "--issuer-key", "two.key.pem", "--out", "r.cbor"], expect: 2)
        XCTAssertTrue(r.stderr.contains("two private key blocks"), r.stderr)
    }

    func testAnOffsetOutOfRangeIsNoTime() throws {
        let r = try lb(["doc", "revoke", "--issuer-key", "issuer.key.pem", "--now", "2026-03-02T09:00:00+99:99", "--out", "r.cbor"], expect: 2)
        XCTAssertTrue(r.stderr.contains("--now"), r.stderr)
        try lb(["doc", "revoke", "--issuer-key", "issuer.key.pem", "--now", "2026-03-02T09:00:00+01:00", "--out", "r.cbor"])
    }

    func testAFirmwareVersionNoDeviceShipsIsNotCertified() throws {
        let r = try lb(["firmware", "check", "--model", "NDE", "--firmware", "12345678901234567890"], expect: 2)
        XCTAssertTrue(r.stderr.contains("segment 1 has 20 digits"), r.stderr)
        XCTAssertEqual(try lb(["firmware", "check", "--model", "NDE", "--firmware", ""], expect: 2).stdout, "")
        try Data("device_id,model,firmware\na,NDE,12345678901234567890\nb,NDE,\n".utf8).write(to: dir.appendingPathComponent("inventory.csv"))
        let audit = try lb(["firmware", "audit", "inventory.csv"], expect: 1)
        XCTAssertTrue(audit.stdout.contains("20 digits") && audit.stdout.contains("empty firmware"), audit.stdout)
        XCTAssertTrue(audit.stdout.contains("0 devices; 2 malformed rows — not all certified"), audit.stdout)
    }

    func testAnInventoryWithNoDeviceCertifiesNothing() throws {
        try Data("\u{FEFF}device_id,model,firmware\n".utf8).write(to: dir.appendingPathComponent("inventory.csv"))
        let r = try lb(["firmware", "audit", "inventory.csv"], expect: 1)
        XCTAssertTrue(r.stdout.contains("0 devices — not all certified"), r.stdout)
    }

    func testAnEmptyScenarioIsRefusedNotPassed() throws {
        try Data("# nothing here\n\n".utf8).write(to: dir.appendingPathComponent("empty.scenario"))
        let r = try LockBenchProcess.run(["scenario", "run", "empty.scenario"], currentDirectory: dir)
        XCTAssertNotEqual(r.status, 0, r.stdout)
        XCTAssertFalse(r.stdout.contains("1 passed"), r.stdout)
        XCTAssertTrue((r.stdout + r.stderr).contains("no steps"), r.stdout + r.stderr)
    }

    func testAGarbageIssuerKeyInASiteIsNamedAsSuch() throws {
        try lb(["trust", "init", "site"])
        try Data((0..<100).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 0x80) }).write(to: dir.appendingPathComponent("site/issuer.key.pem"))
        let r = try lb(["trust", "device", "list", "--site", "site"], expect: 2)
        XCTAssertTrue(r.stderr.contains("issuer.key.pem") && r.stderr.contains("is not text"), r.stderr)
        XCTAssertFalse(r.stderr.contains("missing or unreadable"), r.stderr)
    }
}
