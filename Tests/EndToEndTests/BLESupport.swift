import BLE
import Foundation
import LockBenchTestSupport
import XCTest

/// `lockbench demo` in a temporary directory, its lock running (`lock run --ble … --json`) on the
/// first of two Bumble controllers and advertising; phones use the second.
struct DemoLockOnBLE {
    let directory: URL
    let config: String
    let controllers: VirtualControllers
    let lock: InteractiveProcess

    /// `--key`, `--document` and `--lock-config` for the demo's credential `name` (carol, bob, alice).
    func credential(_ name: String) -> [String] {
        ["--key", directory.appendingPathComponent("\(name).key.pem").path,
         "--document", directory.appendingPathComponent("\(name).access.cbor").path, "--lock-config", config]
    }
}

extension XCTestCase {
    /// The demo site's lock on BLE, terminated at teardown.
    func startDemoLockOnBLE() throws -> DemoLockOnBLE {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        XCTAssertEqual(try LockBenchProcess.run(["demo", "--directory", dir.path]).status, 0)
        let controllers = try bumbleControllers()
        let config = dir.appendingPathComponent("lock.json").path
        let lock = try InteractiveProcess(["lock", "run", "--config", config, "--ble", controllers.spec(0), "--json"])
        addTeardownBlock { lock.terminate() }
        _ = try lock.waitForLine(containing: "advertising as")
        return DemoLockOnBLE(directory: dir, config: config, controllers: controllers, lock: lock)
    }
}
