import BLE
import ByteCore
import Codecs
import Foundation
import LockBenchTestSupport
import XCTest

/// BLE as a bench sees it, through `lockbench lock run --ble` as a process: each lock its own
/// address, phones reaching the lock they target, the advertisement's expiry and rotating tag,
/// idle centrals dropped, and a clean stop (no "controller lost", the bolt secured).
final class BLEBenchEndToEndTests: XCTestCase {
    /// `lockbench demo` in a fresh directory, its lock.json edited by `edit`.
    private func demoSite(_ edit: (inout [String: Any]) -> Void = { _ in }) throws -> (dir: URL, config: String) {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        XCTAssertEqual(try LockBenchProcess.run(["demo", "--directory", dir.path]).status, 0)
        let config = dir.appendingPathComponent("lock.json")
        var json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: config)) as? [String: Any])
        edit(&json)
        try JSONSerialization.data(withJSONObject: json).write(to: config)
        return (dir, config.path)
    }

    private func credential(_ name: String, _ site: (dir: URL, config: String)) -> [String] {
        ["--key", site.dir.appendingPathComponent("\(name).key.pem").path,
         "--document", site.dir.appendingPathComponent("\(name).access.cbor").path, "--lock-config", site.config]
    }

    /// `lock run --ble` on `spec`, terminated at teardown; returns it and the address it advertises.
    private func runLock(_ site: (dir: URL, config: String), on spec: String, extra: [String] = []) throws -> (InteractiveProcess, String) {
        let lock = try InteractiveProcess(["lock", "run", "--config", site.config, "--ble", spec] + extra)
        addTeardownBlock { lock.terminate() }
        let line = try lock.waitForLine(containing: "advertising as ", timeout: 30)
        let address = String(line[line.range(of: "advertising as ")!.upperBound...].prefix(while: { $0 != " " }))
        return (lock, address)
    }

    private func readerIDs(_ config: String) throws -> (group: [UInt8], sub: [UInt8]) {
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: config))) as? [String: Any])
        let reader = try XCTUnwrap(json["reader"] as? [String: Any])
        return (try XCTUnwrap(Hex.decode(reader["groupID"] as? String ?? "")), try XCTUnwrap(Hex.decode(reader["subID"] as? String ?? "")))
    }

    // MARK: addresses and targets

    func testTwoLocksAndTwoPhonesOnOneLinkEachPhoneReachesItsLock() throws {
        let script = LockBenchProcess.repositoryRoot.appendingPathComponent("Tests/BLETests/python/controllers.py").path
        let controllers: VirtualControllers
        do { controllers = try VirtualControllers.bumble(count: 4, script: script) } catch { throw MissingTool("\(error)") }
        addTeardownBlock { controllers.stop() }
        let siteA = try demoSite(), siteB = try demoSite()
        let (_, addressA) = try runLock(siteA, on: controllers.spec(0))
        let (_, addressB) = try runLock(siteB, on: controllers.spec(1))
        XCTAssertNotEqual(addressA, addressB, "two locks, one address")
        for (site, address) in [(siteA, addressA), (siteB, addressB)] {
            let ids = try readerIDs(site.config)
            // docs/ble.md: SHA-256(group id ‖ sub id)[0:6], most significant byte first, top bits 11.
            var digest = Array(Primitives.sha256(ids.group + ids.sub).prefix(6))
            digest[0] |= 0xC0
            XCTAssertEqual(address, digest.map { Hex.encode([$0]).uppercased() }.joined(separator: ":") + "/R")
        }

        // Both phones at once, each trusting its own lock's reader: each lands on its lock.
        final class Box: @unchecked Sendable { var result: LockBenchProcess.Result? }
        let first = Box()
        let group = DispatchGroup()
        group.enter()
        let firstArguments = ["ble", "phone", "--ble", controllers.spec(2)] + credential("carol", siteA)
        DispatchQueue.global().async {
            first.result = try? LockBenchProcess.run(firstArguments)
            group.leave()
        }
        let second = try LockBenchProcess.run(["ble", "phone", "--ble", controllers.spec(3)] + credential("carol", siteB))
        group.wait()
        let a = try XCTUnwrap(first.result)
        XCTAssertEqual(a.status, 0, a.stdout + a.stderr)
        XCTAssertTrue(a.stdout.hasPrefix("granted by \(addressA)"), a.stdout)
        XCTAssertEqual(second.status, 0, second.stdout + second.stderr)
        XCTAssertTrue(second.stdout.hasPrefix("granted by \(addressB)"), second.stdout)

        // --lock-address sends the phone to the lock named, even one whose reader it does not trust.
        let wrong = try LockBenchProcess.run(["ble", "phone", "--ble", controllers.spec(2), "--lock-address", addressB] + credential("carol", siteA))
        XCTAssertEqual(wrong.status, 1, wrong.stdout + wrong.stderr)
        XCTAssertTrue(wrong.stdout.hasPrefix("denied by \(addressB)"), wrong.stdout)
    }

    func testAddressFlagOverridesAndABadAddressIsAUsageError() throws {
        let site = try demoSite()
        let controllers = try bumbleControllers()
        let (_, address) = try runLock(site, on: controllers.spec(0), extra: ["--address", "C3:12:34:56:78:9A"])
        XCTAssertEqual(address, "C3:12:34:56:78:9A/R")

        let bad = try LockBenchProcess.run(["lock", "run", "--config", site.config, "--ble", controllers.spec(1), "--address", "43:12:34:56:78:9A"])
        XCTAssertEqual(bad.status, 2, bad.stdout + bad.stderr)
        XCTAssertTrue(bad.stderr.contains("--address: BLE address 43:12:34:56:78:9A: not a static random address"), bad.stderr)
        let short = try LockBenchProcess.run(["lock", "run", "--config", site.config, "--ble", controllers.spec(1), "--address", "C3:12"])
        XCTAssertEqual(short.status, 2)
        XCTAssertTrue(short.stderr.contains("six hex bytes separated by colons"), short.stderr)

        let configured = try demoSite { $0["ble"] = ["address": "C0:00:00:00:00:00"] }
        let fromFile = try LockBenchProcess.run(["lock", "run", "--config", configured.config, "--ble", controllers.spec(1)])
        XCTAssertEqual(fromFile.status, 2, fromFile.stdout + fromFile.stderr)
        XCTAssertTrue(fromFile.stderr.contains("lock.json: ble.address: BLE address C0:00:00:00:00:00"), fromFile.stderr)
        XCTAssertTrue(fromFile.stderr.contains("all zeros or all ones"), fromFile.stderr)
    }

    // MARK: advertisement

    /// The advertisement heard by a scanner: group id [0:8] and sub id [0:2] of the reader, an
    /// expiry at the end of the current 15-minute window, and the tag recomputed here from the
    /// documented derivation: AES-128(HKDF-SHA256(group id, "", "LockBench group resolving key", 16),
    /// 00×6 ‖ address ‖ expiry)[0:7].
    func testAdvertisementCarriesTheReadersIdsExpiryAndRotatingTag() throws {
        let site = try demoSite()
        let controllers = try bumbleControllers()
        let (_, addressText) = try runLock(site, on: controllers.spec(0))
        let address = try BLEAddress(staticRandom: addressText)
        let ids = try readerIDs(site.config)

        var config = BLEPhone.Configuration(transport: try TransportSpec(parsing: controllers.spec(1)))
        config.target = .address(address)
        let scanner = try BLEPhone(configuration: config)
        try scanner.start()
        defer { scanner.stop() }
        let report = try scanner.host.scan(timeout: 10) { $0.address.bytes == address.bytes }
        let ad = try XCTUnwrap(AliroAdvertisement(advertisingData: report.data))
        XCTAssertEqual(ad.groupID, Array(ids.group.prefix(8)))
        XCTAssertEqual(ad.subID, Array(ids.sub.prefix(2)))
        let expiry = ad.expiryDate.timeIntervalSince1970
        let now = Date().timeIntervalSince1970
        XCTAssertGreaterThan(expiry, now - 5)
        XCTAssertLessThanOrEqual(expiry, now + 900 + 5)
        XCTAssertEqual(expiry.truncatingRemainder(dividingBy: 900), 0, "the end of a 900 s window")

        let key = try Primitives.hkdf(ikm: ids.group, salt: [], info: Array("LockBench group resolving key".utf8), length: 16)
        let msbFirst: [UInt8] = Array(address.bytes.reversed())
        let block = [UInt8](repeating: 0, count: 6) + msbFirst + ad.expiry
        XCTAssertEqual(ad.tag, Array(try Primitives.aes128Block(key: key, block: block).prefix(7)))
        XCTAssertNotEqual(ad.tag, [UInt8](repeating: 0, count: 7))
    }

    // MARK: idle links

    /// `ble.idleTimeout` in the lock configuration: a central that connects and opens no channel is
    /// dropped, and a phone after it is granted.
    func testIdleCentralIsDroppedAndTheNextPhoneIsGranted() throws {
        let site = try demoSite { $0["ble"] = ["idleTimeout": "2s", "transactionTimeout": "4s"] }
        let controllers = try bumbleControllers()
        let (lock, address) = try runLock(site, on: controllers.spec(0))

        var config = BLEPhone.Configuration(transport: try TransportSpec(parsing: controllers.spec(1)))
        config.target = .address(try BLEAddress(staticRandom: address))
        let browser = try BLEPhone(configuration: config)
        try browser.start()
        let idle = try browser.connectToLock()
        try idle.discover()
        XCTAssertTrue(idle.connection.waitUntilDisconnected(timeout: 15), "the lock kept an idle central")
        let dropped = try lock.waitForLine(containing: "dropped idle link")
        XCTAssertTrue(dropped.contains("no L2CAP channel opened within 2 s"), dropped)
        browser.stop()

        let carol = try LockBenchProcess.run(["ble", "phone", "--ble", controllers.spec(1)] + credential("carol", site))
        XCTAssertEqual(carol.status, 0, carol.stdout + carol.stderr)
        XCTAssertTrue(carol.stdout.hasPrefix("granted by \(address)"), carol.stdout)
    }

    // MARK: clean stop

    /// SIGTERM inside the relock window: no "controller lost", the bolt secured (said, and in
    /// state.json), the audit intact.
    func testSIGTERMInsideTheRelockWindowSecuresTheBoltAndIsNoControllerLoss() throws {
        let site = try demoSite { json in
            var policy = json["policy"] as? [String: Any] ?? [:]
            policy["relockTime"] = "10m"
            json["policy"] = policy
        }
        let controllers = try bumbleControllers()
        let lock = try InteractiveProcess(["lock", "run", "--config", site.config, "--ble", controllers.spec(0), "--json"])
        addTeardownBlock { lock.terminate() }
        _ = try lock.waitForLine(containing: "advertising as", timeout: 30)
        let carol = try LockBenchProcess.run(["ble", "phone", "--ble", controllers.spec(1)] + credential("carol", site))
        XCTAssertEqual(carol.status, 0, carol.stdout + carol.stderr)
        _ = try lock.waitForLine(containing: "\"kind\":\"granted\"")

        kill(lock.process.processIdentifier, SIGTERM)
        let stopped = try lock.waitForLine(containing: "\"kind\":\"stopped\"")
        lock.process.waitUntilExit()
        XCTAssertEqual(lock.process.terminationStatus, 0)
        XCTAssertTrue(stopped.contains("bolt secured"), stopped)
        XCTAssertTrue(stopped.contains("secured on stop"), stopped)
        let all = lock.allLines.joined(separator: "\n")
        XCTAssertFalse(all.contains("controller lost"), all)
        // The grant's own event says the bolt it left (unsecured); nothing after it may.
        let afterGrant = lock.allLines.drop { !$0.contains("\"kind\":\"granted\"") }.dropFirst().joined(separator: "\n")
        XCTAssertFalse(afterGrant.contains("unsecured\""), afterGrant)

        // state.json is {"mac": …, "state": {…}} (authenticated, docs/lock-config.md).
        let file = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: site.dir.appendingPathComponent("state/state.json"))) as? [String: Any])
        let state = try XCTUnwrap(file["state"] as? [String: Any])
        let bolt = try XCTUnwrap(state["bolt"] as? [String: Any])
        XCTAssertNotNil(bolt["secured"], "state.json: \(bolt)")
        let verify = try LockBenchProcess.run(["audit", "verify", "--config", site.config])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)

        // A stop with the bolt already secured says so, without "secured on stop".
        let again = try InteractiveProcess(["lock", "run", "--config", site.config, "--ble", controllers.spec(0)])
        addTeardownBlock { again.terminate() }
        _ = try again.waitForLine(containing: "advertising as", timeout: 30)
        kill(again.process.processIdentifier, SIGTERM)
        let second = try again.waitForLine(containing: "lock stopped")
        XCTAssertTrue(second.hasSuffix("lock stopped; bolt secured"), second)
        XCTAssertFalse(again.allLines.joined().contains("controller lost"))
    }
}
