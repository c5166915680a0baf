import Foundation
import LockBenchTestSupport
import XCTest

/// Two `lockbench` processes on loopback: `credential serve` (the phone) and `lock transact` (the
/// lock), over the plain TCP socket transport — standard, FAST, step-up and deny cases.
final class SocketEndToEndTests: XCTestCase {
    var dir: URL!
    private var servers: [Process] = []

    override func setUpWithError() throws {
        dir = try LockBenchProcess.temporaryDirectory(self)
    }

    override func tearDown() {
        for p in servers where p.isRunning { p.terminate(); p.waitUntilExit() }
        servers = []
    }

    @discardableResult
    private func lb(_ args: [String], expect status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> LockBenchProcess.Result {
        let r = try LockBenchProcess.run(args, currentDirectory: dir)
        XCTAssertEqual(r.status, status, "lockbench \(args.joined(separator: " "))\nstdout: \(r.stdout)\nstderr: \(r.stderr)", file: file, line: line)
        return r
    }

    /// Issuer, reader identity, credential, an access document and a lock config with a frozen clock.
    private func makeSite(lock: String = "door") throws {
        try lb(["key", "issuer", "issuer"])
        try lb(["key", "credential", "alice"])
        try lb(["key", "reader", "door", "--group", String(repeating: "a1", count: 16), "--sub", String(repeating: "b1", count: 16)])
        try lb(["doc", "issue", "--issuer-key", "issuer.key.pem", "--credential", "alice.pub.pem", "--reader-identity", "door.reader.json",
                "--valid-from", "2026-03-02T08:00:00Z", "--valid-until", "2026-03-02T18:00:00Z", "--id", "alice-1",
                "--now", "2026-03-02T07:00:00Z", "--out", "alice.cbor"])
        try newLock(lock)
    }

    private func newLock(_ name: String) throws {
        try lb(["config", "create", "--reader-identity", "door.reader.json", "--issuer", "issuer.pub.pem",
                "--clock", "2026-03-02T09:00:00Z", "--out", "\(name).lock.json"])
    }

    /// Starts `credential serve --port 0 …` and returns the port it printed.
    private func serve(_ extra: [String], documents: [String] = ["alice.cbor"], trust: String = "door.reader.json") throws -> UInt16 {
        let arguments = ["credential", "serve", "--key", "alice.key.pem", "--trust-reader", trust, "--port", "0"]
            + (documents.isEmpty ? [] : ["--documents"] + documents) + extra
        let (p, port, text) = try LockBenchProcess.startServer(arguments, currentDirectory: dir)
        servers.append(p)
        guard port != 0 else {
            XCTFail("credential serve printed \(text)")
            return 0
        }
        return port
    }

    private func transact(_ port: UInt16, lock: String = "door", expect: Int32, _ extra: [String] = [],
                          file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let r = try lb(["lock", "transact", "--config", "\(lock).lock.json", "--connect", "127.0.0.1:\(port)", "--json"] + extra,
                       expect: expect, file: file, line: line)
        return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] ?? [:]
    }

    func testStepUpThenFastThenStandardOverLoopback() throws {
        try makeSite()
        let port = try serve([])
        // First contact: the lock has no document for alice, so it steps up and caches it.
        let first = try transact(port, expect: 0)
        XCTAssertEqual(first["decision"] as? String, "grant")
        XCTAssertEqual(first["stepUp"] as? Bool, true)
        XCTAssertEqual(first["fast"] as? Bool, false)
        XCTAssertEqual(first["credential"] as? String, "616c6963652d31")
        XCTAssertEqual(first["acknowledged"] as? Bool, true)
        // Second: FAST with the cached Kpersistent, no step-up.
        let second = try transact(port, expect: 0)
        XCTAssertEqual(second["fast"] as? Bool, true)
        XCTAssertEqual(second["stepUp"] as? Bool, false)
        XCTAssertEqual(second["commands"] as? Int, 3)
        // Standard (no FAST asked), document from the lock's cache.
        let third = try transact(port, expect: 0, ["--no-fast"])
        XCTAssertEqual(third["fast"] as? Bool, false)
        XCTAssertEqual(third["stepUp"] as? Bool, false)
        XCTAssertEqual(third["commands"] as? Int, 4)
        // The audit log has the three grants with the socket transport.
        let audit = try lb(["audit", "show", "--config", "door.lock.json"]).stdout
        XCTAssertEqual(audit.components(separatedBy: "grant").count - 1, 3, audit)
        XCTAssertTrue(audit.contains("socket"), audit)
    }

