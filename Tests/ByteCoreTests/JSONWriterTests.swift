import ByteCore
import Foundation
import XCTest

final class JSONWriterTests: XCTestCase {
    func testContainersPutCommasBetweenMembersAndElementsOnly() {
        var w = JSONWriter()
        w.beginObject()
        w.key("a"); w.beginArray(); w.integer(1); w.beginObject(); w.endObject(); w.beginArray(); w.endArray(); w.null(); w.endArray()
        w.key("b"); w.beginObject(); w.key("c"); w.bool(true); w.key("d"); w.bool(false); w.endObject()
        w.key("e"); w.strings(["x", "y"])
        w.key("f"); w.raw(Array("{\"g\":[]}".utf8))
        w.endObject()
        XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), #"{"a":[1,{},[],null],"b":{"c":true,"d":false},"e":["x","y"],"f":{"g":[]}}"#)
    }

    func testStringsEscapeQuotesBackslashesAndControlCharactersAndReadBackUnchanged() throws {
        let text = "quote \" backslash \\ slash / newline \n return \r tab \t nul \u{0} unit \u{1F} é 鍵 🔑"
        var w = JSONWriter()
        w.beginArray(); w.string(text); w.endArray()
        XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self),
                       #"["quote \" backslash \\ slash / newline \n return \r tab \t nul \u0000 unit \u001f é 鍵 🔑"]"#)
        XCTAssertEqual(try JSONDecoder().decode([String].self, from: Data(w.bytes)), [text])
    }

    func testNumbersReadBackExactlyAndNonFiniteOnesAreRefused() throws {
        let doubles: [Double] = [0, -0.5, 0.1, 817_313_882.168_362_1, 1e300, -2.2250738585072014e-308, 253_402_300_799]
        var w = JSONWriter()
        w.beginArray()
        for d in doubles { try w.number(d) }
        w.endArray()
        XCTAssertEqual(try JSONDecoder().decode([Double].self, from: Data(w.bytes)), doubles)

        var i = JSONWriter()
        i.beginArray(); i.integer(UInt64.max); i.integer(Int64.min); i.integer(UInt16(7)); i.endArray()
        XCTAssertEqual(String(decoding: i.bytes, as: UTF8.self), "[18446744073709551615,-9223372036854775808,7]")

        for bad in [Double.nan, .infinity, -.infinity] {
            var n = JSONWriter()
            n.beginArray()
            XCTAssertThrowsError(try n.number(bad)) { XCTAssertTrue("\($0)".contains("cannot be written as a JSON number")) }
        }
    }
}
