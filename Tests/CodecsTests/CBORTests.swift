import ByteCore
import Codecs
import Foundation
import XCTest


final class CBORVectorTests: XCTestCase {
    /// RFC 8949 Appendix A examples whose encoding is also the deterministic one.
    func testRFC8949AppendixAEncodings() throws {
        let vectors: [(CBOR, String)] = [
            (0, "00"), (1, "01"), (10, "0a"), (23, "17"), (24, "1818"), (25, "1819"), (100, "1864"),
            (1000, "1903e8"), (1_000_000, "1a000f4240"), (.unsigned(1_000_000_000_000), "1b000000e8d4a51000"),
            (.unsigned(UInt64.max), "1bffffffffffffffff"), (.negative(UInt64.max), "3bffffffffffffffff"),
            (-1, "20"), (-10, "29"), (-100, "3863"), (-1000, "3903e7"),
            (.float(0.0), "f90000"), (.float(-0.0), "f98000"), (.float(1.0), "f93c00"), (.float(1.1), "fb3ff199999999999a"),
            (.float(1.5), "f93e00"), (.float(65504.0), "f97bff"), (.float(100000.0), "fa47c35000"),
            (.float(3.4028234663852886e+38), "fa7f7fffff"), (.float(1.0e+300), "fb7e37e43c8800759c"),
            (.float(5.960464477539063e-8), "f90001"), (.float(0.00006103515625), "f90400"), (.float(-4.0), "f9c400"),
            (.float(-4.1), "fbc010666666666666"), (.float(.infinity), "f97c00"), (.float(.nan), "f97e00"),
            (.float(-.infinity), "f9fc00"),
            (false, "f4"), (true, "f5"), (nil, "f6"), (.undefined, "f7"), (.simple(16), "f0"), (.simple(255), "f8ff"),
            (.tagged(0, "2013-03-21T20:04:00Z"), "c074323031332d30332d32315432303a30343a30305a"),
            (.tagged(1, 1_363_896_240), "c11a514b67b0"), (.tagged(1, .float(1363896240.5)), "c1fb41d452d9ec200000"),
            (.tagged(23, .bytes([1, 2, 3, 4])), "d74401020304"),
            (.tagged(24, .bytes(Hex.decode("6449455446")!)), "d818456449455446"),
            (.tagged(32, "http://www.example.com"), "d82076687474703a2f2f7777772e6578616d706c652e636f6d"),
            (.bytes([]), "40"), (.bytes([1, 2, 3, 4]), "4401020304"),
            ("", "60"), ("a", "6161"), ("IETF", "6449455446"), ("\"\\", "62225c"), ("\u{00fc}", "62c3bc"),
            ("\u{6c34}", "63e6b0b4"), ("\u{10151}", "64f0908591"),
            ([], "80"), ([1, 2, 3], "83010203"), ([1, [2, 3], [4, 5]], "8301820203820405"),
            (.array((1...25).map { .int($0) }), "98190102030405060708090a0b0c0d0e0f101112131415161718181819"),
            ([:], "a0"), ([1: 2, 3: 4], "a201020304"), (["a": 1, "b": [2, 3]], "a26161016162820203"),
            (["a", ["b": "c"]], "826161a161626163"),
            (["a": "A", "b": "B", "c": "C", "d": "D", "e": "E"], "a56161614161626142616361436164614461656145"),
        ]
        for (value, hex) in vectors {
            XCTAssertEqual(value.encoded().hex, hex, "\(value.diagnostic)")
            let decoded = try CBOR(parsing: Hex.decode(hex)!, options: .strict)
            if case .float(let d) = value, d.isNaN {
                guard case .float(let e) = decoded, e.isNaN else { return XCTFail("NaN did not decode as NaN") }
            } else {
                XCTAssertEqual(decoded, value, hex)
            }
        }
    }

