import Foundation
import LockBenchTestSupport
import XCTest

/// Issue 20 §3: deleting files does not reset a lock. Its audit key is made at its first start,
/// with its first snapshot and log; a key without them (or them without the key) means a history
/// was deleted, and the lock refuses to start until `lock reset --reason`, audited in the new
/// log — for every subset of state.json, audit.log and audit.key, with the key in the state
/// directory or on another disk (`auditKeyFile`).
final class DeletedStateEndToEndTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws { dir = try LockBenchProcess.temporaryDirectory(self) }

    @discardableResult
    func lb(_ args: [String], expect status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> LockBenchProcess.Result {
        let r = try LockBenchProcess.run(args, currentDirectory: dir)
        XCTAssertEqual(r.status, status, "lockbench \(args.joined(separator: " "))\nstdout: \(r.stdout)\nstderr: \(r.stderr)", file: file, line: line)
        return r
    }

    /// A lock that granted alice and then took a list revoking her; `keyOutside`: its audit key
    /// in `keys/` (another disk), not in the state directory.
    func livedLock(keyOutside: Bool) throws {
        try lb(["key", "issuer", "issuer"])
        try lb(["key", "credential", "alice"])
        try lb(["key", "reader", "door", "--group", String(repeating: "a1", count: 16), "--sub", String(repeating: "b1", count: 16)])
        try lb(["doc", "issue", "--issuer-key", "issuer.key.pem", "--credential", "alice.pub.pem", "--reader-identity", "door.reader.json",
                "--valid-from", "2026-03-02T08:00:00Z", "--valid-until", "2026-03-02T18:00:00Z", "--now", "2026-03-02T08:00:00Z", "--out", "alice.cbor"])
        try lb(["doc", "revoke", "--issuer-key", "issuer.key.pem", "--credential", "alice.pub.pem",
                "--now", "2026-03-02T08:30:00Z", "--out", "revoked.cbor"])
        try lb(["config", "create", "--reader-identity", "door.reader.json", "--issuer", "issuer.pub.pem",
                "--clock", "2026-03-02T09:00:00Z", "--out", "door.lock.json"])
        do {
            let url = dir.appendingPathComponent("door.lock.json")
            var config = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
            config["stateDirectory"] = "state"
            if keyOutside { config["auditKeyFile"] = "keys/door.audit.key" }
            try JSONSerialization.data(withJSONObject: config).write(to: url)
        }
        XCTAssertEqual(try decide(["--access-doc", "alice.cbor"], expect: 0)["decision"] as? String, "grant")
        XCTAssertEqual(try decide(["--revocation-doc", "revoked.cbor"], expect: 1)["reason"] as? String, "revoked")
    }

    func decide(_ extra: [String], expect: Int32, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let r = try lb(["decide", "--config", "door.lock.json", "--credential", "alice.pub.pem", "--json"] + extra, expect: expect, file: file, line: line)
        return (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    func testEverySubsetOfTheThreeFilesIsRefusedUntilAnAuditedReset() throws {
        for keyOutside in [false, true] {
            dir = try LockBenchProcess.temporaryDirectory(self)
            try livedLock(keyOutside: keyOutside)
            let keyPath = keyOutside ? "keys/door.audit.key" : "state/audit.key"
            let files = ["state/state.json", "state/audit.log", keyPath]
            let pristine = dir.appendingPathComponent("pristine")
            try FileManager.default.copyItem(at: dir.appendingPathComponent("state"), to: pristine.appendingPathComponent("state"))
            if keyOutside { try FileManager.default.copyItem(at: dir.appendingPathComponent("keys"), to: pristine.appendingPathComponent("keys")) }
            for mask in 1..<8 {
                let deleted = files.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element)
                for sub in ["state", "keys"] {
                    try? FileManager.default.removeItem(at: dir.appendingPathComponent(sub))
                    if FileManager.default.fileExists(atPath: pristine.appendingPathComponent(sub).path) {
                        try FileManager.default.copyItem(at: pristine.appendingPathComponent(sub), to: dir.appendingPathComponent(sub))
                    }
                }
                for f in deleted { try FileManager.default.removeItem(at: dir.appendingPathComponent(f)) }
                let what = "key \(keyOutside ? "outside" : "inside"), deleted \(deleted)"
                if deleted.count == 3 {
                    // Everything gone, key included: nothing is left to show a history (the
                    // remaining window; `anchorFile` on other media closes it, §4).
                    XCTAssertEqual(try decide(["--access-doc", "alice.cbor"], expect: 0)["decision"] as? String, "grant", what)
                    continue
                }
                let refused = try lb(["decide", "--config", "door.lock.json", "--credential", "alice.pub.pem"], expect: 2)
                XCTAssertTrue(refused.stderr.contains("lockbench lock reset"), "\(what): \(refused.stderr)")
                XCTAssertTrue(refused.stderr.contains(deleted.contains(keyPath) ? "key" : (deleted[0] as NSString).lastPathComponent), "\(what): \(refused.stderr)")
                // The audited way on: reset, then the lock starts with the reason in its log.
                try lb(["lock", "reset", "--config", "door.lock.json", "--reason", "files lost: \(mask)"])
                XCTAssertEqual(try decide(["--access-doc", "alice.cbor"], expect: 0)["decision"] as? String, "grant", what)
                let shown = try lb(["audit", "show", "--config", "door.lock.json"]).stdout
                XCTAssertTrue(shown.contains("lock_reset") && shown.contains("files lost: \(mask)"), "\(what): \(shown)")
                try lb(["audit", "verify", "--config", "door.lock.json"])
            }
        }
    }
}
