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
        let r = try LockBenchProcess.run(["python3"] + args, executable: URL(fileURLWithPath: "/usr/bin/env"),
                                         currentDirectory: Self.python, timeout: 180)
        return (r.status, r.stdout)
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
        // Over BLE the outcome is the completed notification (00 02 00 <status>, sealed under
        // BleSKReader, opened by the Python credential); EXCHANGE carries no 97 (docs/ble.md).
        XCTAssertEqual(completed(carol), "00020001", "\(carol)")
        XCTAssertNil((carol["credential"] as? [String: Any])?["exchange_status"] as? String)
        let granted = try lock.waitForLine(containing: "\"kind\":\"granted\"")
        XCTAssertTrue(granted.contains("\"radio\":\"ble\""), granted)

        let bob = try phone("bob")
        XCTAssertEqual(completed(bob), "00020000", "\(bob)")
        let bobLog = ((bob["credential"] as? [String: Any])?["log"] as? [String]) ?? []
        XCTAssertTrue(bobLog.contains { $0.hasPrefix("envelope:") }, "\(bobLog)")
        XCTAssertNil((bob["credential"] as? [String: Any])?["exchange_status"] as? String, "the reason is the lock's, not told over BLE")
        let expired = try lock.waitForLine(containing: "\"kind\":\"denied\"")
        XCTAssertTrue(expired.contains("\"reason\":\"expired\""), expired)

        let alice = try phone("alice")
        XCTAssertEqual(completed(alice), "00020000", "\(alice)")
        let revoked = try lock.waitForLine(containing: "\"reason\":\"revoked\"")
        XCTAssertTrue(revoked.contains("\"radio\":\"ble\""), revoked)
    }

    /// The plaintext of the completed notification as the Python credential opened it.
    private func completed(_ json: [String: Any]) -> String? {
        ((json["credential"] as? [String: Any])?["completed"] as? [String: Any])?["plaintext"] as? String
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
