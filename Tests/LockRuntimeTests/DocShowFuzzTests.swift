import LockBenchTestSupport
import XCTest

/// `doc show`'s rendering (`DocumentJSON`, Tests/Fuzz/docshow.swift) for a short while: any
/// document renders as text and JSON without trapping.
final class DocShowFuzzTests: XCTestCase {
    func testDocShowRenderingFuzzShortRun() throws { try runFuzzer("docshow") }
}