    /// Non-shortest float forms from Appendix A decode to the same value in lenient mode.
    func testLongerFloatFormsDecodeLeniently() throws {
        XCTAssertEqual(try CBOR(parsing: Hex.decode("fa7f800000")!), .float(.infinity))
        XCTAssertEqual(try CBOR(parsing: Hex.decode("fb7ff0000000000000")!), .float(.infinity))
        XCTAssertEqual(try CBOR(parsing: Hex.decode("fa3fc00000")!), .float(1.5))
        XCTAssertThrowsCode(.nonShortestEncoding, try CBOR(parsing: Hex.decode("fa3fc00000")!, options: .strict))
    }

    /// §4.2.1: keys sort by their encodings: 10, 100, -1, "z", "aa", [100], [-1], false.
    func testMapKeysSortBytewiseByEncoding() {
        let m: CBOR = [false: 8, [-1]: 7, [100]: 6, "aa": 5, "z": 4, -1: 3, 100: 2, 10: 1]
        XCTAssertEqual(m.encoded().hex, "a8" + "0a01" + "186402" + "2003" + "617a04" + "62616105" + "81186406" + "812007" + "f408")
    }

    func testMapLiteralOrderDoesNotMatter() {
        let a: CBOR = ["b": 1, "a": 2, 3: 4]
        let b: CBOR = [3: 4, "a": 2, "b": 1]
        XCTAssertEqual(a.encoded(), b.encoded())
    }
}

final class CBORErrorTests: XCTestCase {
    func check(_ hex: String, _ code: CBORError.Code, options: CBORDecoder.Options = .init(),
               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsCode(code, try CBOR(parsing: Hex.decode(hex)!, options: options), file: file, line: line)
    }

    func testPreciseErrors() {
        check("", .truncated)
        check("18", .truncated)
        check("1901", .truncated)
        check("62 61", .truncated)
        check("82 01", .truncated)
        check("0000", .trailingBytes)
        check("1c", .reservedAdditionalInfo)
        check("fe", .reservedAdditionalInfo)
        check("5f 41 00 ff", .indefiniteLength)
        check("9f ff", .indefiniteLength)
        check("bf ff", .indefiniteLength)
        check("ff", .unexpectedBreak)
        check("62 c3 28", .invalidUTF8)
        check("a2 01 02 01 03", .duplicateMapKey)
        check("a2 01 02 01 03", .duplicateMapKey, options: .strict)
        // Two NaN keys (any payload) re-encode as the same f97e00 key: a repeat, not two keys
        // (fuzzer finding: the lenient decoder let them through and the strict one refused the
        // re-encoding). 0.0 and -0.0 encode differently and stay two keys.
        check("a2 f9 7e00 00 fa 7fc00001 01", .duplicateMapKey)
        check("a2 f9 7e00 00 f9 7e00 01", .duplicateMapKey)
        XCTAssertEqual(try CBOR(parsing: Hex.decode("a2f9000000f9800001")!).encoded().count, 9)
        check("f8 18", .invalidSimpleValue)
        check("c0 01", .invalidTagContent)
        check("c0 63 616263", .invalidTagContent)
        check("c1 61 61", .invalidTagContent)
        check("d8 18 01", .invalidTagContent)
        check("9b 00000000ffffffff", .truncated)
        check("bb 00000000ffffffff", .truncated)
        check("5b ffffffffffffffff", .lengthTooLarge)
        check("7a 7fffffff", .truncated)
        check("18 01", .nonShortestEncoding, options: .strict)
        check("39 0001", .nonShortestEncoding, options: .strict)
        check("a2 02 00 01 00", .unsortedMapKeys, options: .strict)
    }

    func testLenientModeAcceptsNonDeterministicForms() throws {
        XCTAssertEqual(try CBOR(parsing: Hex.decode("1801")!), 1)
        XCTAssertEqual(try CBOR(parsing: Hex.decode("a2020001 00")!), [1: 0, 2: 0])
    }

    func testDepthLimit() throws {
        let deep = [UInt8](repeating: 0x81, count: 40) + [0x00]
        XCTAssertThrowsCode(.depthExceeded, try CBOR(parsing: deep))
        XCTAssertNoThrow(try CBOR(parsing: deep, options: .init(maxDepth: 40)))
        let bomb = [UInt8](repeating: 0x81, count: 100_000) + [0x00]
        XCTAssertThrowsCode(.depthExceeded, try CBOR(parsing: bomb))
    }

    func testErrorCarriesOffsetAndStableCode() {
        do {
            _ = try CBOR(parsing: Hex.decode("83 01 02 1c")!)
            XCTFail("expected an error")
        } catch {
            XCTAssertEqual(error.code.rawValue, "cbor.reserved_additional_info")
            XCTAssertEqual(error.offset, 3)
            XCTAssertTrue(error.description.contains("at byte 3"), error.description)
        }
    }
}

final class CBORTagTests: XCTestCase {
    func testTag0And1Dates() throws {
        let date = Date(timeIntervalSince1970: 1_363_896_240)
        XCTAssertEqual(CBOR.dateTime(date).encoded().hex, "c074323031332d30332d32315432303a30343a30305a")
        XCTAssertEqual(CBOR.epoch(date).encoded().hex, "c11a514b67b0")
        XCTAssertEqual(try CBOR(parsing: CBOR.dateTime(date).encoded()).dateValue, date)
        XCTAssertEqual(try CBOR(parsing: Hex.decode("c1fb41d452d9ec200000")!).dateValue, Date(timeIntervalSince1970: 1363896240.5))
        XCTAssertEqual(RFC3339.parse("2013-03-21T21:04:00+01:00"), date)
        XCTAssertNil(RFC3339.parse("2013-02-30T00:00:00Z"))
        XCTAssertEqual(RFC3339.formatEpoch(-1), "1969-12-31T23:59:59Z")
        XCTAssertEqual(RFC3339.formatEpoch(951_782_400), "2000-02-29T00:00:00Z")
    }

    func testTag24EmbedsAndUnwraps() throws {
        let inner: CBOR = ["1": "1.0", 2: [1, 2]]
        let wrapped = CBOR.embedded(inner)
        XCTAssertEqual(wrapped.encoded().prefix(2), [0xD8, 0x18])
        XCTAssertEqual(wrapped.embeddedBytes, inner.encoded())
        XCTAssertEqual(try CBOR(parsing: wrapped.encoded()).embeddedItem(), inner)
        XCTAssertThrowsCode(.unexpectedType, try CBOR.text("x").embeddedItem())
        XCTAssertThrowsCode(.trailingBytes, try CBOR.embedded(bytes: [0x01, 0x02]).embeddedItem())
    }

    func testDiagnosticNotation() {
        let v: CBOR = ["a": [1, -2, .bytes([0xAB])], 1: .tagged(24, .bytes([0]))]
        XCTAssertEqual(v.diagnostic, "{1: 24(h'00'), \"a\": [1, -2, h'ab']}")
    }
}

final class CBORPropertyTests: XCTestCase {
    static func randomValue(_ rng: inout SplitMix64, depth: Int = 0) -> CBOR {
        let kinds = depth >= 4 ? 9 : 12
        switch Int.random(in: 0..<kinds, using: &rng) {
        case 0:
            let widths: [UInt64] = [23, 0xFF, 0xFFFF, 0xFFFF_FFFF, .max]
            return .unsigned(UInt64.random(in: 0...widths.randomElement(using: &rng)!, using: &rng))
        case 1: return .negative(UInt64.random(in: 0...UInt64.max >> UInt64.random(in: 0...63, using: &rng), using: &rng))
        case 2: return .bytes((0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        case 3:
            let scalars = (0..<Int.random(in: 0...12, using: &rng)).map { _ -> Character in
                let pool: [UInt32] = [0x41, 0x7A, 0xE9, 0x6C34, 0x1F600, 0x10151]
                return Character(Unicode.Scalar(pool.randomElement(using: &rng)! + UInt32.random(in: 0...3, using: &rng))!)
            }
            return .text(String(scalars))
        case 4: return [.bool(true), .bool(false), .null, .undefined, .simple(UInt8.random(in: 0...19, using: &rng)),
                        .simple(UInt8.random(in: 32...255, using: &rng))].randomElement(using: &rng)!
        case 5:
            let pool: [Double] = [0, -0.0, 1.5, -4.1, 65504, 1e300, 5.960464477539063e-8, .infinity, 100000, 0.1]
            return .float(pool.randomElement(using: &rng)! * (Bool.random(using: &rng) ? 1 : -1))
        case 6: return .dateTime(Date(timeIntervalSince1970: Double(Int64.random(in: 0...4_000_000_000, using: &rng))))
        case 7: return .epoch(Date(timeIntervalSince1970: Double(Int64.random(in: -1_000_000...4_000_000_000, using: &rng))))
        case 8: return .int(Int.random(in: -1000...1000, using: &rng))
        case 9: return .array((0..<Int.random(in: 0...5, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) })
        case 10:
            var m = [CBOR: CBOR]()
            for _ in 0..<Int.random(in: 0...5, using: &rng) {
                m[randomValue(&rng, depth: depth + 2)] = randomValue(&rng, depth: depth + 1)
            }
            return .map(m)
        default:
            return Bool.random(using: &rng) ? .embedded(randomValue(&rng, depth: depth + 1))
                : .tagged(UInt64.random(in: 2...23, using: &rng), randomValue(&rng, depth: depth + 1))
        }
    }

    /// decode(encode(v)) == v and the encoding is accepted by the strict (deterministic) decoder,
    /// and encode(decode(bytes)) == bytes for deterministic bytes.
    func testRandomValuesRoundTrip() throws {
        var rng = SplitMix64(seed: 0x10CB_E4C4)
        for i in 0..<5000 {
            let v = Self.randomValue(&rng)
            let bytes = v.encoded()
            let back: CBOR
            do { back = try CBOR(parsing: bytes, options: .strict) } catch {
                return XCTFail("case \(i): \(v.diagnostic) → \(bytes.hex): \(error)")
            }
            XCTAssertEqual(back, v, "case \(i): \(bytes.hex)")
            XCTAssertEqual(back.encoded(), bytes, "case \(i)")
        }
    }

    /// Every truncation of a valid encoding is an error (`truncated` or a length check), never a crash.
    func testEveryTruncationIsAnError() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<300 {
            let bytes = Self.randomValue(&rng).encoded()
            for cut in 0..<bytes.count {
                XCTAssertThrowsError(try CBOR(parsing: bytes[0..<cut]))
            }
        }
    }

    /// Random byte flips never crash the decoder.
    func testRandomMutationsNeverCrash() {
        var rng = SplitMix64(seed: 99)
        for _ in 0..<2000 {
            var bytes = Self.randomValue(&rng).encoded()
            let i = Int.random(in: 0..<bytes.count, using: &rng)
            bytes[i] = UInt8.random(in: 0...255, using: &rng)
            _ = try? CBOR(parsing: bytes)
        }
    }
}

/// Asserts `expression` throws a `CBORError` with `code`.
func XCTAssertThrowsCode<T>(_ code: CBORError.Code, _ expression: @autoclosure () throws -> T,
                            file: StaticString = #filePath, line: UInt = #line) {
    do {
        _ = try expression()
        XCTFail("expected \(code.rawValue), got a value", file: file, line: line)
    } catch let error as CBORError {
        XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
    } catch {
        XCTFail("expected CBORError \(code.rawValue), got \(error)", file: file, line: line)
    }
}
