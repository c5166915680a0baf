import ByteCore
import Codecs
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import LockBenchTestSupport
import LockRuntime
import NIOCore
@testable import Scenario
@testable import TrustCore
@testable import TrustBackends
@testable import TrustHTTP
@testable import TrustModel
import TrustPhone
import XCTest

/// Issue 22 §3, "which list does this door hold?": after a tap a phone uploads what the lock showed
/// it (the door, the decision from the reader status, its revocation list and whether the lock
/// asked for it); the service keeps per door the newest delivered serial and the newest reports,
/// only from phones holding a grant on that door.
final class DoorReportTests: XCTestCase {
    /// Real locks and phones (the scenario world, memory radio): a tap, the phone's report, the door.
    func testAPhoneReportsWhatTheDoorShowedIt() async throws {
        let world = try World(clockMode: .virtual, transport: MemoryTap())
        do {
            for step in try ScenarioScript(parsing: """
                clock set 2026-03-02T08:00:00Z
                lock front
                lock back
                phone alice user alice
                phone bob user bob
                grant add ga alice front
                grant add gb bob back
                grant add gx bob back
                phone alice login
                phone bob login
                grant revoke gx reason moved
                phone bob poll
                """, name: "door-reports").steps { try await world.run(step.command) }
            let bob = try await world.phone("bob"), started = await world.service
            let service = try XCTUnwrap(started, "the script's first lock started the trust service")
            let serial = try XCTUnwrap(bob.revocationSerial, "bob carries the list the revocation published")
            func tap(_ lock: String) async throws -> DoorReport {
                let responder = await world.responder(bob)
                _ = try world.transport.tap(responder, on: try await world.lock(lock).service)
                return try XCTUnwrap(bob.pendingDoorReports.last)
            }

            // First tap at the back door: granted, and the lock (holding no list) asked for bob's.
            let first = try await tap("back")
            let back = try await world.lock("back")
            XCTAssertTrue(first.door.hasPrefix(Hex.encode(back.group) + ":"), first.door)
            XCTAssertEqual(first.decision, .granted)
            XCTAssertEqual(first.readerStatus, "0101")
            XCTAssertEqual(first.revocationSerial, serial)
            XCTAssertTrue(first.revocationDelivered, "a lock with no list asks for the phone's")
            var upload = await bob.uploadDoorReports()
            XCTAssertEqual(upload.sent, 1, upload.error ?? "")
            XCTAssertTrue(bob.pendingDoorReports.isEmpty)
            var door = try await service.door(first.door)
            XCTAssertEqual(door.revocationSerial, serial)
            XCTAssertEqual(door.revocationReportedBy, "bob")
            XCTAssertEqual(door.reports.map(\.device), ["bob"])

            // Again: the lock holds that list now and does not ask; the door's serial stays.
            let second = try await tap("back")
            XCTAssertEqual(second.decision, .granted)
            XCTAssertFalse(second.revocationDelivered, "the lock holds the list already")
            upload = await bob.uploadDoorReports()
            XCTAssertEqual(upload.sent, 1, upload.error ?? "")
            door = try await service.door(first.door)
            XCTAssertEqual(door.reportCount, 2)
            XCTAssertEqual(door.reports.map(\.revocationDelivered), [true, false])
            XCTAssertEqual(door.revocationSerial, serial)

            // The front door refuses bob, and bob may not report a door he holds no grant on: the
            // service refuses it (403) and the phone drops it.
            let front = try await tap("front")
            XCTAssertEqual(front.decision, .denied)
            XCTAssertNotEqual(front.readerStatus, "0101")
            upload = await bob.uploadDoorReports()
            XCTAssertEqual(upload.sent, 0)
            XCTAssertTrue(upload.error?.contains("forbidden") ?? false, upload.error ?? "no error")
            XCTAssertTrue(bob.pendingDoorReports.isEmpty, "a refused report is dropped, not retried forever")
            await XCTAssertTrustError(.notFound) { try await service.door(front.door) }
        } catch {
            await world.shutdown()
            throw error
        }
        await world.shutdown()
    }

    /// Every refusal of a report, the bounds, and both routes over HTTP against the document.
    func testRefusalsBoundsAndRoutes() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let sub = String(repeating: "0", count: 31) + "1"
        let door = f.group + ":" + sub
        let tokens = try await f.login("p1", user: "alice")
        _ = try await f.login("p2", user: "bob")
        _ = try await f.service.addGrant(id: "g1", user: "alice", readers: [f.group])
        @Sendable func report(_ door: String, delivered: UInt64? = nil) -> DoorReport {
            DoorReport(door: door, decision: .granted, readerStatus: "0101", at: f.clock.now(), revocationSerial: delivered, revocationDelivered: delivered != nil)
        }

