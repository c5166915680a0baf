import Foundation
import LockBenchTestSupport
import XCTest

/// The main job as a user runs it: `lockbench demo`, and `lockbench lock run` on a virtual reader
/// through the real libnfc, with phones tapped from its console and a clean stop on SIGTERM.
final class LockRunTests: XCTestCase {
    func testDemoGrantsDeniesAndPrintsTheAuditLog() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let result = try LockBenchProcess.run(["demo", "--directory", dir.path])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("ECP polling on"), result.stdout)
        XCTAssertTrue(result.stdout.contains("ok   alice's phone, access document valid for 8 h: GRANTED"), result.stdout)
        XCTAssertTrue(result.stdout.contains("DENIED (expired)"), result.stdout)
        XCTAssertTrue(result.stdout.contains("ok   alice's (lost) phone again: DENIED (revoked)"), result.stdout)
        let audit = try String(contentsOf: dir.appendingPathComponent("state/audit.log"), encoding: .utf8)
        let entries = audit.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        // The revocation list carol's phone delivered is its own entry, before her grant.
        XCTAssertEqual(entries.map { $0["decision"] as? String }, ["grant", "deny", "revocation_list", "grant", "deny"])
        XCTAssertEqual(entries.compactMap { $0["reason"] as? String }, ["expired", "revoked"])
        XCTAssertEqual(Set(entries.compactMap { $0["transport"] as? String }), ["nfc"])
        let verify = try LockBenchProcess.run(["audit", "verify", "--config", dir.appendingPathComponent("lock.json").path])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
    }

    func testLockRunOnAVirtualReaderTapsFromItsConsoleAndStopsOnSIGTERM() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        XCTAssertEqual(try LockBenchProcess.run(["demo", "--directory", dir.path]).status, 0)
        let lock = try InteractiveProcess(["lock", "run", "--config", dir.appendingPathComponent("lock.json").path,
                                           "--nfc", "virtual", "--json"])
        defer { lock.terminate() }
        let started = try lock.waitForLine(containing: "\"kind\":\"started\"")
        XCTAssertTrue(started.contains("certified"), started)
        _ = try lock.waitForLine(containing: "ECP polling on")
        lock.send("tap \(dir.path)/carol.key.pem \(dir.path)/carol.access.cbor")
        let granted = try lock.waitForLine(containing: "\"kind\":\"granted\"")
        let event = try JSONSerialization.jsonObject(with: Data(granted.utf8)) as! [String: Any]
        XCTAssertEqual(event["radio"] as? String, "nfc")
        XCTAssertEqual(event["credential"] as? String, "6361726f6c")  // "carol", cached at the demo's step-up
        lock.send("remove")
        lock.send("tap \(dir.path)/alice.key.pem \(dir.path)/alice.access.cbor")
        let denied = try lock.waitForLine(containing: "\"kind\":\"denied\"")
        XCTAssertTrue(denied.contains("\"reason\":\"revoked\""), denied)
        kill(lock.process.processIdentifier, SIGTERM)
        _ = try lock.waitForLine(containing: "\"kind\":\"stopped\"")
        lock.process.waitUntilExit()
        XCTAssertEqual(lock.process.terminationStatus, 0)
        let audit = try String(contentsOf: dir.appendingPathComponent("state/audit.log"), encoding: .utf8)
        XCTAssertEqual(audit.split(separator: "\n").count, 7, "4 demo taps and a revocation list change + 2 here, all on disk")
    }

    func testTheRunningLocksClockMovesFromItsConsoleAndItsStateIsNotShared() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        XCTAssertEqual(try LockBenchProcess.run(["demo", "--directory", dir.path]).status, 0)
        let config = dir.appendingPathComponent("lock.json").path
        let lock = try InteractiveProcess(["lock", "run", "--config", config, "--nfc", "virtual"])
        defer { lock.terminate() }
        _ = try lock.waitForLine(containing: "ECP polling")
        // A second process on the same state directory refuses instead of racing the running lock.
        let other = try LockBenchProcess.run(["clock", "advance", "--config", config, "1h"])
        XCTAssertEqual(other.status, 3, other.stdout + other.stderr)
        XCTAssertTrue(other.stderr.contains("in use by another lockbench process"), other.stderr)
        lock.send("clock advance 9h")
        _ = try lock.waitForLine(containing: "(trusted)")
        lock.send("tap \(dir.path)/carol.key.pem \(dir.path)/carol.access.cbor")
        let denied = try lock.waitForLine(containing: "DENIED")
        XCTAssertTrue(denied.contains("DENIED (expired)"), denied)
        lock.send("quit")
        lock.process.waitUntilExit()
        XCTAssertEqual(lock.process.terminationStatus, 0)
        // Stopped: the state directory is free again, and the clock move was persisted.
        let show = try LockBenchProcess.run(["clock", "show", "--config", config, "--json"])
        XCTAssertEqual(show.status, 0, show.stderr)
    }

    func testOneLockOnNFCAndBLEAtOnce() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        XCTAssertEqual(try LockBenchProcess.run(["demo", "--directory", dir.path]).status, 0)
        let controllers = try bumbleControllers()
        let config = dir.appendingPathComponent("lock.json").path
        let lock = try InteractiveProcess(["lock", "run", "--config", config, "--nfc", "virtual", "--ble", controllers.spec(0), "--json"])
        defer { lock.terminate() }
        _ = try lock.waitForLine(containing: "advertising as")
        lock.send("tap \(dir.path)/carol.key.pem \(dir.path)/carol.access.cbor")
        let nfc = try lock.waitForLine(containing: "\"kind\":\"granted\"")
        XCTAssertTrue(nfc.contains("\"radio\":\"nfc\""), nfc)
        let phone = try LockBenchProcess.run(["ble", "phone", "--ble", controllers.spec(1), "--key", "\(dir.path)/carol.key.pem",
                                              "--document", "\(dir.path)/carol.access.cbor", "--trust-reader", config])
        XCTAssertEqual(phone.status, 0, phone.stdout + phone.stderr)
        let ble = try lock.waitForLine(containing: "\"kind\":\"granted\"")
        XCTAssertTrue(ble.contains("\"radio\":\"ble\""), ble)
        lock.send("quit")
        lock.process.waitUntilExit()
        let audit = try String(contentsOf: dir.appendingPathComponent("state/audit.log"), encoding: .utf8)
        let transports = audit.split(separator: "\n").suffix(2).compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["transport"] as? String
        }
        XCTAssertEqual(transports, ["nfc", "ble"])
    }

    func testUncertifiedFirmwareTurnsWalletPollingOffAndSaysSo() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        XCTAssertEqual(try LockBenchProcess.run(["demo", "--directory", dir.path]).status, 0)
        let path = dir.appendingPathComponent("lock.json")
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: path)) as! [String: Any]
        config["firmware"] = "02.12.71"
        try JSONSerialization.data(withJSONObject: config).write(to: path)
        let lock = try InteractiveProcess(["lock", "run", "--config", path.path, "--nfc", "virtual"])
        defer { lock.terminate() }
        let warning = try lock.waitForLine(containing: "ECP express polling off")
        XCTAssertTrue(warning.contains("02.12.72"), warning)
        _ = try lock.waitForLine(containing: "ECP polling off")
        lock.send("quit")
        lock.process.waitUntilExit()
        XCTAssertEqual(lock.process.terminationStatus, 0)
    }
}
