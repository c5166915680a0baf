import Foundation
import LockBenchTestSupport
import XCTest

/// Issue 20 §2 and §5 as an operator meets them: a state directory that takes no snapshot (here a
/// directory where the snapshot's temporary file goes; a full disk does the same) no longer stops
/// `lock run` from starting — the lock starts read-only, says so on its console and in `--json`,
/// denies every tap with the reason, audits it, and grants again once a snapshot is written.
final class SnapshotFailureEndToEndTests: XCTestCase {
    func testALockThatCannotSnapshotStartsDenyingAndSaysWhy() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        XCTAssertEqual(try LockBenchProcess.run(["demo", "--directory", dir.path]).status, 0)
        let blocker = dir.appendingPathComponent("state/state.json.tmp")
        try FileManager.default.createDirectory(at: blocker, withIntermediateDirectories: false)
        let config = dir.appendingPathComponent("lock.json").path
        let lock = try InteractiveProcess(["lock", "run", "--config", config, "--nfc", "virtual", "--json"])
        defer { lock.terminate() }
        let warning = try lock.waitForLine(containing: "READ-ONLY")
        let event = try JSONSerialization.jsonObject(with: Data(warning.utf8)) as! [String: Any]
        XCTAssertEqual(event["kind"] as? String, "warning")
        let message = event["message"] as? String ?? ""
        XCTAssertTrue(message.contains("state.json.tmp") && message.contains("grants nothing"), message)
        _ = try lock.waitForLine(containing: "ECP polling")
        lock.send("tap \(dir.path)/carol.key.pem \(dir.path)/carol.access.cbor")
        let denied = try lock.waitForLine(containing: "\"kind\":\"denied\"")
        XCTAssertTrue(denied.contains("\"reason\":\"storage_failure\""), denied)
        lock.send("remove")
        try FileManager.default.removeItem(at: blocker)
        lock.send("tap \(dir.path)/carol.key.pem \(dir.path)/carol.access.cbor")
        _ = try lock.waitForLine(containing: "written again")
        _ = try lock.waitForLine(containing: "\"kind\":\"granted\"")
        kill(lock.process.processIdentifier, SIGTERM)
        _ = try lock.waitForLine(containing: "\"kind\":\"stopped\"")
        lock.process.waitUntilExit()
        let audit = try LockBenchProcess.run(["audit", "show", "--config", config])
        XCTAssertTrue(audit.stdout.contains("snapshot_failed") && audit.stdout.contains("snapshot_written"), audit.stdout)
        XCTAssertEqual(try LockBenchProcess.run(["audit", "verify", "--config", config]).status, 0)
    }
}
