import XCTest
@testable import Certification

final class CSVScannerTests: XCTestCase {
    struct Parsed: Equatable {
        var line: Int
        var fields: [String]
        var error: CertificationError.Code?
        var text: String
    }

    func parse(_ text: String, comment: UInt8? = nil) -> [Parsed] {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            var scanner = CSVScanner(buffer, commentByte: comment)
            var fields: [CSVField] = []
            var out: [Parsed] = []
            while let record = scanner.next(fields: &fields) {
                out.append(Parsed(line: record.line, fields: fields.map { scanner.string($0) }, error: record.error?.code,
                                  text: String(decoding: buffer[record.start..<record.end], as: UTF8.self)))
            }
            return out
        }
    }

    func testPlainRecordsAndLineNumbers() {
        XCTAssertEqual(parse("a,b\n1,2\n\n3,\n"), [
            Parsed(line: 1, fields: ["a", "b"], error: nil, text: "a,b"),
            Parsed(line: 2, fields: ["1", "2"], error: nil, text: "1,2"),
            Parsed(line: 4, fields: ["3", ""], error: nil, text: "3,"),
        ])
    }

    func testQuotedFieldsPerRFC4180() {
        let records = parse("\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\"\"\nnext,row\n")
        XCTAssertEqual(records.map(\.fields), [["a,b", "say \"hi\"", "two\nlines", ""], ["next", "row"]])
        XCTAssertEqual(records.map(\.line), [1, 3], "a quoted line break moves the next record's line")
    }

    func testCRLFBOMAndNoFinalNewline() {
        XCTAssertEqual(parse("\u{FEFF}a,b\r\n1,\"2\"\r\n3,4"), [
            Parsed(line: 1, fields: ["a", "b"], error: nil, text: "a,b"),
            Parsed(line: 2, fields: ["1", "2"], error: nil, text: "1,\"2\""),
            Parsed(line: 3, fields: ["3", "4"], error: nil, text: "3,4"),
        ])
        XCTAssertEqual(parse("a\r").map(\.fields), [["a"]])
        XCTAssertEqual(parse("a,").map(\.fields), [["a", ""]])
    }

    func testCommentsOnlyWhenAsked() {
        XCTAssertEqual(parse("# c\na\n", comment: UInt8(ascii: "#")).map(\.fields), [["a"]])
        XCTAssertEqual(parse("# c\na\n").map(\.fields), [["# c"], ["a"]])
    }

    func testStrayQuoteSkipsToTheNextLine() {
        let records = parse("a,b\"c,d\n1,2\n\"x\"y,z\n3,4\n")
        XCTAssertEqual(records.map(\.error), [.strayQuote, nil, .strayQuote, nil])
        XCTAssertEqual(records.map(\.line), [1, 2, 3, 4])
        XCTAssertEqual(records[1].fields, ["1", "2"])
        XCTAssertEqual(records[3].fields, ["3", "4"])
    }

    func testAQuoteThatSpansLinesAndEndsBadlyResumesOnTheNextLine() {
        let records = parse("1,\"a\n2,b\"x,c\n3,d\n")
        XCTAssertEqual(records.map(\.error), [.strayQuote, .strayQuote, nil])
        XCTAssertEqual(records.map(\.line), [1, 2, 3])
        XCTAssertEqual(records[2].fields, ["3", "d"])
    }

    func testUnterminatedQuoteResumesOnTheNextLine() {
        let records = parse("1,\"open\n2,b\n3,c\n")
        XCTAssertEqual(records.map(\.error), [.unterminatedQuote, nil, nil])
        XCTAssertEqual(records.map(\.line), [1, 2, 3])
        XCTAssertEqual(records[0].text, "1,\"open")
        XCTAssertEqual(records[2].fields, ["3", "c"])
    }

    func testTrimmedAndWriter() {
        let bytes = Array(" \t x y \t,\" q \"".utf8)
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = CSVScanner(buffer)
            var fields: [CSVField] = []
            _ = scanner.next(fields: &fields)
            XCTAssertEqual(scanner.trimmedString(fields[0]), "x y")
            XCTAssertEqual(scanner.trimmedString(fields[1]), "q")
        }
        var out: [UInt8] = []
        for (i, v) in ["plain", "a,b", "say \"hi\"", "two\nlines"].enumerated() {
            if i > 0 { out.append(0x2C) }
            CSVWriter.append(v, to: &out)
        }
        XCTAssertEqual(String(decoding: out, as: UTF8.self), "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\"")
        XCTAssertEqual(parse(String(decoding: out, as: UTF8.self)).first?.fields, ["plain", "a,b", "say \"hi\"", "two\nlines"])
    }
}
