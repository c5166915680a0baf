import Foundation
import LockBenchTestSupport
import XCTest

/// The key, document, config, decide, clock and audit commands, run as a user runs them.
final class KeysAndDocumentsEndToEndTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = try LockBenchProcess.temporaryDirectory(self)
    }

    @discardableResult
    func lb(_ args: [String], expect status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> LockBenchProcess.Result {
        let r = try LockBenchProcess.run(args, currentDirectory: dir)
        XCTAssertEqual(r.status, status, "lockbench \(args.joined(separator: " "))\nstdout: \(r.stdout)\nstderr: \(r.stderr)", file: file, line: line)
        return r
    }

    func json(_ r: LockBenchProcess.Result) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
    }

    /// A site: issuer, reader identity, credential, lock config with a frozen clock.
    func makeSite(clock: String = "2026-03-02T09:00:00Z", extra: [String] = []) throws {
        try lb(["key", "issuer", "site/issuer"])
        try lb(["key", "credential", "site/alice"])
        try lb(["key", "reader", "site/door", "--group", String(repeating: "a1", count: 16), "--sub", String(repeating: "b1", count: 16)])
        try lb(["config", "create", "--reader-identity", "site/door.reader.json", "--issuer", "site/issuer.pub.pem",
                "--clock", clock, "--out", "site/door.lock.json"] + extra)
    }

    func issue(_ out: String, _ extra: [String] = [], now: String = "2026-03-02T08:00:00Z") throws {
        try lb(["doc", "issue", "--issuer-key", "site/issuer.key.pem", "--credential", "site/alice.pub.pem",
                "--now", now, "--out", out] + (extra.contains("--reader") || extra.contains("--reader-identity") ? [] : ["--reader-identity", "site/door.reader.json"])
               + (extra.contains("--valid-until") || extra.contains("--valid-for") ? [] : ["--valid-for", "8h"]) + extra)
    }

    func decide(_ extra: [String] = [], expect: Int32) throws -> [String: Any] {
        try json(lb(["decide", "--config", "site/door.lock.json", "--credential", "site/alice.pub.pem", "--json"] + extra, expect: expect))
    }

    func testKeyFilesArePEMWithPrivateModeAndKid() throws {
        let r = try lb(["key", "issuer", "site/issuer", "--json"])
        let info = try json(r)
        XCTAssertEqual((info["kid"] as? String)?.count, 16)
        let priv = try String(contentsOf: dir.appendingPathComponent("site/issuer.key.pem"), encoding: .utf8)
        XCTAssertTrue(priv.hasPrefix("-----BEGIN PRIVATE KEY-----"), priv)
        let pub = try String(contentsOf: dir.appendingPathComponent("site/issuer.pub.pem"), encoding: .utf8)
        XCTAssertTrue(pub.hasPrefix("-----BEGIN PUBLIC KEY-----"), pub)
        let mode = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("site/issuer.key.pem").path)[.posixPermissions] as? NSNumber
        XCTAssertEqual(mode?.intValue, 0o600)
        // Same kid from `key show`, on either file.
        XCTAssertEqual(try json(lb(["key", "show", "site/issuer.pub.pem", "--json"]))["kid"] as? String, info["kid"] as? String)
        XCTAssertEqual(try json(lb(["key", "show", "site/issuer.key.pem", "--json"]))["type"] as? String, "private")
        // No silent overwrite.
        let again = try lb(["key", "issuer", "site/issuer"], expect: 2)
        XCTAssertTrue(again.stderr.contains("--force"), again.stderr)
        try lb(["key", "issuer", "site/issuer", "--force"])
    }

    func testReaderIdentityHasGroupAndSub() throws {
        let info = try json(lb(["key", "reader", "door", "--json"]))
        XCTAssertEqual((info["groupID"] as? String)?.count, 32)
        XCTAssertEqual((info["subID"] as? String)?.count, 32)
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("door.reader.json"))) as! [String: String]
        XCTAssertEqual(file["signingKey"], "door.key.pem")
        XCTAssertEqual(file["groupID"], info["groupID"] as? String)
        try lb(["key", "reader", "bad", "--group", "1234"], expect: 2)
    }

    func testIssueShowAndVerifyAccessDocument() throws {
        try makeSite()
        try issue("alice.cbor", ["--schedule", "mon-fri 08:00-18:00", "--id", "alice-1"])
        let shown = try json(lb(["doc", "show", "alice.cbor", "--issuer", "site/issuer.pub.pem", "--json"]))
        XCTAssertEqual(shown["docType"] as? String, "aliro-a")
        XCTAssertEqual(shown["issuer"] as? String, "verified")
        let validity = shown["validity"] as! [String: String]
        XCTAssertEqual(validity["validFrom"], "2026-03-02T08:00:00Z")
        XCTAssertEqual(validity["validUntil"], "2026-03-02T16:00:00Z")
        let access = shown["access"] as! [String: Any]
        XCTAssertEqual(access["idText"] as? String, "alice-1")
        XCTAssertEqual(access["schedules"] as? [String], ["weekdays 08:00-18:00"])
        let readers = access["readers"] as! [[String: String]]
        XCTAssertEqual(readers.first?["group"], String(repeating: "a1", count: 16))
        XCTAssertEqual(readers.first?["sub"], String(repeating: "b1", count: 16))
        // Against another issuer it does not verify: exit 1.
        try lb(["key", "issuer", "other"])
        let bad = try json(lb(["doc", "show", "alice.cbor", "--issuer", "other.pub.pem", "--json"], expect: 1))
        XCTAssertTrue((bad["issuer"] as? String)?.hasPrefix("FAILED") ?? false)
        // Explicit window; bad inputs are usage errors with a reason.
        try issue("window.cbor", ["--valid-from", "2026-03-02T08:00:00Z", "--valid-until", "2026-03-03T08:00:00Z"])
        let noWindow = try lb(["doc", "issue", "--issuer-key", "site/issuer.key.pem", "--credential", "site/alice.pub.pem",
                               "--reader-identity", "site/door.reader.json", "--out", "x.cbor"], expect: 2)
        XCTAssertTrue(noWindow.stderr.contains("--valid-for"), noWindow.stderr)
        let badSchedule = try lb(["doc", "issue", "--issuer-key", "site/issuer.key.pem", "--credential", "site/alice.pub.pem",
                                  "--reader-identity", "site/door.reader.json", "--valid-for", "8h", "--schedule", "someday", "--out", "x.cbor"], expect: 2)
        XCTAssertTrue(badSchedule.stderr.contains("schedule"), badSchedule.stderr)
        try lb(["doc", "show", "site/issuer.pub.pem"], expect: 2)
    }

    func testGrantCacheRevokeAndAudit() throws {
        try makeSite()
        try issue("alice.cbor")
        var d = try decide(["--access-doc", "alice.cbor"], expect: 0)
        XCTAssertEqual(d["decision"] as? String, "grant")
        XCTAssertEqual(d["lock"] as? String, "unsecured")
        XCTAssertEqual(d["stepUpWanted"] as? Bool, true)
        // The lock cached the document: no documents needed the second time.
        d = try decide([], expect: 0)
        XCTAssertEqual(d["stepUpWanted"] as? Bool, false)
        // Revoke by credential key.
        try lb(["doc", "revoke", "--issuer-key", "site/issuer.key.pem", "--credential", "site/alice.pub.pem",
                "--now", "2026-03-02T08:30:00Z", "--out", "revoked.cbor"])
        d = try decide(["--revocation-doc", "revoked.cbor"], expect: 1)
        XCTAssertEqual(d["reason"] as? String, "revoked")
        d = try decide([], expect: 1)
        XCTAssertEqual(d["reason"] as? String, "revoked")
        // A newer list that takes alice out (APPEND, an entry to remove) lifts it; `doc show` says so.
        try lb(["doc", "revoke", "--issuer-key", "site/issuer.key.pem", "--previous", "revoked.cbor", "--append", "--remove-credential", "site/alice.pub.pem",
                "--now", "2026-03-02T08:40:00Z", "--out", "empty.cbor"])
        let shown = try lb(["doc", "show", "empty.cbor", "--issuer", "site/issuer.pub.pem"]).stdout
        XCTAssertTrue(shown.contains("change mode  append") && shown.contains("lifts        key hash"), shown)
        // Presented first, the list revoking alice (signed earlier) would change nothing now.
        XCTAssertEqual(try decide(["--revocation-doc", "empty.cbor"], expect: 0)["decision"] as? String, "grant")
        XCTAssertEqual(try decide(["--revocation-doc", "revoked.cbor"], expect: 0)["decision"] as? String, "grant", "an earlier-signed list is ignored")
        // Replay of a transaction id.
        let tid = String(repeating: "5a", count: 16)
        _ = try decide(["--transaction", tid], expect: 0)
        XCTAssertEqual(try decide(["--transaction", tid], expect: 1)["reason"] as? String, "replay")
        // The audit log holds every decision and verifies.
        let verify = try json(lb(["audit", "verify", "--config", "site/door.lock.json", "--json"]))
        XCTAssertEqual(verify["intact"] as? Bool, true)
        XCTAssertEqual(verify["entries"] as? Int, 10, "8 decisions and 2 revocation list changes")
        let lines = try lb(["audit", "show", "--config", "site/door.lock.json", "--last", "2"]).stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines[1].contains("\"reason\":\"replay\""), String(lines[1]))
        // Editing the log is detected.
        let logURL = dir.appendingPathComponent("site/door.state/audit.log")
        var text = try String(contentsOf: logURL, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"reason\":\"revoked\"", with: "\"reason\":\"expired\"")
        try text.write(to: logURL, atomically: false, encoding: .utf8)
        let damaged = try json(lb(["audit", "verify", "--config", "site/door.lock.json", "--json"], expect: 1))
        XCTAssertEqual(damaged["damage"] as? String, "bad_mac")
        XCTAssertEqual(damaged["line"] as? Int, 4, "grant, grant, the list change, then the edited deny")
    }

    /// An issuer the lock knows only through its issuer CA: the certified document (no kid) is
    /// granted; one whose certificate another CA signed, or expired since, is refused.
    func testACertifiedIssuerIsTrustedThroughTheIssuerCA() throws {
        try lb(["key", "issuer-ca", "site/ca"])
        try lb(["key", "issuer", "site/issuer"])
        try lb(["key", "credential", "site/alice"])
        try lb(["key", "reader", "site/door"])
        try lb(["config", "create", "--reader-identity", "site/door.reader.json", "--issuer-ca", "site/ca.pub.pem",
                "--clock", "2026-03-02T09:00:00Z", "--out", "site/door.lock.json"])
        XCTAssertTrue(try String(contentsOf: dir.appendingPathComponent("site/door.lock.json"), encoding: .utf8).contains("\"trustedIssuerCAs\""))
        let made = try lb(["key", "issuer-cert", "--issuer", "site/issuer.pub.pem", "--ca-key", "site/ca.key.pem",
                           "--valid-from", "2026-01-01T00:00:00Z", "--valid-until", "2026-03-02T10:00:00Z", "--out", "site/issuer.cert.pem"])
        XCTAssertTrue(made.stdout.contains("valid 2026-01-01T00:00:00Z–2026-03-02T10:00:00Z"), made.stdout)
        try issue("alice.cbor", ["--issuer-cert", "site/issuer.cert.pem", "--no-kid"])
        let shown = try lb(["doc", "show", "alice.cbor", "--issuer-ca", "site/ca.pub.pem"]).stdout
        XCTAssertTrue(shown.contains("verified") && shown.contains("certificate  LockBench Issuer by LockBench Issuer CA, valid 2026-01-01T00:00:00Z"), shown)
        XCTAssertTrue(try lb(["doc", "show", "alice.cbor", "--issuer", "site/issuer.pub.pem"], expect: 1).stdout.contains("cannot chain: the lock trusts no issuer CA"))
        XCTAssertEqual(try decide(["--access-doc", "alice.cbor"], expect: 0)["decision"] as? String, "grant")
        // After the certificate's notAfter (+ the 5 min leeway) even the cached document is refused.
        try lb(["clock", "advance", "--config", "site/door.lock.json", "66m"])
        let later = try decide([], expect: 1)
        XCTAssertEqual(later["reason"] as? String, "untrusted_issuer")
        XCTAssertTrue((later["detail"] as? String ?? "").contains("issuer certificate"), "\(later)")
        // A certificate from a CA the lock does not trust.
        try lb(["key", "issuer-ca", "rogue-ca"])
        try lb(["key", "issuer-cert", "--issuer", "site/issuer.pub.pem", "--ca-key", "rogue-ca.key.pem", "--valid-from", "2026-01-01T00:00:00Z",
                "--out", "rogue.cert.pem"])
        try issue("rogue.cbor", ["--issuer-cert", "rogue.cert.pem"])
        let rogue = try decide(["--access-doc", "rogue.cbor"], expect: 1)
        XCTAssertEqual(rogue["reason"] as? String, "untrusted_issuer")
        XCTAssertTrue((rogue["detail"] as? String ?? "").contains("not signed by an issuer CA the lock trusts"), "\(rogue)")
        // The issuing side refuses what no lock would take.
        let mismatch = try lb(["doc", "issue", "--issuer-key", "rogue-ca.key.pem", "--issuer-cert", "site/issuer.cert.pem", "--credential", "site/alice.pub.pem",
                               "--reader-identity", "site/door.reader.json", "--valid-for", "1h", "--now", "2026-03-02T08:00:00Z", "--out", "x.cbor"], expect: 2)
        XCTAssertTrue(mismatch.stderr.contains("certifies another key than --issuer-key"), mismatch.stderr)
        let noKid = try lb(["doc", "issue", "--issuer-key", "site/issuer.key.pem", "--no-kid", "--credential", "site/alice.pub.pem",
                            "--reader-identity", "site/door.reader.json", "--valid-for", "1h", "--out", "y.cbor"], expect: 2)
        XCTAssertTrue(noKid.stderr.contains("--no-kid needs --issuer-cert"), noKid.stderr)
    }

    func testDenyReasonsFromTheCommandLine() throws {
        try makeSite(extra: ["--max-lifetime", "1d"])
        XCTAssertEqual(try decide([], expect: 1)["reason"] as? String, "unknown_credential")
        try issue("long.cbor", ["--valid-for", "2d"])
        XCTAssertEqual(try decide(["--access-doc", "long.cbor"], expect: 1)["reason"] as? String, "validity_too_long")
        try issue("later.cbor", ["--valid-from", "2026-03-02T12:00:00Z", "--valid-until", "2026-03-02T18:00:00Z"])
        XCTAssertEqual(try decide(["--access-doc", "later.cbor"], expect: 1)["reason"] as? String, "not_yet_valid")
        try issue("old.cbor", ["--valid-from", "2026-03-01T08:00:00Z", "--valid-until", "2026-03-01T18:00:00Z"], now: "2026-03-01T08:00:00Z")
        XCTAssertEqual(try decide(["--access-doc", "old.cbor"], expect: 1)["reason"] as? String, "expired")
        try issue("elsewhere.cbor", ["--reader", String(repeating: "ee", count: 16)])
        XCTAssertEqual(try decide(["--access-doc", "elsewhere.cbor"], expect: 1)["reason"] as? String, "wrong_reader")
        try issue("weekend.cbor", ["--schedule", "weekends 00:00-24:00"])
        XCTAssertEqual(try decide(["--access-doc", "weekend.cbor"], expect: 1)["reason"] as? String, "outside_schedule")
        try lb(["key", "issuer", "rogue"])
        try lb(["doc", "issue", "--issuer-key", "rogue.key.pem", "--credential", "site/alice.pub.pem", "--reader-identity", "site/door.reader.json",
                "--valid-for", "8h", "--now", "2026-03-02T08:00:00Z", "--out", "rogue.cbor"])
        XCTAssertEqual(try decide(["--access-doc", "rogue.cbor"], expect: 1)["reason"] as? String, "untrusted_issuer")
        try lb(["key", "credential", "bob"])
        XCTAssertEqual(try json(lb(["decide", "--config", "site/door.lock.json", "--credential", "bob.pub.pem", "--access-doc", "long.cbor", "--json"], expect: 1))["reason"] as? String,
                       "document_key_mismatch")
        try Data([0xA1, 0x01]).write(to: dir.appendingPathComponent("junk.cbor"))
        XCTAssertEqual(try decide(["--access-doc", "junk.cbor"], expect: 1)["reason"] as? String, "malformed_input")
        XCTAssertEqual(try decide(["--protocol-version", "2.0"], expect: 1)["reason"] as? String, "unsupported_version")
        // A valid document, then a downgrade from 1.0 to 0.9 by the same credential.
        try issue("ok.cbor")
        _ = try decide(["--access-doc", "ok.cbor"], expect: 0)
        XCTAssertEqual(try decide(["--version", "0.9"], expect: 1)["reason"] as? String, "downgrade")
    }

    func testClockRollbackPowerLossAndTrustedTime() throws {
        try makeSite()
        try issue("alice.cbor")
        _ = try decide(["--access-doc", "alice.cbor"], expect: 0)
        // A tampered clock moved back below the high-water mark.
        try lb(["clock", "set", "--config", "site/door.lock.json", "--untrusted", "2026-03-02T08:00:00Z"])
        XCTAssertEqual(try decide([], expect: 1)["reason"] as? String, "clock_rollback")
        try lb(["clock", "set", "--config", "site/door.lock.json", "2026-03-02T09:10:00Z"])
        _ = try decide([], expect: 0)
        // Power loss: untrusted until a document signed after the high-water mark arrives.
        let pl = try json(lb(["clock", "power-loss", "--config", "site/door.lock.json", "--json"]))
        XCTAssertEqual(pl["trusted"] as? Bool, false)
        try lb(["clock", "advance", "--config", "site/door.lock.json", "30m"])
        XCTAssertEqual(try decide([], expect: 1)["reason"] as? String, "clock_untrusted")
        try issue("fresh.cbor", now: "2026-03-02T09:30:00Z")
        XCTAssertEqual(try decide(["--access-doc", "fresh.cbor"], expect: 0)["decision"] as? String, "grant")
        XCTAssertEqual(try json(lb(["clock", "show", "--config", "site/door.lock.json", "--json"]))["trusted"] as? Bool, true)
    }

    func testConfigCheckAndErrors() throws {
        try makeSite()
        let r = try lb(["config", "check", "--config", "site/door.lock.json"])
        XCTAssertTrue(r.stdout.contains("ok"), r.stdout)
        try Data(#"{"model":"NDE"}"#.utf8).write(to: dir.appendingPathComponent("bad.json"))
        let bad = try lb(["config", "check", "--config", "bad.json"], expect: 2)
        XCTAssertTrue(bad.stderr.contains("missing field firmware"), bad.stderr)
    }

    func testHelpTeaches() throws {
        let key = try lb(["key", "--help"])
        XCTAssertTrue(key.stdout.contains("lockbench key issuer site/issuer"), key.stdout)
        let issue = try lb(["doc", "issue", "--help"])
        for needle in ["--valid-for", "--valid-from", "--valid-until", "--schedule", "mon-fri 08:00-18:00", "--reader-identity", "GROUP:SUB"] {
            XCTAssertTrue(issue.stdout.contains(needle), "doc issue --help lacks \(needle)")
        }
        let clock = try lb(["clock", "--help"])
        XCTAssertTrue(clock.stdout.contains("clock_rollback"), clock.stdout)
        // The crash-test helper stays out of the help.
        XCTAssertFalse(try lb(["audit", "--help"]).stdout.contains("burst"))
    }
}
