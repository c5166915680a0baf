import BLE
import Foundation
import XCTest

extension XCTestCase {
    /// `count` Bumble controllers on one link (VirtualControllers; more than two through
    /// Tests/BLETests/python/controllers.py), stopped at teardown; not installed or not starting
    /// is a MissingTool failure.
    public func bumbleControllers(count: Int = 2) throws -> VirtualControllers {
        let script = count > 2 ? Repository.url("Tests/BLETests/python/controllers.py").path : nil
        return try controllers { () throws(BLEError) in try VirtualControllers.bumble(count: count, script: script) }
    }

    /// Android's RootCanal (`pip install rootcanal==1.10.0`): one controller per TCP connection on
    /// its HCI port, LE Enhanced Connection Complete, public addresses, 27-byte ACL fragments and
    /// real connection intervals; stopped at teardown.
    public func rootCanal() throws -> VirtualControllers {
        try controllers { () throws(BLEError) in try VirtualControllers.rootCanal() }
    }

    private func controllers(_ start: () throws(BLEError) -> VirtualControllers) throws -> VirtualControllers {
        do {
            let controllers = try start()
            addTeardownBlock { controllers.stop() }
            return controllers
        } catch {
            throw MissingTool("\(error)")
        }
    }
}