        // The parser names each field and its rule.
        func refused(_ json: String, naming field: String, line: UInt = #line) {
            do { _ = try DoorReport(parsing: Data(json.utf8)); XCTFail("accepted \(json)", line: line) } catch {
                XCTAssertEqual(error.code, .invalidRequest, line: line); XCTAssertTrue(error.message.contains(field), error.message, line: line)
            }
        }
        let at = RFC3339.format(f.clock.now())
        refused("not json", naming: "door report")
        refused(#"{"door":"\#(f.group)","decision":"granted","at":"\#(at)","revocationDelivered":false}"#, naming: "GROUP:SUB")
        refused(#"{"door":"\#(door.uppercased())","decision":"granted","at":"\#(at)","revocationDelivered":false}"#, naming: "lowercase")
        refused(#"{"door":"\#(door)","decision":"opened","at":"\#(at)","revocationDelivered":false}"#, naming: "door report")
        refused(#"{"door":"\#(door)","decision":"granted","readerStatus":"01","at":"\#(at)","revocationDelivered":false}"#, naming: "readerStatus")
        refused(#"{"door":"\#(door)","decision":"granted","at":"yesterday","revocationDelivered":false}"#, naming: "RFC 3339")
        refused(#"{"door":"\#(door)","decision":"granted","at":"\#(at)","revocationDelivered":true}"#, naming: "revocationSerial")
        refused(#"{"door":"\#(door)","decision":"granted","at":"\#(at)","revocationSerial":18446744073709551615,"revocationDelivered":true}"#, naming: "2^63")
        refused(#"{"door":"\#(door)","decision":"granted","at":"\#(at)","revocationDelivered":false,"pad":"\#(String(repeating: "x", count: 1024))"}"#, naming: "1024 bytes")
        let spoofed = try DoorReport(parsing: Data(#"{"door":"\#(door)","decision":"granted","at":"\#(at)","revocationDelivered":false,"device":"p2"}"#.utf8))
        XCTAssertNil(spoofed.device, "who reported is the service's to say")

        // Only a phone whose user holds an active grant on the door; only an active credential.
        await XCTAssertTrustError(.forbidden) { try await f.service.reportDoor(device: "p2", report(door)) }
        await XCTAssertTrustError(.forbidden) { try await f.service.reportDoor(device: "nobody", report(door)) }
        await XCTAssertTrustError(.invalidRequest) { try await f.service.reportDoor(device: "p1", report("zz:zz")) }
        await XCTAssertTrustError(.invalidRequest) { try await f.service.door("../etc") }
        await XCTAssertTrustError(.notFound) { try await f.service.door(door) }

        // The newest serial delivered wins; an older one delivered later does not lower it.
        try await f.service.reportDoor(device: "p1", report(door, delivered: 7))
        try await f.service.reportDoor(device: "p1", report(door, delivered: 5))
        var held = try await f.service.door(door)
        XCTAssertEqual(held.revocationSerial, 7)
        // Bounded: the newest 32 reports per door.
        for _ in 0..<(DoorRecord.retainedReports + 5) { try await f.service.reportDoor(device: "p1", report(door)) }
        held = try await f.service.door(door)
        XCTAssertEqual(held.reportCount, Int64(DoorRecord.retainedReports + 7))
        XCTAssertEqual(held.reports.count, DoorRecord.retainedReports)
        XCTAssertFalse(held.reports.contains { $0.revocationDelivered }, "the oldest went first")

        _ = try await f.service.setCredential(device: "p1", to: .suspended)
        await XCTAssertTrustError(.forbidden) { try await f.service.reportDoor(device: "p1", report(door)) }
        _ = try await f.service.setCredential(device: "p1", to: .active)

        // Both routes, answers checked against the OpenAPI document.
        let ops = try await f.service.createAdminKey(name: "ops", scopes: [.doorsRead])
        let other = try await f.service.createAdminKey(name: "other", scopes: [.devicesRead])
        let app = Application(router: TrustAPI.router(service: f.service))
        try await app.test(.router) { client in
            func call(_ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil, key: String, documented path: String) async throws -> (Int, String) {
                try await client.execute(uri: uri, method: method, headers: [.authorization: "Bearer " + key, .contentType: "application/json"],
                                         body: body.map { ByteBuffer(string: $0) }) { r in
                    Self.conforms(path, method.rawValue.lowercased(), Int(r.status.code), r.body)
                    return (Int(r.status.code), String(buffer: r.body))
                }
            }
            let reports = "/v1/doors/{id}/reports", admin = "/v1/admin/doors/{id}"
            var (status, body) = try await call(.post, "/v1/doors/\(door)/reports", report(door, delivered: 9).encoded(), key: tokens.access_token, documented: reports)
            XCTAssertEqual(status, 201, body); XCTAssertTrue(body.contains(#""revocationSerial":9"#), body)
            (status, body) = try await call(.post, "/v1/doors/\(f.group):\(String(repeating: "0", count: 31))2/reports", report(door).encoded(), key: tokens.access_token, documented: reports)
            XCTAssertEqual(status, 400, body); XCTAssertTrue(body.contains("the path"), body)
            (status, body) = try await call(.post, "/v1/doors/\(door)/reports", #"{"door":1}"#, key: tokens.access_token, documented: reports)
            XCTAssertEqual(status, 400, body)
            (status, body) = try await call(.post, "/v1/doors/\(door)/reports", report(door).encoded(), key: ops, documented: reports)
            XCTAssertEqual(status, 401, "an admin key is not a phone's token: \(body)")
            (status, body) = try await call(.get, "/v1/admin/doors/\(door)", key: ops, documented: admin)
            XCTAssertEqual(status, 200, body)
            let record = try JSONDecoder().decode(DoorRecord.self, from: Data(body.utf8))
            XCTAssertEqual(record.revocationSerial, 9); XCTAssertEqual(record.reports.last?.device, "p1")
            (status, body) = try await call(.get, "/v1/admin/doors/\(door)", key: other, documented: admin)
            XCTAssertEqual(status, 403, body); XCTAssertTrue(body.contains("doors:read"), body)
            (status, body) = try await call(.get, "/v1/admin/doors/\(f.group):\(String(repeating: "f", count: 32))", key: ops, documented: admin)
            XCTAssertEqual(status, 404, body)
            (status, body) = try await call(.get, "/v1/admin/doors/nodoor", key: ops, documented: admin)
            XCTAssertEqual(status, 400, body)
            (status, body) = try await call(.get, "/v1/admin/doors/\(door)", key: tokens.access_token, documented: admin)
            XCTAssertEqual(status, 401, body)
        }

        // The site keeps at most `maxDoors` doors: past it a new door is refused, a known one still reports.
        try await f.storage.write { tx in
            for i in 0..<(DoorRecord.maxDoors - 2) {
                let hex = String(i, radix: 16)
                let d = f.group + ":d" + String(repeating: "0", count: 31 - hex.count) + hex
                try await tx.setSetting(TrustService.doorPrefix + d, String(decoding: try JSONEncoder().encode(DoorRecord(door: d)), as: UTF8.self))
            }
        }
        let last = f.group + ":" + String(repeating: "b", count: 32), beyond = f.group + ":" + String(repeating: "c", count: 32)
        try await f.service.reportDoor(device: "p1", report(last))
        await XCTAssertTrustError(.tooManyPending) { try await f.service.reportDoor(device: "p1", report(beyond)) }
        try await f.service.reportDoor(device: "p1", report(door))
    }

    /// `trust door show ID [--json]` as an operator runs it, on a site a phone reported to.
    func testTheDoorCommand() async throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        _ = try LockBenchProcess.runEach([
            "trust init site", "key reader site/front-door", "key credential site/alice-phone",
            "trust device add --site site --device alice-phone --user alice --credential-key site/alice-phone.pub.pem",
            "trust grant add --site site --grant g1 --user alice --reader-identity site/front-door.reader.json --whole-group",
        ], in: dir)
        let group = try ReaderIdentityFile.load(dir.appendingPathComponent("site/front-door.reader.json").path).file.groupID.lowercased()
        let door = group + ":" + String(repeating: "0", count: 31) + "7"
        let site = try TrustSite.open(dir.appendingPathComponent("site").path)
        let service = try await site.service(clock: SystemClock())
        try await service.reportDoor(device: "alice-phone", DoorReport(door: door, decision: .granted, readerStatus: "0101", at: Date(), revocationSerial: 3, revocationDelivered: true))
        try await service.storage.close()

        let shown = try LockBenchProcess.run(["trust", "door", "show", door, "--site", "site"], currentDirectory: dir)
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertTrue(shown.stdout.contains("revocation serial: 3 (delivered by alice-phone"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("alice-phone  granted  status=0101  list=3 delivered"), shown.stdout)
        let json = try LockBenchProcess.run(["trust", "door", "show", door, "--site", "site", "--json"], currentDirectory: dir)
        XCTAssertEqual(json.status, 0, json.stderr)
        let record = try JSONDecoder().decode(DoorRecord.self, from: Data(json.stdout.utf8))
        XCTAssertEqual(record.revocationSerial, 3); XCTAssertEqual(record.reports.count, 1)
        let unknown = try LockBenchProcess.run(["trust", "door", "show", group + ":" + String(repeating: "f", count: 32), "--site", "site"], currentDirectory: dir)
        XCTAssertNotEqual(unknown.status, 0); XCTAssertTrue(unknown.stderr.contains("no phone has reported"), unknown.stderr)
    }

    /// `phone run` as a user runs it: after `lock transact` (a separate process) taps it, the phone
    /// uploads the door's report by itself (`door-reported`), and `trust door show` reads it.
    func testPhoneRunReportsTheDoorAfterATap() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let made = try LockBenchProcess.runEach([
            "trust init site", "key reader site/front-door", "key credential site/alice-phone",
            "config create --reader-identity site/front-door.reader.json --issuer site/issuer.pub.pem --model NDE --firmware 02.12.72 --out site/front-door.lock.json",
            "trust device add --site site --device alice-phone --user alice --credential-key site/alice-phone.pub.pem",
            "trust grant add --site site --grant g1 --user alice --reader-identity site/front-door.reader.json --whole-group",
        ], in: dir).joined(separator: "\n")
        let code = try XCTUnwrap(made.range(of: #"login code: \S+"#, options: .regularExpression).map { String(made[$0].dropFirst("login code: ".count)) }, made)
        let trust = try InteractiveProcess(["trust", "serve", "--site", "site", "--port", "0"], currentDirectory: dir)
        addTeardownBlock { trust.terminate() }
        let listening = try trust.waitForLine(containing: "listening on", timeout: 60)
        let url = try XCTUnwrap(listening.range(of: "http://").map { String(listening[$0.lowerBound...]) })
        let phone = try InteractiveProcess(["phone", "run", "--trust", url, "--device", "alice-phone", "--key", "site/alice-phone.key.pem",
                                            "--code", code, "--trust-reader", "site/front-door.reader.json", "--transport", "socket", "--port", "0"],
                                           currentDirectory: dir)
        addTeardownBlock { phone.terminate() }
        let address = try phone.waitForLine(containing: "listening", timeout: 30)
        let port = try XCTUnwrap(address.range(of: #"127\.0\.0\.1:\d+"#, options: .regularExpression).map { String(address[$0]) }, address)
        _ = try phone.waitForLine(containing: "polled", timeout: 30)

        let tap = try LockBenchProcess.run(["lock", "transact", "--config", "site/front-door.lock.json", "--connect", port], currentDirectory: dir)
        XCTAssertEqual(tap.status, 0, "granted: \(tap.stdout) \(tap.stderr)")
        let reported = try phone.waitForLine(containing: "door-reported", timeout: 30)
        XCTAssertTrue(reported.contains("decision=granted"), reported)

        let reader = try ReaderIdentityFile.load(dir.appendingPathComponent("site/front-door.reader.json").path).file
        let door = reader.groupID.lowercased() + ":" + reader.subID.lowercased()
        XCTAssertTrue(reported.contains("door=" + door), "\(reported) names \(door)")
        let shown = try LockBenchProcess.run(["trust", "door", "show", door, "--site", "site", "--json"], currentDirectory: dir)
        XCTAssertEqual(shown.status, 0, shown.stderr)
        let record = try JSONDecoder().decode(DoorRecord.self, from: Data(shown.stdout.utf8))
        XCTAssertEqual(record.reports.map(\.device), ["alice-phone"])
        XCTAssertEqual(record.reports.first?.decision, .granted)
        XCTAssertEqual(record.reports.first?.readerStatus, "0101")
        XCTAssertNil(record.revocationSerial, "nothing revoked on this site: no list to deliver")
    }
}
