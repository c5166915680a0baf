import ByteCore
import Codecs
import XCTest

final class TLVTests: XCTestCase {
    func testShortLengthRoundTrip() throws {
        let t = TLV(0x5C, [0x01, 0x00])
        XCTAssertEqual(t.encoded(), [0x5C, 0x02, 0x01, 0x00])
        XCTAssertEqual(try TLV(parsing: t.encoded()), t)
    }

    func testLengthForms81And82() throws {
        let v128 = [UInt8](repeating: 0xAB, count: 128)
        XCTAssertEqual(Array(TLV(0x53, v128).encoded().prefix(3)), [0x53, 0x81, 0x80])
        let v300 = [UInt8](repeating: 0xCD, count: 300)
        XCTAssertEqual(Array(TLV(0x53, v300).encoded().prefix(4)), [0x53, 0x82, 0x01, 0x2C])
        for v in [v128, v300, [UInt8](repeating: 1, count: 127), [UInt8](repeating: 2, count: 255), [UInt8](repeating: 3, count: 256)] {
            XCTAssertEqual(try TLV(parsing: TLV(0x53, v).encoded()).value, v)
        }
        // A long form for a short value is accepted on input (BER, not DER).
        XCTAssertEqual(try TLV(parsing: [0x53, 0x81, 0x01, 0x07]).value, [0x07])
    }

    func testMultiByteTag7F66() throws {
        let caps = TLV(0x7F66, children: [TLV(0x02, [0x00, 0xFF]), TLV(0x02, [0x01, 0x00])])
        XCTAssertEqual(caps.encoded().hex, "7f66080202" + "00ff" + "0202" + "0100")
        let parsed = try TLV(parsing: caps.encoded())
        XCTAssertEqual(parsed.tag, 0x7F66)
        XCTAssertTrue(parsed.isConstructed)
        XCTAssertEqual(try parsed.children().map(\.value), [[0x00, 0xFF], [0x01, 0x00]])
        // Three-byte tag.
        XCTAssertEqual(try TLV(parsing: [0x5F, 0x81, 0x01, 0x00]).tag, 0x5F8101)
    }

    func testNestedRoundTrip() throws {
        let fci = TLV(0x6F, children: [TLV(0x84, [0xA0, 0x00]), TLV(0xA5, children: [TLV(0x80, [0, 0]), TLV(0x5C, [1, 0])])])
        let parsed = try TLV(parsing: fci.encoded())
        XCTAssertEqual(parsed, fci)
        XCTAssertEqual(try parsed.children()[1].children().first(0x5C)?.value, [1, 0])
    }

    func testErrorsHaveStableCodes() {
        func code(_ bytes: [UInt8]) -> TLVError.Code? {
            do { _ = try TLV(parsing: bytes); return nil } catch { return error.code }
        }
        XCTAssertEqual(code([]), .truncatedTag)
        XCTAssertEqual(code([0x7F]), .truncatedTag)
        XCTAssertEqual(code([0x5F, 0x81, 0x81, 0x01, 0x00]), .tagTooLong)
        XCTAssertEqual(code([0x5C]), .truncatedValue)
        XCTAssertEqual(code([0x5C, 0x02, 0x01]), .truncatedValue)
        XCTAssertEqual(code([0x5C, 0x81]), .truncatedValue)
        XCTAssertEqual(code([0x5C, 0x82, 0x01]), .truncatedValue)
        XCTAssertEqual(code([0x5C, 0x80, 0x00, 0x00]), .unsupportedLength)
        XCTAssertEqual(code([0x5C, 0x83, 0x00, 0x00, 0x01, 0x00]), .unsupportedLength)
        XCTAssertEqual(code([0x5C, 0x01, 0x00, 0xFF]), .leftoverBytes)
        // A constructed value whose inside is not well framed.
        XCTAssertEqual(code([0xA5, 0x02, 0x5C, 0x05]), .truncatedValue)
    }

    func testDepthLimit() {
        var t = TLV(0x80, [0x01])
        for _ in 0..<TLV.defaultMaxDepth { t = TLV(0xA5, children: [t]) }
        XCTAssertThrowsError(try TLV(parsing: t.encoded())) { XCTAssertEqual(($0 as? TLVError)?.code, .tooDeep) }
        XCTAssertNoThrow(try TLV(parsing: t.encoded(), maxDepth: TLV.defaultMaxDepth + 1))
    }

    func testErrorOffsetPointsIntoNestedValue() {
        XCTAssertThrowsError(try TLV(parsing: [0x6F, 0x04, 0xA5, 0x02, 0x5C, 0x05])) {
            let e = $0 as! TLVError
            XCTAssertEqual(e.code, .truncatedValue)
            XCTAssertEqual(e.offset, 6)
        }
    }

    func testParseAllAndRequire() throws {
        let list = try TLV.parseAll([0x41, 0x01, 0x01, 0x42, 0x01, 0x02])
        XCTAssertEqual(list.map(\.tag), [0x41, 0x42])
        XCTAssertEqual(try list.require(0x42, length: 1), [0x02])
        XCTAssertThrowsError(try list.require(0x43)) { XCTAssertEqual(($0 as? TLVError)?.code, .missingTag) }
        XCTAssertThrowsError(try list.require(0x41, length: 2)) { XCTAssertEqual(($0 as? TLVError)?.code, .badLength) }
        XCTAssertEqual(try TLV.parseAll([UInt8]()), [])
    }

    /// Property: random trees encode and parse back to themselves.
    func testRandomTreesRoundTrip() throws {
        var rng = SystemRandomNumberGenerator()
        func randomTLV(depth: Int) -> TLV {
            let primitiveTags: [UInt32] = [0x41, 0x5C, 0x86, 0x9E, 0x5F20, 0x9F8101]
            let constructedTags: [UInt32] = [0x6F, 0xA5, 0x7F66, 0xBA]
            if depth < 4 && Bool.random(using: &rng) {
                let n = Int.random(in: 0...4, using: &rng)
                return TLV(constructedTags.randomElement(using: &rng)!, children: (0..<n).map { _ in randomTLV(depth: depth + 1) })
            }
            let len = [0, 1, 127, 128, 200, 255, 256, 700].randomElement(using: &rng)!
            return TLV(primitiveTags.randomElement(using: &rng)!, (0..<len).map { _ in UInt8.random(in: 0...255, using: &rng) })
        }
        for _ in 0..<300 {
            let t = randomTLV(depth: 0)
            XCTAssertEqual(try TLV(parsing: t.encoded()), t)
        }
    }

    /// Every prefix of a valid encoding fails cleanly (never traps), with a truncation code.
    func testEveryPrefixFailsCleanly() {
        let t = TLV(0x6F, children: [TLV(0x84, [1, 2, 3]), TLV(0xA5, children: [TLV(0x7F66, children: [TLV(0x02, [0, 1])])])]).encoded()
        for n in 0..<t.count {
            XCTAssertThrowsError(try TLV(parsing: t.prefix(n))) {
                let c = ($0 as! TLVError).code
                XCTAssertTrue(c == .truncatedTag || c == .truncatedValue, "\(n): \(c)")
            }
        }
    }
}
