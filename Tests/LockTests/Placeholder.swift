import XCTest
final class LockTestsPlaceholder: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }
