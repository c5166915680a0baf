import ByteCore
import Foundation
import XCTest

final class TransactionIDTests: XCTestCase {
    func testHexAndJSONRoundTrip() throws {
        let id = TransactionID([0x2E, 0x75, 0x8D, 0x6A])
        XCTAssertEqual(id.hex, "2e758d6a")
        XCTAssertEqual("\(id)", "2e758d6a")
        XCTAssertEqual(TransactionID(hex: "2E758D6A"), id)
        let json = try JSONEncoder().encode([id])
        XCTAssertEqual(String(decoding: json, as: UTF8.self), #"["2e758d6a"]"#)
        XCTAssertEqual(try JSONDecoder().decode([TransactionID].self, from: json), [id])
        XCTAssertNil(TransactionID(hex: "zz"))
        XCTAssertThrowsError(try JSONDecoder().decode([TransactionID].self, from: Data(#"["not hex"]"#.utf8)))
    }
}
