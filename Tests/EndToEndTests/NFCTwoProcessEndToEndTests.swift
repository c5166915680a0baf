import Foundation
import LockBenchTestSupport
import XCTest

/// A lock and its reader in separate processes, as on a bench with a USB reader: `lockbench nfc
/// virtual-reader` serves a PN532 on a pty with a phone credential; `lockbench lock run` opens it
/// through libnfc by its connstring like any serial reader. This is how CI runs a lock against a
/// reader it does not own.
final class NFCTwoProcessEndToEndTests: XCTestCase {
    /// A provisioned lock (the demo's files) and the link path for the reader.
    private func demoLock() throws -> (dir: URL, config: String, group: String, link: String) {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let demo = try LockBenchProcess.run(["demo", "--directory", dir.path])
        XCTAssertEqual(demo.status, 0, demo.stdout + demo.stderr)
        let config = dir.appendingPathComponent("lock.json").path
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: config))) as! [String: Any]
        let group = try XCTUnwrap((json["reader"] as? [String: Any])?["groupID"] as? String)
        return (dir, config, group, dir.appendingPathComponent("reader").path)
    }

    func testLockRunTapsAPhoneServedByAVirtualReaderInAnotherProcess() throws {
        let lock = try demoLock()
        let d = lock.dir.path
        let reader = try InteractiveProcess(["nfc", "virtual-reader", "--link", lock.link, "--no-card",
                                             "--credential-key", "\(d)/carol.key.pem", "--document", "\(d)/carol.access.cbor",
                                             "--trust-reader", "\(d)/reader.pub.pem", "--reader-group", lock.group])
        defer { reader.terminate() }
        XCTAssertEqual(try reader.waitForLine(containing: "connstring: "), "connstring: pn532_uart:\(lock.link)")
        let credential = try reader.waitForLine(containing: "credential: ")
        XCTAssertTrue(credential.contains("1 access and 0 revocation documents, trusts reader group \(lock.group)"), credential)

        let run = try InteractiveProcess(["lock", "run", "--config", lock.config, "--nfc", "pn532_uart:\(lock.link)", "--json"])
        defer { run.terminate() }
        let opened = try run.waitForLine(containing: "opened")
        XCTAssertTrue(opened.contains("pn532_uart:\(lock.link)"), opened)

        reader.send("insert")
        _ = try reader.waitForLine(containing: "card: inserted")
        let granted = try run.waitForLine(containing: "\"kind\":\"granted\"")
        var event = try JSONSerialization.jsonObject(with: Data(granted.utf8)) as! [String: Any]
        XCTAssertEqual(event["credential"] as? String, "6361726f6c")  // "carol"
        XCTAssertEqual(event["radio"] as? String, "nfc")
        XCTAssertEqual(event["fast"] as? Bool, false, "the phone has not met this reader yet")
        reader.send("remove")
        _ = try run.waitForLine(containing: "card removed")

        // The same phone again: it kept the Kpersistent of the first tap, so this one is FAST.
        reader.send("insert")
        event = try JSONSerialization.jsonObject(with: Data(try run.waitForLine(containing: "\"kind\":\"granted\"").utf8)) as! [String: Any]
        XCTAssertEqual(event["fast"] as? Bool, true, "\(event)")
        reader.send("remove")
        _ = try run.waitForLine(containing: "card removed")

        kill(run.process.processIdentifier, SIGTERM)
        _ = try run.waitForLine(containing: "\"kind\":\"stopped\"")
        run.process.waitUntilExit()
        XCTAssertEqual(run.process.terminationStatus, 0)
        let audit = try String(contentsOf: lock.dir.appendingPathComponent("state/audit.log"), encoding: .utf8)
        XCTAssertEqual(audit.split(separator: "\n").count, 7, "4 demo taps, the demo's revocation list change, + 2 here")
        reader.send("quit")
        _ = try reader.waitForLine(containing: "virtual PN532 stopped")
        reader.process.waitUntilExit()
        XCTAssertEqual(reader.process.terminationStatus, 0)
    }

    func testARevokedPhoneFromTheLockConfigurationIsDenied() throws {
        let lock = try demoLock()
        let d = lock.dir.path
        // Trust taken from the lock's configuration; the card is in the field from the start.
        let reader = try InteractiveProcess(["nfc", "virtual-reader", "--link", lock.link, "--lock-config", lock.config,
                                             "--credential-key", "\(d)/alice.key.pem", "--document", "\(d)/alice.access.cbor"])
        defer { reader.terminate() }
        _ = try reader.waitForLine(containing: "card: inserted")
        let run = try InteractiveProcess(["lock", "run", "--config", lock.config, "--nfc", "pn532_uart:\(lock.link)", "--json"])
        defer { run.terminate() }
        let denied = try run.waitForLine(containing: "\"kind\":\"denied\"")
        XCTAssertTrue(denied.contains("\"reason\":\"revoked\""), denied)
        let audit = try String(contentsOf: lock.dir.appendingPathComponent("state/audit.log"), encoding: .utf8)
        XCTAssertTrue(audit.split(separator: "\n").last?.contains("\"reason\":\"revoked\"") ?? false, audit)
    }

    /// The README's site (keys, document, configuration from the CLI), the phone trusting the
    /// reader through its identity file, as a phone set up on another machine would.
    func testTheReadmeSiteWithAPhoneTrustingTheReaderIdentity() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        try LockBenchProcess.runEach([
            "key issuer site/issuer", "key reader site/front-door", "key credential site/alice-phone",
            "doc issue --issuer-key site/issuer.key.pem --credential site/alice-phone.pub.pem --reader-identity site/front-door.reader.json --valid-for 8h --id alice --out site/alice.access.cbor",
            "config create --reader-identity site/front-door.reader.json --issuer site/issuer.pub.pem --model NDE --firmware 02.12.72 --out site/front-door.lock.json",
        ], in: dir)
        let site = dir.appendingPathComponent("site").path
        let link = dir.appendingPathComponent("reader").path
        let reader = try InteractiveProcess(["nfc", "virtual-reader", "--link", link, "--no-card",
                                             "--credential-key", "\(site)/alice-phone.key.pem", "--document", "\(site)/alice.access.cbor",
                                             "--reader-identity", "\(site)/front-door.reader.json"])
        defer { reader.terminate() }
        _ = try reader.waitForLine(containing: "credential: ")
        let run = try InteractiveProcess(["lock", "run", "--config", "\(site)/front-door.lock.json", "--nfc", "pn532_uart:\(link)"])
        defer { run.terminate() }
        _ = try run.waitForLine(containing: "opened")
        reader.send("insert")
        let granted = try run.waitForLine(containing: "GRANTED")
        XCTAssertTrue(granted.contains("credential=616c696365"), granted)  // "alice"
        XCTAssertTrue(granted.contains("step-up"), granted)                // the lock had never seen her documents
    }

    func testACredentialMustTrustAReader() throws {
        let result = try LockBenchProcess.run(["nfc", "virtual-reader", "--credential-key", "/nonexistent.pem"])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("the phone must trust the lock's reader: --trust-reader NAME.reader.json"), result.stderr)
        let badGroup = try LockBenchProcess.run(["nfc", "virtual-reader", "--credential-key", "k.pem", "--trust-reader", "r.pem",
                                                 "--reader-group", "abcd"])
        XCTAssertEqual(badGroup.status, 2)
        XCTAssertTrue(badGroup.stderr.contains("--reader-group must be 16 bytes of hex"), badGroup.stderr)
        let orphan = try LockBenchProcess.run(["nfc", "virtual-reader", "--document", "x.cbor"])
        XCTAssertEqual(orphan.status, 2)
        XCTAssertTrue(orphan.stderr.contains("give its --key too"), orphan.stderr)
    }
}
