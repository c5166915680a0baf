import Foundation
import XCTest
@testable import Certification

/// Seeded random inputs for the parsers that take bytes from files: the CSV scanner, the table
/// loader and the inventory audit never crash, always account for every line, and round-trip.
final class ParserFuzzTests: XCTestCase {
    struct SeededRandom: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58476d1ce4e5b9
            z = (z ^ (z >> 27)) &* 0x94d049bb133111eb
            return z ^ (z >> 31)
        }
    }

    static let alphabet: [UInt8] = Array("ab,\"\n\r 1.#\u{7f}".utf8) + [0xC3, 0xBC, 0xFF, 0x00]

    func testCSVRoundTripOfRandomFields() {
        var random = SeededRandom(state: 1)
        for _ in 0..<500 {
            let records = (0..<Int.random(in: 1...5, using: &random)).map { _ in
                (0..<Int.random(in: 1...6, using: &random)).map { _ in
                    String(decoding: (0..<Int.random(in: 0...6, using: &random)).map { _ in Self.alphabet.randomElement(using: &random)! }, as: UTF8.self)
                }
            }
            // A record of one empty field is an empty line, which readers skip: leave those out.
            let kept = records.filter { $0 != [""] }
            var out: [UInt8] = []
            for record in kept {
                for (i, field) in record.enumerated() {
                    if i > 0 { out.append(0x2C) }
                    CSVWriter.append(field, to: &out)
                }
                out.append(0x0A)
            }
            let back: [[String]] = out.withUnsafeBufferPointer { buffer in
                var scanner = CSVScanner(buffer)
                var fields: [CSVField] = []
                var rows: [[String]] = []
                while let record = scanner.next(fields: &fields) {
                    XCTAssertNil(record.error)
                    rows.append(fields.map { scanner.string($0) })
                }
                return rows
            }
            XCTAssertEqual(back, kept)
        }
    }

    func testScannerOnRandomBytesTerminatesWithIncreasingLines() {
        var random = SeededRandom(state: 2)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...80, using: &random)).map { _ in Self.alphabet.randomElement(using: &random)! }
            let lineCount = bytes.filter { $0 == 0x0A }.count + 1
            bytes.withUnsafeBufferPointer { buffer in
                var scanner = CSVScanner(buffer, commentByte: UInt8(ascii: "#"))
                var fields: [CSVField] = []
                var lastLine = 0, lastEnd = 0, count = 0
                while let record = scanner.next(fields: &fields) {
                    XCTAssertGreaterThan(record.line, lastLine)
                    XCTAssertLessThanOrEqual(record.line, lineCount)
                    XCTAssertGreaterThanOrEqual(record.start, lastEnd)
                    XCTAssertLessThanOrEqual(record.end, buffer.count)
                    for field in fields { XCTAssertLessThanOrEqual(field.start, field.end); XCTAssertLessThanOrEqual(field.end, buffer.count) }
                    lastLine = record.line
                    lastEnd = record.end
                    count += 1
                    XCTAssertLessThanOrEqual(count, buffer.count + 1, "the scanner always advances")
                    if count > buffer.count + 1 { break }
                }
            }
        }
    }

    func testMutatedTablesLoadOrReportLinesInsideTheFile() throws {
        let original = try Data(contentsOf: URL(fileURLWithPath: Fixtures.tablesDirectory).appendingPathComponent("schlage-apple-nfc.csv"))
        var random = SeededRandom(state: 3)
        for _ in 0..<300 {
            var bytes = Array(original)
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = Self.alphabet.randomElement(using: &random)!
                case 1: bytes.remove(at: at)
                default: bytes.insert(Self.alphabet.randomElement(using: &random)!, at: at)
                }
            }
            let lines = bytes.filter { $0 == 0x0A }.count + 1
            do {
                let tables = try CertificationTables.parse(files: [("m.csv", bytes)], origin: "m")
                XCTAssertFalse(tables.rows.isEmpty)
            } catch {
                XCTAssertFalse(error.errors.isEmpty)
                for e in error.errors {
                    XCTAssertEqual(e.file, "m.csv")
                    if let line = e.line { XCTAssertTrue((1...lines).contains(line), e.description) }
                }
            }
        }
    }

    func testMutatedInventoriesAuditEveryRecord() throws {
        let original = try Data(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("docs/examples/site-inventory.csv"))
        var random = SeededRandom(state: 4)
        for _ in 0..<300 {
            var bytes = Array(original)
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let at = Int.random(in: 60..<bytes.count, using: &random)  // the header stays intact
                bytes[at] = Self.alphabet.randomElement(using: &random)!
            }
            try bytes.withUnsafeBufferPointer { buffer in
                let result = try InventoryAudit.run(buffer, file: "m.csv", tables: Fixtures.shipped)
                let s = result.summary
                XCTAssertEqual(s.devices + s.malformed, result.rows.count)
                XCTAssertEqual(s.counts.values.reduce(0, +), s.devices)
                for format in AuditFormat.allCases {
                    var out: [UInt8] = []
                    var writer = AuditReportWriter(result: result, bytes: buffer, tablesOrigin: "t") { out += $0 }
                    writer.write(format)
                    XCTAssertFalse(out.isEmpty)
                    if format == .json { XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(out))) }
                }
            }
        }
    }

    /// Enough distinct (model, firmware, reader) triples to make the verdict cache grow several
    /// times; each row still gets its own triple's verdict.
    func testVerdictCacheGrowsAndStaysRight() throws {
        var text = "device_id,model,firmware,reader_model\n"
        var expected: [String] = []
        var distinct = Set<String>()
        for i in 0..<5000 {
            distinct.insert("\(i % 2500)/\(i % 3 == 0)")
            let patch = i % 2500
            text += "d\(i),NDE,02.12.\(patch),\(i % 3 == 0 ? "MT2" : "")\n"
            expected.append(patch >= 72 ? "certified" : "upgrade-required")
        }
        let bytes = Array(text.utf8)
        let result = try bytes.withUnsafeBufferPointer { try InventoryAudit.run($0, file: "c.csv", tables: Fixtures.shipped) }
        XCTAssertEqual(result.outcomes.count, distinct.count, "one verdict per distinct triple")
        XCTAssertGreaterThan(distinct.count, 4000)
        XCTAssertEqual(result.rows.map { result.outcomes[Int($0.outcome)].verdictName }, expected)
    }
}
