import BLE
import Foundation
import LockBenchTestSupport
import XCTest

/// `lockbench phone run` on the radios as a user runs it: a site made with the CLI, `trust serve`,
/// the phone logging in and polling, and `lockbench lock run` tapping it — over the virtual PN532
/// that the lock's real libnfc drives, and over BLE between two Bumble virtual controllers. And
/// `scenario run --clock system`: a short scenario on the wall clock.
final class PhoneRunEndToEndTests: XCTestCase {
    struct Site {
        var directory: URL
        var url: String
        var code: String
        var server: InteractiveProcess
        var lockConfig: String { "site/front-door.lock.json" }
        func phone(_ transport: [String]) -> [String] {
            ["phone", "run", "--trust", url, "--device", "alice-phone", "--key", "site/alice-phone.key.pem", "--code", code,
             "--trust-reader", "site/front-door.reader.json"] + transport
        }
    }

    /// The README's site, made with the CLI: a lock, alice's phone, a grant, the service running.
    func site() throws -> Site {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let code = LockBenchProcess.loginCode(in: try LockBenchProcess.runEach([
            "trust init site", "key reader site/front-door", "key credential site/alice-phone",
            "config create --reader-identity site/front-door.reader.json --issuer site/issuer.pub.pem --model NDE --firmware 02.12.72 --out site/front-door.lock.json",
            "trust device add --site site --device alice-phone --user alice --credential-key site/alice-phone.pub.pem",
            "trust grant add --site site --grant g1 --user alice --reader-identity site/front-door.reader.json --whole-group",
        ], in: dir))
        XCTAssertFalse(code.isEmpty, "trust device add prints a login code")
        let server = try InteractiveProcess(["trust", "serve", "--site", "site", "--port", "0"], currentDirectory: dir)
        addTeardownBlock { server.terminate() }
        let listening = try server.waitForLine(containing: "listening on", timeout: 60)
        let url = try XCTUnwrap(listening.range(of: "http://").map { String(listening[$0.lowerBound...]) })
        return Site(directory: dir, url: url, code: code, server: server)
    }

    func testPhoneRunOnTheVirtualPN532TapsALockThroughLibNFC() throws {
        let site = try site()
        let phone = try InteractiveProcess(site.phone(["--transport", "pn532"]), currentDirectory: site.directory)
        addTeardownBlock { phone.terminate() }
        let announced = try phone.waitForLine(containing: "virtual-pn532", timeout: 30)
        let connstring = try XCTUnwrap(announced.split(separator: " ").first { $0.hasPrefix("connstring=") }?.dropFirst("connstring=".count))
        XCTAssertTrue(connstring.hasPrefix("pn532_uart:/"), announced)
        let polled = try phone.waitForLine(containing: "polled", timeout: 30)
        XCTAssertTrue(polled.contains("trigger=login") && polled.contains("keys=1"), polled)

        // The lock opens the phone's PN532 through libnfc; the phone is already in the field.
        let lock = try InteractiveProcess(["lock", "run", "--config", site.lockConfig, "--nfc", String(connstring), "--json"],
                                          currentDirectory: site.directory)
        addTeardownBlock { lock.terminate() }
        let first = try lock.waitForLine(containing: "\"kind\":\"granted\"", timeout: 60)
        XCTAssertTrue(first.contains("\"radio\":\"nfc\""), first)

        // The phone leaves the field and comes back: a second transaction, granted again.
        phone.send("remove")
        _ = try phone.waitForLine(containing: "phone=removed")
        _ = try lock.waitForLine(containing: "card removed", timeout: 30)
        phone.send("insert")
        _ = try phone.waitForLine(containing: "phone=inserted")
        _ = try lock.waitForLine(containing: "\"kind\":\"granted\"", timeout: 60)

        // The grant is revoked; the phone's manual poll deletes its key.
        let revoke = try LockBenchProcess.run(["trust", "grant", "revoke", "--site", "site", "--grant", "g1", "--reason", "left"],
                                              currentDirectory: site.directory)
        XCTAssertEqual(revoke.status, 0, revoke.stderr)
        phone.send("poll")
        let deleted = try phone.waitForLine(containing: "polled", timeout: 30)
        XCTAssertTrue(deleted.contains("trigger=manual") && deleted.contains("deleted=1") && deleted.contains("revocation=1"), deleted)
        phone.send("show")
        let state = try phone.waitForLine(containing: "state ")
        XCTAssertTrue(state.contains("keys=0") && state.contains("revocation=1"), state)
        phone.send("quit")
        phone.process.waitUntilExit()
        XCTAssertEqual(phone.process.terminationStatus, 0)
    }