    /// Issue 8 §1: a phone that asks for the step-up SELECT (`--step-up-select required`) and
    /// holds a mailbox (`--mailbox FILE`), a lock whose configuration reads and writes it.
    func testStepUpSelectAndMailboxAcrossTheCommandLine() throws {
        try makeSite()
        let configURL = dir.appendingPathComponent("door.lock.json")
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: configURL)) as! [String: Any]
        config["protocol"] = ["mailbox": [["op": "read", "offset": 0, "length": 8],
                                          ["op": "write", "offset": 8, "data": "aabb"]]]
        try JSONSerialization.data(withJSONObject: config).write(to: configURL)
        let mailbox = dir.appendingPathComponent("mailbox.bin")
        try Data(Array(0..<16)).write(to: mailbox)
        let port = try serve(["--step-up-select", "required", "--mailbox", "mailbox.bin", "--once"])
        let out = try transact(port, expect: 0, ["--transcript"])
        XCTAssertEqual(out["decision"] as? String, "grant", "\(out)")
        XCTAssertEqual(out["readerStatus"] as? String, "0101")
        let box = out["mailbox"] as? [String: Any]
        XCTAssertEqual(box?["reads"] as? [String], ["0001020304050607"], "\(out)")
        XCTAssertEqual(box?["status"] as? String, "9000")
        XCTAssertEqual(box?["operations"] as? [String], ["read 0+8", "write 8: aabb"])
        // Bit 2 was set, so the lock sent the step-up SELECT.
        XCTAssertTrue((out["apdus"] as? [String] ?? []).contains { $0.hasPrefix("C SELECT step-up: 00a4040009a000000909acce5502") }, "\(out)")
        // What the lock wrote is in the phone's file.
        XCTAssertEqual(Array(try Data(contentsOf: mailbox)), Array(0..<8) + [0xAA, 0xBB] + Array(10..<16))
        // Without the flag the lock skips the SELECT (bit 2 clear).
        try newLock("plain")
        let port2 = try serve(["--once"])
        let plain = try transact(port2, lock: "plain", expect: 0, ["--transcript"])
        XCTAssertFalse((plain["apdus"] as? [String] ?? []).contains { $0.hasPrefix("C SELECT step-up") }, "\(plain)")
        XCTAssertNil(plain["mailbox"])
        // A bad value is a usage error, and a bad mailbox operation names the field.
        try lb(["credential", "serve", "--key", "alice.key.pem", "--trust-reader", "door.reader.json", "--step-up-select", "maybe"], expect: 2)
        config["protocol"] = ["mailbox": [["op": "erase", "offset": 0]]]
        try JSONSerialization.data(withJSONObject: config).write(to: configURL)
        let bad = try LockBenchProcess.run(["config", "check", "--config", "door.lock.json"], currentDirectory: dir)
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue((bad.stdout + bad.stderr).contains("op must be read, write or set"), bad.stderr)
    }

    func testLengthFramingAndHumanOutput() throws {
        try makeSite()
        let port = try serve(["--framing", "length"])
        let r = try lb(["lock", "transact", "--config", "door.lock.json", "--connect", "127.0.0.1:\(port)", "--framing", "length", "--transcript"])
        XCTAssertTrue(r.stdout.hasPrefix("grant 616c6963652d31 (step-up, 1.0)"), r.stdout)
        XCTAssertTrue(r.stdout.contains("C ENVELOPE: "), r.stdout)
        XCTAssertTrue(r.stdout.contains("C GET RESPONSE: 00c00000"), r.stdout)
    }

    func testProtocolDenialsFromMisbehavingCredentials() throws {
        try makeSite()
        let cases: [(extra: [String], reason: String)] = [
            (["--fault", "wrong-signature"], "bad_credential_signature"),
            (["--fault", "corrupt-ciphertext"], "secure_channel_failure"),
            (["--fault", "malformed-auth0"], "malformed_input"),
            (["--versions", "2.0"], "unsupported_version"),
            (["--versions", "1.0,0.9", "--fault", "strip-versions"], "downgrade"),
        ]
        for (i, c) in cases.enumerated() {
            try newLock("lock\(i)")
            let port = try serve(c.extra + ["--once"])
            let out = try transact(port, lock: "lock\(i)", expect: 1)
            XCTAssertEqual(out["reason"] as? String, c.reason, "\(c.extra): \(out)")
        }
        // The lock's audit log records a protocol denial too.
        let audit = try lb(["audit", "show", "--config", "lock0.lock.json"]).stdout
        XCTAssertTrue(audit.contains("bad_credential_signature"), audit)
    }

    func testBadReaderSignatureWhenTheCredentialTrustsAnotherReader() throws {
        try makeSite()
        try lb(["key", "reader", "other", "--group", String(repeating: "a1", count: 16)])
        let port = try serve(["--once"], trust: "other.reader.json")
        XCTAssertEqual(try transact(port, expect: 1)["reason"] as? String, "bad_reader_signature")
    }

    func testReplayedEphemeralKey() throws {
        try makeSite()
        let port = try serve(["--fault", "replay-ephemeral"])
        XCTAssertEqual(try transact(port, expect: 0)["decision"] as? String, "grant")
        XCTAssertEqual(try transact(port, expect: 1)["reason"] as? String, "replay")
    }

    func testEngineDenialsOverTheSocket() throws {
        try makeSite()
        // No documents: the lock cannot learn who this is.
        var port = try serve(["--once"], documents: [])
        XCTAssertEqual(try transact(port, expect: 1)["reason"] as? String, "unknown_credential")
        // The document has expired by the time of the transaction.
        try newLock("late")
        port = try serve(["--once"])
        XCTAssertEqual(try transact(port, lock: "late", expect: 1, ["--at", "2026-03-02T20:00:00Z"])["reason"] as? String, "expired")
        // Revoked: the phone itself carries the revocation document.
        try newLock("revoking")
        try lb(["doc", "revoke", "--issuer-key", "issuer.key.pem", "--credential", "alice.pub.pem",
                "--valid-for", "30d", "--now", "2026-03-02T08:30:00Z", "--out", "revoked.cbor"])
        port = try serve(["--once"], documents: ["alice.cbor", "revoked.cbor"])
        XCTAssertEqual(try transact(port, lock: "revoking", expect: 1)["reason"] as? String, "revoked")
        // A document for another reader group.
        try newLock("elsewhere")
        try lb(["doc", "issue", "--issuer-key", "issuer.key.pem", "--credential", "alice.pub.pem", "--reader", String(repeating: "ee", count: 16),
                "--valid-for", "8h", "--now", "2026-03-02T08:00:00Z", "--out", "elsewhere.cbor"])
        port = try serve(["--once"], documents: ["elsewhere.cbor"])
        XCTAssertEqual(try transact(port, lock: "elsewhere", expect: 1)["reason"] as? String, "wrong_reader")
    }

    func testUnreachableCredentialIsAnEnvironmentError() throws {
        try makeSite()
        let r = try lb(["lock", "transact", "--config", "door.lock.json", "--connect", "127.0.0.1:1"], expect: 3)
        XCTAssertTrue(r.stderr.contains("cannot reach the credential"), r.stderr)
        try lb(["lock", "transact", "--config", "door.lock.json", "--connect", "nowhere"], expect: 2)
        try lb(["credential", "serve", "--key", "alice.key.pem"], expect: 2)
    }
}
