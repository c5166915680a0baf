import Foundation
import LockBenchTestSupport
import XCTest

/// (a) with the real engine: `lockbench lock run --ble` on one Bumble controller, Bumble's own
/// host as the phone on the other, running a credential written in Python from docs/protocol.md
/// alone (Tests/BLETests/python/protocol_credential.py): a grant, a denial after step-up
/// (expired document, chained ENVELOPE answer over BLE) and a denial (revoked).
final class BLEBumbleEndToEndTests: XCTestCase {
    static let python = LockBenchProcess.repositoryRoot.appendingPathComponent("Tests/BLETests/python")

    private func python(_ args: [String]) throws -> (status: Int32, stdout: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3"] + args
        p.currentDirectoryURL = Self.python
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text)
    }

    func testSpecCredentialOnBumblePhoneUnlocksTheLockOverBLE() throws {
        let probe = try python(["-c", "import bumble.apps.controllers, cryptography"])
        guard probe.status == 0 else { throw MissingTool("bumble is not installed") }

        let site = try startDemoLockOnBLE()
        let lock = site.lock

        func phone(_ name: String) throws -> [String: Any] {
            let r = try python(["bumble_phone.py", "tcp-client:127.0.0.1:\(site.controllers.ports[1])", "--credential", "protocol"]
                               + site.credential(name))
            let json = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? [:]
            XCTAssertEqual(json["ok"] as? Bool, true, r.stdout)
            return json
        }

        let carol = try phone("carol")
        XCTAssertEqual(carol["completion"] as? String, "01", "\(carol)")
        XCTAssertEqual((carol["credential"] as? [String: Any])?["exchange_status"] as? String, "0101")
        let granted = try lock.waitForLine(containing: "\"kind\":\"granted\"")
        XCTAssertTrue(granted.contains("\"radio\":\"ble\""), granted)

        let bob = try phone("bob")
        XCTAssertEqual(bob["completion"] as? String, "00", "\(bob)")
        let bobLog = ((bob["credential"] as? [String: Any])?["log"] as? [String]) ?? []
        XCTAssertTrue(bobLog.contains { $0.hasPrefix("envelope:") }, "\(bobLog)")
        XCTAssertEqual((bob["credential"] as? [String: Any])?["exchange_status"] as? String, "0002", "key expired")
        let expired = try lock.waitForLine(containing: "\"kind\":\"denied\"")
        XCTAssertTrue(expired.contains("\"reason\":\"expired\""), expired)

        let alice = try phone("alice")
        XCTAssertEqual(alice["completion"] as? String, "00", "\(alice)")
        XCTAssertEqual((alice["credential"] as? [String: Any])?["exchange_status"] as? String, "0003", "key not trusted")
        let revoked = try lock.waitForLine(containing: "\"reason\":\"revoked\"")
        XCTAssertTrue(revoked.contains("\"radio\":\"ble\""), revoked)
    }

    /// The Python credential reproduces every response of the specification's test vectors.
    func testSpecCredentialMatchesTheProtocolVectors() throws {
        let probe = try python(["-c", "import cryptography"])
        guard probe.status == 0 else { throw MissingTool("python3 cryptography is not installed") }
        let r = try python(["protocol_credential.py", "--self-test"])
        XCTAssertEqual(r.status, 0, r.stdout)
        // Six: no step-up SELECT, the credential's bitmap leaves bit 2 clear (docs/protocol.md §9).
        XCTAssertTrue(r.stdout.contains("Step-up transaction: 6 responses, 0 different"), r.stdout)
    }
}
