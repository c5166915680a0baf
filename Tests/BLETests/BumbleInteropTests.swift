import BLE
import ByteCore
import Foundation
import LockBenchTestSupport
import XCTest

/// Runs the Bumble-host phone script (Tests/BLETests/python/bumble_phone.py) against a port.
enum BumblePhoneScript {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("python")

    static func run(port: UInt16, credential: String, extra: [String] = [], timeout: TimeInterval = 30) throws -> [String: Any] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", directory.appendingPathComponent("bumble_phone.py").path, "tcp-client:127.0.0.1:\(port)", "--credential", credential] + extra
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let killer = DispatchWorkItem { if p.isRunning { p.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        final class Box: @unchecked Sendable { var data = Data() }
        let errBox = Box()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { errBox.data = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        let errData = errBox.data
        p.waitUntilExit()
        killer.cancel()
        guard let json = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            XCTFail("no JSON from bumble_phone.py: \(String(decoding: data, as: UTF8.self)) \(String(decoding: errData, as: UTF8.self))")
            return [:]
        }
        return json
    }
}

/// (a) The Swift lock on one controller, Bumble's own host as the phone on the other.
final class BumbleInteropTests: XCTestCase {
    func testBumblePhoneGetsGrantAndDenialFromSwiftLock() throws {
        let controllers = try bumbleControllers()
        let decisions = Decisions()
        let lock = try startLock(on: controllers.spec(0), transaction: EchoFlow.lockTransaction { decisions.add($0) })

        let grant = try BumblePhoneScript.run(port: controllers.ports[1], credential: "echo")
        XCTAssertEqual(grant["ok"] as? Bool, true, "\(grant)")
        // The echo flow's completed notification, plain: 00 02 00 01 (unsecured).
        XCTAssertEqual(grant["completion"] as? String, "00020001")
        XCTAssertEqual(grant["commands"] as? Int, 3)
        XCTAssertEqual(grant["spsm_value"] as? String, "0080020100")
        XCTAssertEqual(grant["mtu"] as? Int, 247)
        XCTAssertEqual((grant["services"] as? [String])?.count, 3)
        XCTAssertEqual((grant["service_data"] as? String)?.count, 48)
        // First byte: advertisement version 0 (bits 0-2), BLE only (bit 6) — what the reference
        // phone accepts (ALIRO_BLUETOOTH_LE_ADVERTISEMENT_VERSION = 0x00).
        XCTAssertEqual((grant["service_data"] as? String)?.prefix(2), "40")

        // Bumble's SMP asks to pair first: refused with "pairing not supported", link unharmed.
        let deny = try BumblePhoneScript.run(port: controllers.ports[1], credential: "echo-refuse", extra: ["--try-pair"])
        let pairing = deny["pairing"] as? String ?? ""
        XCTAssertTrue(pairing.contains("PAIRING_NOT_SUPPORTED") || pairing.contains("0x05") || pairing.lowercased().contains("not supported"), pairing)
        XCTAssertEqual(deny["ok"] as? Bool, true, "\(deny)")
        XCTAssertEqual(deny["completion"] as? String, "00020000")
        XCTAssertEqual(decisions.all, [true, false])
        XCTAssertEqual(lock.transactionCount, 2)
    }

    /// btsnoop written during an interop run decodes in tshark: ATT and L2CAP, no malformed frames.
    func testBTSnoopCaptureDecodesInTShark() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") else { throw MissingTool("tshark is not installed") }
        let controllers = try bumbleControllers()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-\(UUID().uuidString).btsnoop").path
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        let lock = try startLock(on: controllers.spec(0), configure: { $0.btsnoop = path })
        let result = try BumblePhoneScript.run(port: controllers.ports[1], credential: "echo")
        XCTAssertEqual(result["ok"] as? Bool, true, "\(result)")
        lock.stop()

        let (status, text) = try tshark(["-r", path, "-V"])
        XCTAssertEqual(status, 0)
        XCTAssertFalse(text.localizedCaseInsensitiveContains("malformed"), "tshark found malformed frames")
        XCTAssertTrue(text.contains("Bluetooth Attribute Protocol"))
        XCTAssertTrue(text.contains("Bluetooth L2CAP Protocol"))
        XCTAssertTrue(text.contains("LE Credit Based Connection Request"))
        XCTAssertTrue(text.contains("Read By Group Type Response"))
        XCTAssertTrue(text.contains("LE Set Advertising Data"))

        // Dated now, as Wireshark shows it (the 2000-based offset dated captures 2056).
        let (fieldsStatus, epochs) = try tshark(["-r", path, "-T", "fields", "-e", "frame.time_epoch"])
        XCTAssertEqual(fieldsStatus, 0)
        let times = epochs.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        XCTAssertGreaterThan(times.count, 20, epochs)
        let now = Date().timeIntervalSince1970
        for t in times { XCTAssertLessThan(abs(t - now), 120, "frame.time_epoch \(t) is not now (\(now))") }
    }

    private func tshark(_ arguments: [String]) throws -> (Int32, String) {
        let r = try LockBenchProcess.run(arguments, executable: URL(fileURLWithPath: "/usr/bin/tshark"), timeout: 120)
        return (r.status, r.stdout)
    }
}

/// (c) The controller goes away and comes back: the lock reconnects, re-initialises,
/// re-advertises and serves again.
final class ControllerRestartTests: XCTestCase {
    func testLockSurvivesControllerRestart() throws {
        let controllers = try bumbleControllers()
        let events = EventLog()
        let lock = try startLock(on: controllers.spec(0), onEvent: { events.add($0) })

        let phone = try startPhone(on: controllers.spec(1))
        XCTAssertEqual(try phone.unlock(with: EchoCredential()).completion, EchoFlow.granted)

        controllers.stop()
        XCTAssertTrue(waitFor(5) { events.lost > 0 }, "the lock did not notice the controller leaving")
        XCTAssertFalse(lock.host.isReady)
        try controllers.start()
        XCTAssertTrue(waitFor(15) { lock.host.isReady && phone.host.isReady }, "the hosts did not come back")
        XCTAssertEqual(try phone.unlock(with: EchoCredential()).completion, EchoFlow.granted)
        XCTAssertEqual(lock.transactionCount, 2)
        XCTAssertGreaterThanOrEqual(events.ready, 2)
    }

    private func waitFor(_ seconds: TimeInterval, _ condition: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition()
    }
}

final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [BLELockEvent] = []
    func add(_ e: BLELockEvent) { lock.withLock { events.append(e) } }
    var lost: Int { lock.withLock { events.filter { if case .controllerLost = $0 { return true } else { return false } }.count } }
    var ready: Int { lock.withLock { events.filter { if case .ready = $0 { return true } else { return false } }.count } }
}
