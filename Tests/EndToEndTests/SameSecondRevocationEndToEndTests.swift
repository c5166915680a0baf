import Foundation
import LockBenchTestSupport
import XCTest

/// Issue 20 §1 through the command line: revocation lists made by `doc revoke` in one second
/// (`--now` the same second for all, each `--previous` the one before), each carried to the lock
/// by a known phone that tells its documents' signed times (`credential serve --signed-times`),
/// each followed by taps (`lock transact`). Every list reaches the lock on the carrier's first
/// tap, and the carrier is not asked again while nothing changed.
final class SameSecondRevocationEndToEndTests: XCTestCase {
    var dir: URL!
    private var servers: [Process] = []

    override func setUpWithError() throws { dir = try LockBenchProcess.temporaryDirectory(self) }

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

    static let second = "2026-03-02T09:00:00Z"

    /// Issuer, door, alice (to be revoked and lifted) and bob (the carrier), each with a document.
    private func makeSite() throws {
        try lb(["key", "issuer", "issuer"])
        try lb(["key", "reader", "door", "--group", String(repeating: "a1", count: 16), "--sub", String(repeating: "b1", count: 16)])
        for who in ["alice", "bob"] {
            try lb(["key", "credential", who])
            try lb(["doc", "issue", "--issuer-key", "issuer.key.pem", "--credential", "\(who).pub.pem", "--reader-identity", "door.reader.json",
                    "--valid-from", "2026-03-02T08:00:00Z", "--valid-until", "2026-03-02T18:00:00Z", "--id", "\(who)-1",
                    "--now", "2026-03-02T07:00:00Z", "--out", "\(who).cbor"])
        }
        try lb(["config", "create", "--reader-identity", "door.reader.json", "--issuer", "issuer.pub.pem",
                "--clock", Self.second, "--out", "door.lock.json"])
    }

    /// `credential serve --port 0 …` for one connection; the port it printed.
    private func serve(_ who: String, documents: [String], signedTimes: Bool) throws -> UInt16 {
        let arguments = ["credential", "serve", "--key", "\(who).key.pem", "--trust-reader", "door.reader.json", "--port", "0", "--once",
                       "--documents"] + documents + (signedTimes ? ["--signed-times"] : [])
        let (p, port, text) = try LockBenchProcess.startServer(arguments, currentDirectory: dir)
        servers.append(p)
        guard port != 0 else {
            XCTFail("credential serve printed \(text)")
            return 0
        }
        return port
    }

    /// One tap of `who` carrying `documents`: the lock's outcome as `lock transact --json` prints it.
    private func tap(_ who: String, _ documents: [String], signedTimes: Bool = true,
                     file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let port = try serve(who, documents: documents, signedTimes: signedTimes)
        let r = try LockBenchProcess.run(["lock", "transact", "--config", "door.lock.json", "--connect", "127.0.0.1:\(port)", "--json"],
                                         currentDirectory: dir)
        let out = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] ?? [:]
        XCTAssertNotNil(out["decision"], "\(r.stdout)\(r.stderr)", file: file, line: line)
        return out
    }

    /// `n` lists in one second: odd ones revoke alice, even ones lift it.
    func changes(_ n: Int) throws {
        try makeSite()
        XCTAssertEqual(try tap("alice", ["alice.cbor"], signedTimes: false)["decision"] as? String, "grant")
        XCTAssertEqual(try tap("bob", ["bob.cbor"])["stepUp"] as? Bool, true)
        XCTAssertEqual(try tap("bob", ["bob.cbor"])["stepUp"] as? Bool, false, "a known phone with nothing newer: no step-up")
        for k in 1...n {
            let list = "list-\(k).cbor"
            let order = k == 1 ? [] : ["--previous", "list-\(k - 1).cbor"]
            try lb(["doc", "revoke", "--issuer-key", "issuer.key.pem", "--now", Self.second, "--out", list] + order
                   + (k % 2 == 1 ? ["--credential", "alice.pub.pem"] : []))
            let carried = try tap("bob", ["bob.cbor", list])
            XCTAssertEqual(carried["decision"] as? String, "grant", "change \(k): \(carried)")
            XCTAssertEqual(carried["stepUp"] as? Bool, true, "change \(k) of \(n): the carrier's list is newer than the lock's")
            if k == n || k % 10 == 0 {
                XCTAssertEqual(try tap("bob", ["bob.cbor", list])["stepUp"] as? Bool, false, "change \(k): the list is held, nothing changed")
            }
            let alice = try tap("alice", ["alice.cbor"], signedTimes: false)
            if k % 2 == 1 {
                XCTAssertEqual(alice["reason"] as? String, "revoked", "change \(k) of \(n) revokes alice: \(alice)")
            } else {
                XCTAssertEqual(alice["decision"] as? String, "grant", "change \(k) of \(n) lifts alice's revocation: \(alice)")
            }
        }
        // The last list is signed n − 1 seconds after the first: each strictly after the one before.
        let iso = ISO8601DateFormatter()
        let last = iso.string(from: iso.date(from: Self.second)!.addingTimeInterval(TimeInterval(n - 1)))
        let shown = try lb(["doc", "show", "list-\(n).cbor", "--json"]).stdout
        XCTAssertTrue(shown.contains(last) && shown.contains("overwrite"), "\(last): \(shown)")
    }

    func testTwoListsInOneSecond() throws { try changes(2) }
    func testTenListsInOneSecond() throws { try changes(10) }
    func testAHundredListsInOneSecond() throws { try changes(100) }

    func testPreviousSignsAfterItAndASerialIsExplained() throws {
        try makeSite()
        try lb(["doc", "revoke", "--issuer-key", "issuer.key.pem", "--now", Self.second, "--out", "a.cbor"])
        try lb(["doc", "revoke", "--issuer-key", "issuer.key.pem", "--now", Self.second, "--previous", "a.cbor", "--out", "b.cbor"])
        let b = try lb(["doc", "show", "b.cbor", "--json"]).stdout
        XCTAssertTrue(b.contains("2026-03-02T09:00:01Z"), "signed one second after a.cbor: \(b)")
        // Lists carried a serial before RevocationData followed the official format: the flag says so.
        let serial = try lb(["doc", "revoke", "--issuer-key", "issuer.key.pem", "--previous", "b.cbor", "--serial", "8", "--out", "c.cbor"], expect: 2)
        XCTAssertTrue(serial.stderr.contains("carry no serial") && serial.stderr.contains("--previous FILE"), serial.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("c.cbor").path))
    }
}
