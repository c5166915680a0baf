import LockBenchTestSupport
import XCTest

/// The reader-session fuzz target (Tests/Fuzz/session.swift) for a short while: against a phone
/// whose every answer is fuzz input, each session ends within its `TransactionLimits`.
final class SessionFuzzTests: XCTestCase {
    func testReaderSessionWithinTransactionBoundsFuzzShortRun() throws { try runFuzzer("session") }
}
