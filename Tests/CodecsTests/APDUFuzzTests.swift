import XCTest

/// Short libFuzzer runs over the TLV and APDU parsers (recipe: docs/fuzzing.md).
final class APDUFuzzTests: XCTestCase {
    private let recipe = FuzzRecipeTests()

    func testTLVFuzzShortRun() throws { try recipe.runFuzzer("tlv") }
    func testAPDUFuzzShortRun() throws { try recipe.runFuzzer("apdu") }
}
