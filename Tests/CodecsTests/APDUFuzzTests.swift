import LockBenchTestSupport
import XCTest

/// Short libFuzzer runs over the TLV and APDU parsers (recipe: docs/fuzzing.md).
extension FuzzRecipeTests {
    func testTLVParserFuzzShortRun() throws { try runFuzzer("tlv") }
    func testAPDUParsersFuzzShortRun() throws { try runFuzzer("apdu") }
}
