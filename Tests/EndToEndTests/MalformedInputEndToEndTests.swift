import Codecs
import Foundation
import LockBenchTestSupport
import XCTest

/// Issue 9 §1.6 and §3.14: the inputs that trapped the binary (exit 132 with a backtrace) — durations
/// `inf`/`1e300` in the configuration or flags, `clock advance 1e300` (which was saved, so every
/// later command trapped too), `clock advance inf` on the console, a huge schedule offset, NaN and
/// infinite dates in `doc show` — each now exits 2 with a message that names what was wrong.
final class MalformedInputEndToEndTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = try LockBenchProcess.temporaryDirectory(self)
        try ok(["key", "issuer", "site/issuer"])
        try ok(["key", "credential", "site/alice"])
        try ok(["key", "reader", "site/door", "--group", String(repeating: "a1", count: 16), "--sub", String(repeating: "b1", count: 16)])
        try ok(["config", "create", "--reader-identity", "site/door.reader.json", "--issuer", "site/issuer.pub.pem",
                "--clock", "2026-03-02T09:00:00Z", "--out", "site/door.lock.json"])
    }

    @discardableResult
    func ok(_ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> LockBenchProcess.Result {
        let r = try LockBenchProcess.run(args, currentDirectory: dir)
        XCTAssertEqual(r.status, 0, "lockbench \(args.joined(separator: " ")): \(r.stderr)", file: file, line: line)
        return r
    }

    /// Exit 2, a message containing `mentioning`, no trap.
    func refused(_ args: [String], mentioning: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try LockBenchProcess.run(args, currentDirectory: dir)
        XCTAssertEqual(r.status, 2, "lockbench \(args.joined(separator: " "))\nstdout: \(r.stdout)\nstderr: \(r.stderr)", file: file, line: line)
        XCTAssertTrue(r.stderr.contains(mentioning), "expected '\(mentioning)' in: \(r.stderr)", file: file, line: line)
        XCTAssertFalse(r.stderr.contains("Fatal error") || r.stderr.contains("Backtrac") || r.stderr.contains("crashed"), r.stderr, file: file, line: line)
    }

    /// The configuration with `policy` merged into its policy object.
    func config(policy: [String: Any], name: String) throws -> String {
        let url = dir.appendingPathComponent("site/door.lock.json")
        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        json["policy"] = (json["policy"] as! [String: Any]).merging(policy) { $1 }
        try JSONSerialization.data(withJSONObject: json).write(to: dir.appendingPathComponent("site/\(name).json"))
        return "site/\(name).json"
    }

    func testDurationFlagsAreRangeChecked() throws {
        let create = ["config", "create", "--reader-identity", "site/door.reader.json", "--out", "site/x.json"]
        try refused(create + ["--relock", "inf"], mentioning: "--relock \"inf\" is not a duration")              // 1
        try refused(create + ["--relock", "1e300"], mentioning: "--relock \"1e300\" is not a duration")          // 2
        try refused(create + ["--max-lifetime", "inf"], mentioning: "--max-lifetime \"inf\"")                    // 3
        try refused(create + ["--max-lifetime", "1e300"], mentioning: "--max-lifetime \"1e300\"")                // 4
        try refused(create + ["--relock", "2h"], mentioning: "--relock \"2h\" is out of range")
        try refused(create + ["--leeway", "nan"], mentioning: "--leeway \"nan\"")
        try refused(create + ["--utc-offset", "99999999"], mentioning: "--utc-offset 99999999 is out of range")
        try refused(["doc", "issue", "--issuer-key", "site/issuer.key.pem", "--credential", "site/alice.pub.pem",
                     "--reader-identity", "site/door.reader.json", "--valid-for", "1e300", "--out", "site/d.cbor"],
                    mentioning: "--valid-for \"1e300\"")                                                         // 5
    }

    func testConfigurationDurationsAreBounded() throws {
        try refused(["config", "check", "--config", try config(policy: ["relockTime": "inf"], name: "a")], mentioning: "relockTime")       // 6
        try refused(["config", "check", "--config", try config(policy: ["clockLeeway": "inf"], name: "b")], mentioning: "clockLeeway")     // 7
        try refused(["decide", "--config", try config(policy: ["maxDocumentLifetime": "1e300"], name: "c"), "--credential", "site/alice.pub.pem"],
                    mentioning: "maxDocumentLifetime")                                                                                     // 8
        try refused(["config", "check", "--config", try config(policy: ["scheduleUTCOffsetMinutes": 9_000_000_000_000_000_000], name: "d")],
                    mentioning: "scheduleUTCOffsetMinutes")                                                                                // 9
    }

    func testClockAdvanceOutOfRangeIsRefusedAndNotSaved() throws {
        try refused(["clock", "advance", "--config", "site/door.lock.json", "1e300"], mentioning: "duration \"1e300\"")                    // 10
        try refused(["clock", "advance", "--config", "site/door.lock.json", "inf"], mentioning: "duration \"inf\"")
        XCTAssertTrue(try ok(["clock", "show", "--config", "site/door.lock.json"]).stdout.hasPrefix("2026-03-02T09:00:00Z"))
        // A duration within the limit that would carry the clock past year 9999: refused, nothing saved.
        try ok(["clock", "set", "--config", "site/door.lock.json", "9999-12-01T00:00:00Z"])
        try refused(["clock", "advance", "--config", "site/door.lock.json", "60d"], mentioning: "years 0000 and 9999")
        XCTAssertTrue(try ok(["clock", "show", "--config", "site/door.lock.json"]).stdout.hasPrefix("9999-12-01T00:00:00Z"))
    }

    func testConsoleClockAdvanceInfIsRefused() throws {
        XCTAssertEqual(try LockBenchProcess.run(["demo", "--directory", dir.appendingPathComponent("demo").path]).status, 0)
        let lock = try InteractiveProcess(["lock", "run", "--config", dir.appendingPathComponent("demo/lock.json").path, "--nfc", "virtual"])
        defer { lock.terminate() }
        _ = try lock.waitForLine(containing: "ECP polling")
        lock.send("clock advance inf")                                                                                                     // 11
        let answer = try lock.waitForLine(containing: "clock")
        XCTAssertTrue(answer.contains("\"inf\" is not a duration"), answer)
        lock.send("clock advance 99999999d")
        XCTAssertTrue(try lock.waitForLine(containing: "clock").contains("is not a duration"))
        lock.send("status")
        _ = try lock.waitForLine(containing: "bolt ")   // still answering
        lock.send("quit")
        lock.process.waitUntilExit()
        XCTAssertEqual(lock.process.terminationStatus, 0)
    }

    func testDocShowRefusesNonFiniteDates() throws {
        try ok(["doc", "issue", "--issuer-key", "site/issuer.key.pem", "--credential", "site/alice.pub.pem",
                "--reader-identity", "site/door.reader.json", "--valid-for", "8h", "--out", "site/alice.cbor"])
        let good = try Data(contentsOf: dir.appendingPathComponent("site/alice.cbor"))
        for (name, value) in [("nan", CBOR.float(.nan)), ("inf", CBOR.float(.infinity)), ("huge", CBOR.float(1e300))] {
            try Data(Self.replacingValidUntil(of: Array(good), with: .tagged(CBOR.Tag.epochDateTime, value)))
                .write(to: dir.appendingPathComponent("site/\(name).cbor"))
            try refused(["doc", "show", "site/\(name).cbor"], mentioning: "tag 1")                                                         // 12–14
        }
    }

    /// The document with its MSO's validUntil replaced (the issuer signature no longer verifies:
    /// `doc show` without `--issuer` decodes without checking it).
    static func replacingValidUntil(of bytes: [UInt8], with date: CBOR) throws -> [UInt8] {
        var doc = try CBOR(parsing: bytes).mapValue!
        var signed = doc["1"]!.mapValue!
        guard case .array(var auth) = signed["2"]!, case .bytes(let payload) = auth[2] else { throw CBORError(.unexpectedType, "issuerAuth") }
        var mso = try CBOR(parsing: try CBOR(parsing: payload).embeddedBytes!).mapValue!
        var validity = mso["6"]!.mapValue!
        validity["3"] = date
        mso["6"] = .map(validity)
        auth[2] = .bytes(CBOR.embedded(.map(mso)).encoded())
        signed["2"] = .array(auth)
        doc["1"] = .map(signed)
        return CBOR.map(doc).encoded()
    }
}
