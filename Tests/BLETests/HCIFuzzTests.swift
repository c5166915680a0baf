import LockBenchTestSupport
import XCTest

/// Short libFuzzer runs over what a controller and its peers send the BLE host (recipe:
/// docs/fuzzing.md): `hci` is the H4 stream through the decoder and the whole host in-process
/// (events, ACL/L2CAP reassembly, signaling, credit channels, SMP, ATT dispatch); `att` is the
/// ATT server on arbitrary PDUs, every response within the MTU.
final class HCIFuzzTests: XCTestCase {
    func testHCIStreamAndHostFuzzShortRun() throws { try runFuzzer("hci") }
    func testATTServerFuzzShortRun() throws { try runFuzzer("att") }
}
