import XCTest
final class NFCTestsPlaceholder: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }
