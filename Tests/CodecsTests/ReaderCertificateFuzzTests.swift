import LockBenchTestSupport
import XCTest

/// A short libFuzzer run over the reader certificate parsers (recipe: docs/fuzzing.md).
extension FuzzRecipeTests {
    func testReaderCertificateFuzzShortRun() throws { try runFuzzer("cert") }
}
