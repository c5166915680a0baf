import XCTest
final class OfflineUnlockTestsPlaceholder: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }
