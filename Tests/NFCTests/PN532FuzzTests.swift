import LockBenchTestSupport
import XCTest

/// A short libFuzzer run over the virtual PN532 (recipe: docs/fuzzing.md): the host → chip byte
/// stream through the frame decoder in random chunks and every decoded command through the chip.
final class PN532FuzzTests: XCTestCase {
    func testPN532FramesAndCommandsFuzzShortRun() throws { try runFuzzer("pn532") }
}
