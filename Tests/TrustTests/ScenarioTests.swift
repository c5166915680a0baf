import Foundation
import Scenario
import XCTest

/// Every shipped scenario passes; a wrong expectation fails at its line; a bad line is a parse
/// error with its line number.
final class ScenarioTests: XCTestCase {
    static var scenarioDirectory: URL { HTTPTests.repositoryRoot.appendingPathComponent("scenarios") }

    func shipped() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: Self.scenarioDirectory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "scenario" }.sorted { $0.path < $1.path }
    }

    func testAtLeastNineScenariosShip() throws {
        XCTAssertGreaterThanOrEqual(try shipped().count, 9)
    }

    func testEveryShippedScenarioPasses() async throws {
        let runner = ScenarioRunner()
        for url in try shipped() {
            let script = try ScenarioScript(parsing: try String(contentsOf: url, encoding: .utf8), name: url.lastPathComponent)
            let result = await runner.run(script)
            XCTAssertEqual(result.status, .passed, "\(url.lastPathComponent):\(result.line ?? 0): \(result.command ?? "") — \(result.message ?? "")")
            XCTAssertEqual(result.steps, script.steps.count)
        }
    }

    func testAWrongExpectationFailsAtItsLine() async throws {
        let text = """
            clock set 2026-03-02T08:00:00Z
            lock front
            phone alice user alice
            grant add g1 alice front
            phone alice login
            phone alice offline
            clock advance 9h
            tap alice front expect granted
            """
        let result = await ScenarioRunner().run(try ScenarioScript(parsing: text, name: "wrong"))
        XCTAssertEqual(result.status, .failed)
        XCTAssertEqual(result.line, 8)
        XCTAssertEqual(result.scenarioSeconds, 9 * 3600)
        XCTAssertTrue(result.message?.contains("denied expired") ?? false, result.message ?? "")
        let xml = JUnitReport.xml([result])
        XCTAssertTrue(xml.contains("failures=\"1\""))
        XCTAssertTrue(xml.contains("line 8"))
    }

    func testExpectedDenialThatIsGrantedFails() async throws {
        let text = """
            lock front
            phone alice user alice
            grant add g1 alice front
            phone alice login
            tap alice front expect denied revoked
            """
        let result = await ScenarioRunner().run(try ScenarioScript(parsing: text, name: "granted"))
        XCTAssertEqual(result.status, .failed)
        XCTAssertEqual(result.line, 5)
        XCTAssertEqual(result.message, "expected denied revoked, the lock granted")
    }

    func testParseErrorsNameTheLine() {
        for (text, line, words) in [("lock a\nfly away", 2, "unknown command"),
                                    ("tap alice front expect maybe", 1, "granted or denied"),
                                    ("tap alice front expect denied sleepy", 1, "unknown deny reason"),
                                    ("clock advance soon", 1, "not a duration"),
                                    ("grant revoke g1", 1, "usage"),
                                    ("phone a user b poll-every", 1, "usage"),
                                    ("lock \"front", 1, "quote")] {
            XCTAssertThrowsError(try ScenarioScript(parsing: text, name: "bad")) { error in
                let e = error as! ScenarioError
                XCTAssertEqual(e.line, line, text)
                XCTAssertTrue(e.message.contains(words), "\(text): \(e.message)")
            }
        }
    }

    func testUnknownActorsAndRefusalsAreFailures() async throws {
        let r1 = await ScenarioRunner().run(try ScenarioScript(parsing: "lock front\ntap ghost front expect granted", name: "ghost"))
        XCTAssertEqual(r1.status, .failed)
        XCTAssertTrue(r1.message?.contains("no phone \"ghost\"") ?? false)
        let r2 = await ScenarioRunner().run(try ScenarioScript(parsing: """
            lock front
            phone alice user alice
            expect refused credential_deactivated credential resume alice
            """, name: "refused"))
        XCTAssertEqual(r2.status, .failed, "resume of an active credential is a conflict, not credential_deactivated")
        XCTAssertTrue(r2.message?.contains("conflict") ?? false, r2.message ?? "")
    }
}