    func testPhoneRunOnBLETapsALockOnBumble() throws {
        let controllers: VirtualControllers
        do { controllers = try VirtualControllers.bumble() } catch {
            throw MissingTool("Bumble's virtual controllers (pip install bumble==0.0.236): \(error)")
        }
        addTeardownBlock { controllers.stop() }
        let site = try site()
        let lock = try InteractiveProcess(["lock", "run", "--config", site.lockConfig, "--ble", controllers.spec(0), "--json"],
                                          currentDirectory: site.directory)
        addTeardownBlock { lock.terminate() }
        _ = try lock.waitForLine(containing: "advertising as", timeout: 60)

        let phone = try InteractiveProcess(site.phone(["--transport", "ble", "--ble", controllers.spec(1)]), currentDirectory: site.directory)
        addTeardownBlock { phone.terminate() }
        let polled = try phone.waitForLine(containing: "polled", timeout: 30)
        XCTAssertTrue(polled.contains("keys=1"), polled)
        phone.send("tap")
        let tap = try phone.waitForLine(containing: "tap result=", timeout: 90)
        XCTAssertTrue(tap.hasSuffix("result=granted"), tap)
        let granted = try lock.waitForLine(containing: "\"kind\":\"granted\"", timeout: 30)
        XCTAssertTrue(granted.contains("\"radio\":\"ble\""), granted)

        // Offline, the phone still taps with the key it holds (the lock decides offline).
        phone.send("offline")
        _ = try phone.waitForLine(containing: "offline")
        phone.send("poll")
        let failed = try phone.waitForLine(containing: "poll-failed")
        XCTAssertTrue(failed.contains("trigger=manual"), failed)
        phone.send("tap")
        XCTAssertTrue(try phone.waitForLine(containing: "tap result=", timeout: 90).hasSuffix("result=granted"))
        phone.send("quit")
        phone.process.waitUntilExit()
        XCTAssertEqual(phone.process.terminationStatus, 0)
    }

    /// `phone run --transport vpicc`: each `tap` puts the phone as a card in pcscd's "Virtual PCD
    /// 00 00" (the registry's vpicc radio) until the lock, reading that reader through pcsc-lite,
    /// ended the transaction.
    func testPhoneRunOnVpiccTapsALockThroughPcscd() throws {
        try PCSCDaemon.ensureRunning(offering: "Virtual PCD 00 00")
        let site = try site()
        let lock = try InteractiveProcess(["lock", "run", "--config", site.lockConfig, "--nfc", "pcsc:Virtual PCD 00 00", "--json"],
                                          currentDirectory: site.directory)
        addTeardownBlock { lock.terminate() }
        _ = try lock.waitForLine(containing: "\"radioEvent\":\"reader-opened\"", timeout: 60)
        let phone = try InteractiveProcess(site.phone(["--transport", "vpicc"]), currentDirectory: site.directory)
        addTeardownBlock { phone.terminate() }
        XCTAssertTrue(try phone.waitForLine(containing: "polled", timeout: 30).contains("keys=1"))
        phone.send("tap")
        let tap = try phone.waitForLine(containing: "tap result=", timeout: 60)
        XCTAssertTrue(tap.hasSuffix("result=ended"), tap)
        let granted = try lock.waitForLine(containing: "\"kind\":\"granted\"", timeout: 30)
        XCTAssertTrue(granted.contains("\"radio\":\"nfc\""), granted)
        _ = try lock.waitForLine(containing: "\"radioEvent\":\"card-removed\"", timeout: 30)
    }

    /// On the system clock the scenario's time flows with the wall clock: the 9 hours it advances
    /// plus the seconds the run took (on the virtual clock it is exactly 9 h).
    func testScenarioRunOnTheSystemClock() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let file = dir.appendingPathComponent("system.scenario")
        try """
        lock front
        phone alice user alice
        grant add g1 alice front
        phone alice login
        tap alice front expect granted
        phone alice offline
        clock advance 9h
        tap alice front expect denied expired
        phone alice online
        phone alice poll
        expect alice iteration g1 2
        tap alice front expect granted
        """.write(to: file, atomically: true, encoding: .utf8)
        let r = try LockBenchProcess.run(["scenario", "run", "--clock", "system", "--json", file.path])
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        let results = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]], r.stdout)
        let result = try XCTUnwrap(results.first)
        XCTAssertEqual(result["status"] as? String, "passed", "\(result)")
        let wall = try XCTUnwrap(result["seconds"] as? Double), scenario = try XCTUnwrap(result["scenarioSeconds"] as? Double)
        XCTAssertGreaterThan(scenario, 9 * 3600, "the system clock moved while the scenario ran")
        XCTAssertLessThanOrEqual(scenario - 9 * 3600, wall + 1, "…by the wall time of the run, no more")

        let virtual = try LockBenchProcess.run(["scenario", "run", "--json", file.path])
        XCTAssertEqual(virtual.status, 0, virtual.stdout + virtual.stderr)
        let v = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(virtual.stdout.utf8)) as? [[String: Any]])?.first)
        XCTAssertEqual(v["scenarioSeconds"] as? Double, 9 * 3600, "the virtual clock moves only when told")
    }
}
