import XCTest
final class AccessProtocolTestsPlaceholder: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }
