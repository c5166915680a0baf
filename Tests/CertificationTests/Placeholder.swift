import XCTest
final class CertificationTestsPlaceholder: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }
