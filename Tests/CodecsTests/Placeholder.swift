import XCTest
final class CodecsTestsPlaceholder: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }
