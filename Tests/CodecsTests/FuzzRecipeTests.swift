import LockBenchTestSupport
import XCTest

/// Runs the libFuzzer recipe of docs/fuzzing.md for a short while on each codec target, as part of
/// `swift test` (`runFuzzer`, from LockBenchTestSupport): 5 000 inputs from the seed corpus each.
final class FuzzRecipeTests: XCTestCase {
    func testCBORDecoderFuzzShortRun() throws { try runFuzzer("cbor") }
    func testCOSEParsersFuzzShortRun() throws { try runFuzzer("cose") }
    func testIssuerCertificateReaderFuzzShortRun() throws { try runFuzzer("x509") }
    /// Access and revocation documents through the parsers and the whole decision engine
    /// (module OfflineUnlock; needs its build products, which `swift test` builds).
    func testDocumentsAndEngineFuzzShortRun() throws { try runFuzzer("document") }
}
