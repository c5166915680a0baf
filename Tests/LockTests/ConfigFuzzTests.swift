import LockBenchTestSupport
import XCTest

/// The lock configuration file's fuzz target (Tests/Fuzz/config.swift) for a short while:
/// `LockConfiguration.load` on mutated files never traps, and what loads is in bounds and round-trips.
final class ConfigFuzzTests: XCTestCase {
    func testLockConfigurationFuzzShortRun() throws { try runFuzzer("config") }
}
