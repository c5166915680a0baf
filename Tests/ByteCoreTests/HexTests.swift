import XCTest
import Foundation
import ByteCore

final class HexTests: XCTestCase {
    func testRoundTrip() {
        let bytes: [UInt8] = [0x00, 0xA4, 0x04, 0xFF]
        XCTAssertEqual(bytes.hex, "00a404ff")
        XCTAssertEqual(Hex.decode("00 A4:04ff"), bytes)
    }

    func testEveryByteAndEverySequenceKind() {
        let all = (0...255).map(UInt8.init)
        let text = Hex.encode(all)
        XCTAssertEqual(text, all.map { String(format: "%02x", $0) }.joined())
        XCTAssertEqual(Hex.decode(text), all)
        XCTAssertEqual(Hex.encode([UInt8]()), "")
        XCTAssertEqual(Hex.encode(all[254...]), "feff")                    // slice
        XCTAssertEqual(Hex.encode(all.lazy.filter { $0 < 3 }), "000102")   // no contiguous storage
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
