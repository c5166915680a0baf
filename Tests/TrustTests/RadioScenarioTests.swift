import Foundation
import LockBenchTestSupport
import Scenario
import XCTest

/// The 9-hour offline scenario end to end over each real transport: the socket (as the suite runs
/// every scenario), the virtual PN532 driven by the real libnfc, and BLE between two Bumble
/// virtual controllers. A missing tool fails the test (it names the tool), never skips it.
final class RadioScenarioTests: XCTestCase {
    func script() throws -> ScenarioScript {
        let url = ScenarioTests.scenarioDirectory.appendingPathComponent("offline-9h.scenario")
        return try ScenarioScript(parsing: try String(contentsOf: url, encoding: .utf8), name: "offline-9h")
    }

    func run(_ transport: TapTransport) async throws {
        let result = await ScenarioRunner(transport: transport).run(try script())
        XCTAssertEqual(result.status, .passed, "\(transport.name): line \(result.line ?? 0): \(result.command ?? "") — \(result.message ?? "")")
        XCTAssertEqual(result.scenarioSeconds, 9 * 3600, accuracy: 1)
    }

    func testNineHoursOverTheSocket() async throws { try await run(SocketTap()) }

    func testNineHoursOverTheVirtualPN532() async throws { try await run(RadioTap(.pn532)) }

    /// The phone radio `vpicc` from the registry, the lock on pcscd's `Virtual PCD 00 00`.
    func testNineHoursOverPCSCThroughPcscd() async throws {
        try PCSCDaemon.ensureRunning(offering: "Virtual PCD 00 00")
        try await run(RadioTap(.vpicc))
    }

    func testNineHoursOverBLEOnBumble() async throws { try await run(RadioTap(.ble)) }
}
