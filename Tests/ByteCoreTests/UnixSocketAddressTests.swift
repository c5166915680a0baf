import ByteCore
import Foundation
import XCTest

/// The one place a `sockaddr_un` is built: the kernel's path limit is checked, and a listener
/// bound through it accepts a client connected through it.
final class UnixSocketAddressTests: XCTestCase {
    func testPathLimits() {
        XCTAssertEqual(UnixSocketAddress.maximumPathBytes, 107, "Linux: sun_path is 108 bytes")
        XCTAssertNil(UnixSocketAddress(path: ""))
        XCTAssertNil(UnixSocketAddress(path: "/" + String(repeating: "a", count: 107)))
        XCTAssertNotNil(UnixSocketAddress(path: "/" + String(repeating: "a", count: 106)))
    }

    func testBindThenConnect() throws {
        let path = NSTemporaryDirectory() + "lb-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        defer { unlink(path) }
        let address = try XCTUnwrap(UnixSocketAddress(path: path))
        let listener = UnixSocketAddress.streamSocket()
        defer { close(listener) }
        XCTAssertEqual(address.bind(listener), 0, String(cString: strerror(errno)))
        XCTAssertEqual(listen(listener, 1), 0)
        let client = UnixSocketAddress.streamSocket()
        defer { close(client) }
        XCTAssertEqual(address.connect(client), 0, String(cString: strerror(errno)))
        let accepted = accept(listener, nil, nil)
        XCTAssertGreaterThanOrEqual(accepted, 0)
        close(accepted)
        // A path nobody listens on: connect fails with ENOENT, not a crash.
        let missing = try XCTUnwrap(UnixSocketAddress(path: path + ".absent"))
        let other = UnixSocketAddress.streamSocket()
        defer { close(other) }
        XCTAssertEqual(missing.connect(other), -1)
        XCTAssertEqual(errno, ENOENT)
    }
}
