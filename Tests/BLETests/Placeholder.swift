import XCTest
final class BLETestsPlaceholder: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }
