import Foundation
import Scenario
import XCTest

/// Issue 20 §1: signed times are whole seconds, and a lock steps up for a phone's newer documents
/// only when they are signed strictly later than what it holds. Changes made in one second —
/// revocations, resumes, re-grants, schedule changes — must each reach the lock on the first tap
/// of a phone that carries them. Real service, real locks, real taps (`ScenarioRunner`); the
/// virtual clock does not move, so every change of a run is inside one second.
final class SameSecondChangesTests: XCTestCase {
    func run(_ text: String, name: String) async throws {
        let script = try ScenarioScript(parsing: text, name: name)
        let result = await ScenarioRunner().run(script)
        XCTAssertEqual(result.status, .passed, "\(name):\(result.line ?? 0): \(result.command ?? "") — \(result.message ?? "")")
        XCTAssertEqual(result.steps, script.steps.count, name)
        XCTAssertLessThan(result.scenarioSeconds, 1, "\(name): every change inside one second")
    }

    static let site = """
        clock set 2026-03-02T08:00:00Z
        lock front
        phone alice user alice
        phone bob user bob
        grant add ga alice front
        grant add gb bob front
        phone alice login
        phone bob login
        tap alice front expect granted
        tap bob front expect granted

        """

    /// Suspend and resume alternate `n` times: each suspension reaches the lock through bob (who
    /// polls when told) and alice is denied; each resume reaches it through alice's own phone.
    func testSuspendAndResumeInOneSecondEachReachTheLock() async throws {
        for n in [2, 10, 100] {
            var text = Self.site
            for i in 1...n {
                if i % 2 == 1 {
                    text += "credential suspend alice\ntap bob front expect granted\ntap alice front expect denied revoked\n"
                } else {
                    text += "credential resume alice\ntap alice front expect granted\n"
                }
            }
            try await run(text, name: "suspend-resume-\(n)")
        }
    }

    /// Revocation lists 1…n in one second, each carried to the lock by bob: list i revokes user
    /// i's grant, and user i (offline, their document cached by the lock) is denied at once.
    func testRevocationsInOneSecondEachReachTheLockThroughAnotherPhone() async throws {
        for n in [2, 10, 100] {
            var text = Self.site
            for i in 1...n {
                text += "phone u\(i) user u\(i)\ngrant add g\(i) u\(i) front\nphone u\(i) login\ntap u\(i) front expect granted\nphone u\(i) offline\n"
            }
            for i in 1...n {
                text += "grant revoke g\(i) reason \"change \(i)\"\nexpect bob revocation \(i)\ntap bob front expect granted\ntap u\(i) front expect denied revoked\n"
                if i < n { text += "tap u\(i + 1) front expect granted\n" }
            }
            try await run(text, name: "revocations-\(n)")
        }
    }

    /// A grant revoked and re-granted in the same second: the re-grant reaches the lock on alice's
    /// first tap, not when the old document expires.
    func testReGrantInTheSameSecondAsTheRevocationIsGrantedAtOnce() async throws {
        for n in [2, 10] {
            var text = Self.site
            var grant = "ga"
            for i in 1...n {
                text += "grant revoke \(grant) reason \"round \(i)\"\ntap alice front expect denied revoked\n"
                grant = "ga\(i)"
                text += "grant add \(grant) alice front\ntap alice front expect granted\n"
            }
            try await run(text, name: "regrant-\(n)")
        }
    }

    /// Schedule changes in one second: the lock applies the last one on the next tap.
    func testScheduleChangesInOneSecondAreEachApplied() async throws {
        // 2026-03-02 is a Monday, 08:00 UTC.
        var text = Self.site
        for i in 1...10 {
            if i % 2 == 1 {
                text += "grant modify ga schedule \"sat-sun 00:00-23:59\"\ntap alice front expect denied outside_schedule\n"
            } else {
                text += "grant modify ga schedule \"mon-fri 07:00-19:00\"\ntap alice front expect granted\n"
            }
        }
        try await run(text, name: "schedules-10")
    }
}
