import XCTest
import ByteCore

final class HexTests: XCTestCase {
    func testRoundTrip() {
        let bytes: [UInt8] = [0x00, 0xA4, 0x04, 0xFF]
        XCTAssertEqual(bytes.hex, "00a404ff")
        XCTAssertEqual(Hex.decode("00 A4:04ff"), bytes)
    }

    func testRejectsOddAndNonHex() {
        XCTAssertNil(Hex.decode("abc"))
        XCTAssertNil(Hex.decode("zz"))
    }

    func testReaderNeverTrapsOnShortInput() {
        var r = ByteReader([0x01, 0x02, 0x03])
        XCTAssertEqual(r.readUInt16BE(), 0x0102)
        XCTAssertNil(r.readUInt16BE())
        XCTAssertEqual(r.readUInt8(), 0x03)
        XCTAssertNil(r.readUInt8())
        XCTAssertTrue(r.isAtEnd)
    }
}
