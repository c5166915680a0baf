import Foundation
import LockBenchTestSupport
import XCTest

/// The PC/SC path as a user runs it, two processes through the real pcscd: `lockbench credential
/// serve --vpicc` puts a phone in vsmartcard's `Virtual PCD 00 01` (port 35964; the LockRuntime
/// tests use `00 00`, so the two never share a reader), `lockbench lock run --nfc "pcsc:…"` opens
/// it through libpcsclite. pcscd is started (`PCSCDaemon`, test support) if not running.
final class PCSCEndToEndTests: XCTestCase {
    static let reader = "Virtual PCD 00 01"
    static let vpcd = "127.0.0.1:35964"

    override func setUpWithError() throws {
        try PCSCDaemon.ensureRunning(offering: Self.reader)
    }

    func testPcscListShowsTheReaders() throws {
        let list = try LockBenchProcess.run(["pcsc", "list"])
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertTrue(list.stdout.contains("Virtual PCD 00 00\t"), list.stdout)
        XCTAssertTrue(list.stdout.contains("\(Self.reader)\tno card"), list.stdout)
        let json = try LockBenchProcess.run(["pcsc", "list", "--json"])
        let readers = (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["readers"] as? [[String: Any]]
        XCTAssertTrue(readers?.contains { $0["name"] as? String == Self.reader && $0["card"] as? Bool == false } == true, json.stdout)
        let doctor = try LockBenchProcess.run(["doctor"])
        XCTAssertTrue(doctor.stdout.contains("[ok     ] pcscd (PC/SC readers): pcscd answers"), doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("[ok     ] PC/SC readers: \"Virtual PCD 00 00\", \"\(Self.reader)\""), doctor.stdout)
    }

    func testLockRunOnAPCSCReaderGrantsAPhoneServedAsAVirtualCard() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let demo = try LockBenchProcess.run(["demo", "--directory", dir.path])
        XCTAssertEqual(demo.status, 0, demo.stdout + demo.stderr)
        let d = dir.path
        let run = try InteractiveProcess(["lock", "run", "--config", "\(d)/lock.json", "--nfc", "pcsc:\(Self.reader)", "--json"])
        defer { run.terminate() }
        let opened = try run.waitForLine(containing: "opened")
        XCTAssertTrue(opened.contains("reader \(Self.reader) opened (pcsc:\(Self.reader))"), opened)

        let card = try InteractiveProcess(["credential", "serve", "--vpicc", Self.vpcd, "--once",
                                           "--key", "\(d)/carol.key.pem", "--document", "\(d)/carol.access.cbor",
                                           "--lock-config", "\(d)/lock.json"])
        defer { card.terminate() }
        _ = try card.waitForLine(containing: "card inserted in vpcd at \(Self.vpcd)")
        let granted = try run.waitForLine(containing: "\"kind\":\"granted\"")
        let event = try JSONSerialization.jsonObject(with: Data(granted.utf8)) as! [String: Any]
        XCTAssertEqual(event["credential"] as? String, "6361726f6c")  // "carol"
        XCTAssertEqual(event["radio"] as? String, "nfc")
        let served = try card.waitForLine(containing: "transaction: ")
        XCTAssertTrue(served.contains("reader status") && served.contains("card pulled"), served)
        card.process.waitUntilExit()
        XCTAssertEqual(card.process.terminationStatus, 0)
        _ = try run.waitForLine(containing: "card removed")

        kill(run.process.processIdentifier, SIGTERM)
        _ = try run.waitForLine(containing: "\"kind\":\"stopped\"")
        run.process.waitUntilExit()
        XCTAssertEqual(run.process.terminationStatus, 0)
    }

    func testANamedReaderThatIsNotThereIsReportedAndRetried() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        XCTAssertEqual(try LockBenchProcess.run(["demo", "--directory", dir.path]).status, 0)
        // Not there: the lock stops (exit 3) saying which reader and how to list them (issue 23)…
        let args = ["lock", "run", "--config", "\(dir.path)/lock.json", "--nfc", "pcsc:HID OMNIKEY 5427 CK 00 00"]
        let stopped = try LockBenchProcess.run(args, timeout: 60)
        XCTAssertEqual(stopped.status, 3, stopped.stderr)
        XCTAssertTrue(stopped.stderr.contains("no PC/SC reader named \"HID OMNIKEY 5427 CK 00 00\""), stopped.stderr)
        XCTAssertTrue(stopped.stderr.contains("lockbench pcsc list") && stopped.stderr.contains("--wait-for-reader"), stopped.stderr)
        // …unless asked to wait: said once, with the reason, and retried.
        let run = try InteractiveProcess(args + ["--wait-for-reader"])
        defer { run.terminate() }
        let waiting = try run.waitForLine(containing: "waiting for it (--wait-for-reader)")
        XCTAssertTrue(waiting.contains("no PC/SC reader named \"HID OMNIKEY 5427 CK 00 00\""), waiting)
        Thread.sleep(forTimeInterval: 1)
        XCTAssertTrue(run.process.isRunning, "it waits for the reader")

        // A card with no vpcd to go to: an environment error that says what to install.
        let d = dir.path
        let nowhere = try LockBenchProcess.run(["credential", "serve", "--vpicc", "127.0.0.1:1", "--once",
                                                "--key", "\(d)/carol.key.pem", "--lock-config", "\(d)/lock.json"])
        XCTAssertEqual(nowhere.status, 3, nowhere.stderr)
        XCTAssertTrue(nowhere.stderr.contains("cannot reach vpcd at 127.0.0.1:1") && nowhere.stderr.contains("vsmartcard-vpcd"), nowhere.stderr)
    }

    func testABadVpiccAddressIsAUsageError() throws {
        let bad = try LockBenchProcess.run(["credential", "serve", "--vpicc", "nowhere", "--key", "k.pem", "--trust-reader", "r.json"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderr.contains("--vpicc \"nowhere\" is not HOST:PORT"), bad.stderr)
    }
}
