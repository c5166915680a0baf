import LockBenchTestSupport
import XCTest

final class VersionEndToEndTests: XCTestCase {
    func testVersionNamesLockBenchAndRuntimeLibNFC() throws {
        let result = try LockBenchProcess.run(["--version"])
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.stdout.hasPrefix("LockBench "), result.stdout)
        XCTAssertTrue(result.stdout.contains("libnfc 1."), result.stdout)
    }

    func testUnknownFlagIsAUsageError() throws {
        let result = try LockBenchProcess.run(["--no-such-flag"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains("--no-such-flag"), result.stderr)
    }
}
