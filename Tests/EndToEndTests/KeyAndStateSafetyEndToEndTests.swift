import Foundation
import LockBenchTestSupport
import XCTest

/// Issue 9 §2.11 and §3.12, as a user meets them: private keys refused when others can read them
/// (with the fix in the message), and the benchmark's `audit-burst` refusing to write beside a running lock.
final class KeyAndStateSafetyEndToEndTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws { dir = try LockBenchProcess.temporaryDirectory(self) }

    @discardableResult
    func lb(_ args: [String], expect status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> LockBenchProcess.Result {
        let r = try LockBenchProcess.run(args, currentDirectory: dir)
        XCTAssertEqual(r.status, status, "lockbench \(args.joined(separator: " "))\nstdout: \(r.stdout)\nstderr: \(r.stderr)", file: file, line: line)
        return r
    }

    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent(path).path)[.posixPermissions] as! NSNumber).intValue
    }

    func testPrivateKeysAreOwnerOnlyAndAWideOneIsRefused() throws {
        let old = umask(0)       // the child inherits it: nothing but the code keeps the key private
        defer { umask(old) }
        try lb(["key", "issuer", "site/issuer"])
        try lb(["key", "credential", "site/alice"])
        try lb(["key", "reader", "site/door", "--group", String(repeating: "a1", count: 16), "--sub", String(repeating: "b1", count: 16)])
        for k in ["site/issuer.key.pem", "site/alice.key.pem", "site/door.key.pem"] { XCTAssertEqual(try mode(k), 0o600, k) }
        try lb(["config", "create", "--reader-identity", "site/door.reader.json", "--issuer", "site/issuer.pub.pem",
                "--clock", "2026-03-02T09:00:00Z", "--out", "site/door.lock.json"])

        chmod(dir.appendingPathComponent("site/issuer.key.pem").path, 0o644)
        let issue = try lb(["doc", "issue", "--issuer-key", "site/issuer.key.pem", "--credential", "site/alice.pub.pem",
                            "--reader-identity", "site/door.reader.json", "--valid-for", "8h", "--out", "site/a.cbor"], expect: 2)
        XCTAssertTrue(issue.stderr.contains("chmod 600 site/issuer.key.pem"), issue.stderr)

        chmod(dir.appendingPathComponent("site/door.key.pem").path, 0o640)
        let check = try lb(["config", "check", "--config", "site/door.lock.json"], expect: 2)
        XCTAssertTrue(check.stderr.contains("reader.signingKey") && check.stderr.contains("chmod 600"), check.stderr)
        chmod(dir.appendingPathComponent("site/door.key.pem").path, 0o600)
        try lb(["config", "check", "--config", "site/door.lock.json"])
    }

    func testDemoKeysAreOwnerOnly() throws {
        try lb(["demo", "--directory", "demo"])
        for k in ["demo/issuer.key.pem", "demo/reader.key.pem", "demo/alice.key.pem"] { XCTAssertEqual(try mode(k), 0o600, k) }
    }

    func testAuditBurstRefusesBesideARunningLock() throws {
        try lb(["demo", "--directory", "demo"])
        let lock = try InteractiveProcess(["lock", "run", "--config", dir.appendingPathComponent("demo/lock.json").path, "--nfc", "virtual"])
        defer { lock.terminate() }
        _ = try lock.waitForLine(containing: "ECP polling")
        let burst = try LockBenchProcess.run(["audit-burst", "--state-dir", "demo/state", "--count", "5"],
                                             executable: Repository.builtProduct("lockbench-bench"), currentDirectory: dir)
        XCTAssertEqual(burst.status, 3, burst.stderr)
        XCTAssertTrue(burst.stderr.contains("in use by another lockbench process"), burst.stderr)
        lock.send("quit")
        lock.process.waitUntilExit()
        XCTAssertEqual(try lb(["audit", "verify", "--config", "demo/lock.json"]).stdout, "audit log intact: 5 entries\n")
    }

    /// Issue 20 §5: no command of the shipped binary writes decisions the lock did not take — the
    /// burst that wrote MAC-valid grants into a stopped lock's log is the benchmark's alone.
    func testTheShippedBinaryHasNoBurst() throws {
        try lb(["demo", "--directory", "demo"])
        let before = try Data(contentsOf: dir.appendingPathComponent("demo/state/audit.log"))
        let burst = try LockBenchProcess.run(["audit", "burst", "--state-dir", "demo/state", "--count", "5"], currentDirectory: dir)
        XCTAssertNotEqual(burst.status, 0)
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("demo/state/audit.log")), before, "nothing written")
        XCTAssertFalse(try lb(["audit", "--help"]).stdout.contains("burst"))
    }

    /// §2.8: deleting the last entry is damage; `audit verify` and `lock run` say so until an
    /// operator acknowledges it with an audited command.
    func testAuditDamageIsLoudUntilAcknowledged() throws {
        try lb(["demo", "--directory", "demo"])
        let log = dir.appendingPathComponent("demo/state/audit.log")
        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        try (lines.dropLast().joined(separator: "\n") + "\n").write(to: log, atomically: false, encoding: .utf8)
        let verify = try lb(["audit", "verify", "--config", "demo/lock.json"], expect: 1)
        XCTAssertTrue(verify.stdout.contains("missing_entries"), verify.stdout)

        let lock = try InteractiveProcess(["lock", "run", "--config", dir.appendingPathComponent("demo/lock.json").path, "--nfc", "virtual"])
        defer { lock.terminate() }
        let warning = try lock.waitForLine(containing: "AUDIT LOG DAMAGED")
        XCTAssertTrue(warning.contains("missing_entries") && warning.contains("audit acknowledge"), warning)
        lock.send("quit")
        lock.process.waitUntilExit()

        let still = try lb(["audit", "verify", "--config", "demo/lock.json"], expect: 1)
        XCTAssertTrue(still.stdout.contains("not acknowledged"), still.stdout)
        try lb(["audit", "acknowledge", "--config", "demo/lock.json", "--note", "last entry lost in a restore; checked"])
        XCTAssertTrue(try lb(["audit", "verify", "--config", "demo/lock.json"]).stdout.hasPrefix("audit log intact"))
        let last = try lb(["audit", "show", "--config", "demo/lock.json", "--last", "2"]).stdout
        XCTAssertTrue(last.contains("\"decision\":\"audit_damage\"") && last.contains("\"decision\":\"audit_acknowledged\""), last)
    }

    /// §2.9: a lock whose state.json is gone but whose log has a history refuses to start until
    /// `lock reset`, which is audited.
    func testLostStateRefusesUntilAnAuditedReset() throws {
        try lb(["demo", "--directory", "demo"])
        try FileManager.default.removeItem(at: dir.appendingPathComponent("demo/state/state.json"))
        let refused = try lb(["clock", "show", "--config", "demo/lock.json"], expect: 2)
        XCTAssertTrue(refused.stderr.contains("lockbench lock reset"), refused.stderr)
        try lb(["lock", "reset", "--config", "demo/lock.json", "--reason", "state disk replaced"])
        try lb(["clock", "show", "--config", "demo/lock.json"])
        let last = try lb(["audit", "show", "--config", "demo/lock.json", "--last", "1"]).stdout
        XCTAssertTrue(last.contains("\"decision\":\"lock_reset\"") && last.contains("state disk replaced"), last)
        try lb(["audit", "verify", "--config", "demo/lock.json"])
    }

    /// §2.9: an edited state file stops the lock (exit 2, with the way out) instead of being believed.
    func testAnEditedStateFileIsRefused() throws {
        try lb(["demo", "--directory", "demo"])
        let url = dir.appendingPathComponent("demo/state/state.json")
        let text = try String(contentsOf: url, encoding: .utf8)
        try text.replacingOccurrences(of: "\"trusted\":true", with: "\"trusted\":false").write(to: url, atomically: false, encoding: .utf8)
        let refused = try lb(["clock", "show", "--config", "demo/lock.json"], expect: 2)
        XCTAssertTrue(refused.stderr.contains("does not verify") && refused.stderr.contains("lockbench lock reset"), refused.stderr)
        XCTAssertEqual(try lb(["audit", "verify", "--config", "demo/lock.json"], expect: 1).stderr.contains("does not verify"), true)
        try lb(["lock", "reset", "--config", "demo/lock.json", "--reason", "state edited"])
        try lb(["audit", "verify", "--config", "demo/lock.json"])
    }
}
