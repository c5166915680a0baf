import Scenario
import TrustPhone
import XCTest

/// The Schlage guide's credential provisioning decision tree: every branch of every decision,
/// the path taken, and the guide's words in each outcome.
final class WalletTests: XCTestCase {
    func state(_ fields: [(String, String)]) throws -> WalletState {
        var s = WalletState()
        for (f, v) in fields { try s.set(f, v) }
        return s
    }

    func expect(_ fields: [(String, String)], _ outcome: WalletOutcome, path: String, quote: String,
                file: StaticString = #filePath, line: UInt = #line) throws {
        let d = WalletProvisioning.decide(try state(fields))
        XCTAssertEqual(d.outcome, outcome, d.description, file: file, line: line)
        XCTAssertEqual(d.path.map { "\($0.decision)\($0.answer ? "y" : "n")" }.joined(separator: " "), path, file: file, line: line)
        XCTAssertTrue(d.message.contains(quote), d.message, file: file, line: line)
    }

    func testEveryBranch() throws {
        // Decision 1 no / yes.
        try expect([("device", "ipad")], .notIPhone, path: "1n", quote: "not all iOS devices (namely iPads) have NFC capabilities")
        try expect([("device", "ipod")], .notIPhone, path: "1n", quote: "NFC capabilities")
        // Decision 2 no.
        try expect([("library", "no")], .passLibraryUnavailable, path: "1y 2n", quote: "does not have necessary resources to generate the pass")
        // Decision 3 no: provision (from Decision 3).
        try expect([], .provision, path: "1y 2y 3n", quote: "either from Decision 3 or Decision 7, it provisions the credential")
        // Decision 4 yes.
        try expect([("pass", "deactivated")], .deactivated, path: "1y 2y 3y 4y", quote: "will not provision a credential if the existing credential has been deactivated")
        // Decision 5 yes, by the user and by the access control system.
        try expect([("pass", "suspended-by-user")], .suspended, path: "1y 2y 3y 4n 5y", quote: "a link to the pass in the wallet can be provided")
        try expect([("pass", "suspended-by-system")], .suspended, path: "1y 2y 3y 4n 5y", quote: "by the Access Control system")
        // Decision 6 yes: the pass is on the paired watch too (or there is no watch to add it to).
        try expect([("pass", "active"), ("watch", "paired-with-pass")], .alreadyProvisioned, path: "1y 2y 3y 4n 5n 6y", quote: "already provisioned")
        try expect([("pass", "active"), ("watch", "none")], .alreadyProvisioned, path: "1y 2y 3y 4n 5n 6y", quote: "already provisioned")
        // Decision 6 no → 7 yes: add it to the watch.
        try expect([("pass", "active"), ("watch", "paired")], .provision, path: "1y 2y 3y 4n 5n 6n 7y", quote: "add the pass to the remote device")
        // Decision 7 no.
        try expect([("pass", "active"), ("watch", "paired"), ("can-add", "no")], .cannotAdd, path: "1y 2y 3y 4n 5n 6n 7n",
                   quote: "Please verify iCloud and Passcode are setup on current device.")
    }

    /// The order of the decisions is the guide's: an iPad without a pass library stops at 1, a
    /// deactivated pass that is also on the watch stops at 4.
    func testTheFirstStopWins() throws {
        try expect([("device", "ipad"), ("library", "no")], .notIPhone, path: "1n", quote: "iPads")
        try expect([("pass", "deactivated"), ("watch", "paired-with-pass")], .deactivated, path: "1y 2y 3y 4y", quote: "deactivated")
        try expect([("pass", "suspended-by-user"), ("can-add", "no")], .suspended, path: "1y 2y 3y 4n 5y", quote: "suspended")
    }

    func testEveryOutcomeIsReachableAndFieldsAreChecked() throws {
        var seen = Set<WalletOutcome>()
        for device in WalletState.Device.allCases {
            for library in ["yes", "no"] {
                for pass in WalletState.Pass.allCases {
                    for watch in WalletState.Watch.allCases {
                        for canAdd in ["yes", "no", "auto"] {
                            let d = WalletProvisioning.decide(try state([("device", device.rawValue), ("library", library), ("pass", pass.rawValue),
                                                                         ("watch", watch.rawValue), ("can-add", canAdd)]))
                            seen.insert(d.outcome)
                            XCTAssertLessThanOrEqual(d.path.count, 7)
                            XCTAssertEqual(d.path.first?.decision, 1)
                        }
                    }
                }
            }
        }
        XCTAssertEqual(seen, Set(WalletOutcome.allCases))
        var s = WalletState()
        XCTAssertThrowsError(try s.set("device", "android"))
        XCTAssertThrowsError(try s.set("library", "maybe"))
        XCTAssertThrowsError(try s.set("colour", "red"))
        for n in 1...7 { XCTAssertNotNil(WalletProvisioning.guide(n)) }
        XCTAssertNil(WalletProvisioning.guide(8))
    }
}

/// The approval and wallet scenario lines refuse what they cannot run, naming the line.
final class ApprovalLineTests: XCTestCase {
    func testMalformedLinesAreRefusedWithTheirLine() {
        for bad in ["phone alice approve abc", "phone alice approve 1000", "phone alice biometric maybe", "phone alice passcode sometimes",
                    "phone alice wallet device android", "phone alice wallet colour red", "unlock request bob alice front",
                    "unlock request bob from alice front type push", "unlock request bob from alice front ttl soon",
                    "unlock request bob from alice front message", "expect alice request maybe", "expect alice inbox -1",
                    "expect alice wallet fine", "expect alice notification colour red"] {
            XCTAssertThrowsError(try ScenarioScript(parsing: "clock set 2026-03-02T08:00:00Z\n" + bad, name: "bad"), bad) { error in
                XCTAssertEqual((error as? ScenarioError)?.line, 2, bad)
            }
        }
        XCTAssertNoThrow(try ScenarioScript(parsing: "unlock request bob from alice front type challenge ttl 2m message \"hi there\" no-device-credentials\nphone alice approve right\nexpect alice answer denied wrong_challenge", name: "good"))
    }
}
