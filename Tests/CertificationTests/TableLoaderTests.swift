import Foundation
import XCTest
@testable import Certification

/// The shipped tables hold the published data, and every kind of mistake in a table is reported
/// as file:line.
final class ShippedTablesTests: XCTestCase {
    /// The published tables (schlage-employee-badge-ios-guide.txt lines 147-177), cell by cell:
    /// kind, published model cell, hardware cell, firmware cell, status cell.
    static let published: [(DeviceKind, String, String, String, String)] = [
        (.lock, "Schlage Control B Locks", "All hardware versions support Apple NFC", "04.12.00", "Complete"),
        (.lock, "Schlage Control BM Locks", "All hardware versions support Apple NFC", "05.11.39", "Complete"),
        (.lock, "Schlage Control Locks", "Not pursuing Apple NFC Certification", "n/a", "n/a"),
        (.lock, "Schlage NDE Locks", "All hardware versions support Apple NFC", "02.12.72", "Complete"),
        (.lock, "Schlage LE Locks", "All hardware versions support Apple NFC", "01.07.67", "Complete"),
        (.lock, "Schlage NDEB Locks", "All hardware versions support Apple NFC", "03.07.01", "Complete"),
        (.lock, "Schlage LEB Locks", "All hardware versions support Apple NFC", "03.07.01", "Complete"),
        (.lock, "Schlage NDEB Si Locks", "All hardware versions support Apple NFC", "03.09.07", "Complete"),
        (.lock, "Schlage LEB Si Locks", "All hardware versions support Apple NFC", "03.09.07", "Complete"),
        (.lock, "Schlage AD300", "Must have MT2/MTK2 Reader", "AD.A.125", "Complete"),
        (.lock, "Schlage AD400", "Must have MT2/MTK2 Reader AD", "AD.A.125", "Complete"),
        (.reader, "Schlage RC Reader Controller (RC11, RC15, RCK15)", "All hardware versions support Apple NFC", "01.08.02", "In process"),
        (.reader, "Schlage MTB Readers (MTB11, MTB15, MTBK15)", "All hardware versions support Apple NFC", "60.47.14, 60.47.27", "In process"),
        (.reader, "Schlage MT15, MTK15, MT11, MTMS15, MTMSK15 Readers", "All hardware versions support Apple NFC", "22.02", "Complete"),
        (.reader, "Schlage OEM200 Modules", "All hardware versions support Apple NFC", "2.01", "Complete"),
        (.reader, "Schlage MT20 Enrollment Readers", "All hardware versions support Apple NFC", "9.02", "Complete"),
    ]

    func testShippedTablesHoldEveryPublishedRowExactly() {
        let rows = Fixtures.schlage
        XCTAssertEqual(rows.filter { $0.kind == .lock }.count, 11)
        XCTAssertEqual(rows.filter { $0.kind == .reader }.count, 5)
        XCTAssertEqual(rows.count, Self.published.count)
        for (row, p) in zip(rows, Self.published) {
            XCTAssertEqual(row.kind, p.0, p.1)
            XCTAssertEqual(row.publishedName, p.1)
            XCTAssertEqual(row.hardware, p.2, p.1)
            XCTAssertEqual(row.firstCertifiedText, p.3, p.1)
            XCTAssertEqual(row.status.rawValue, p.4, p.1)
            XCTAssertEqual(row.vendor, "Schlage")
            XCTAssertTrue(row.source.hasPrefix("schlage-employee-badge-ios-guide.txt:1"), row.source)
        }
    }

    /// The published lines as quoted in firmware-tables/README.md ("NNN text"), by line number.
    static func quotedGuideLines() throws -> [Int: String] {
        let readme = try String(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("firmware-tables/README.md"), encoding: .utf8)
        var lines: [Int: String] = [:]
        var inside = false
        for line in readme.components(separatedBy: "\n") {
            if line.hasPrefix("## The published text") { inside = true; continue }
            guard inside, let space = line.firstIndex(of: " "), let number = Int(line[..<space]) else { continue }
            lines[number] = String(line[line.index(after: space)...])
        }
        return lines
    }

    func testEveryRowIsOnTheLinesItsSourceNames() throws {
        let quoted = try Self.quotedGuideLines()
        XCTAssertEqual(quoted.keys.sorted(), Array(149...177))
        for row in Fixtures.schlage {
            let range = row.source.split(separator: ":")[1].split(separator: "-").map { Int($0)! }
            let text = (range[0]...range.last!).map { quoted[$0] ?? "" }.joined(separator: " ")
            XCTAssertTrue(text.hasPrefix(row.publishedName.components(separatedBy: " (")[0]), "\(row.model): \(text)")
            XCTAssertTrue(text.contains(row.hardware), "\(row.model): \(text)")
            XCTAssertTrue(text.contains(row.status.rawValue), "\(row.model): \(text)")
            for version in row.firstCertified { XCTAssertTrue(text.contains(version.text), "\(row.model): \(text)") }
            for variant in row.variants { XCTAssertTrue(text.contains(variant), "\(row.model): \(text)") }
        }
    }

    func testVariantsAndRequirements() {
        let byModel = Dictionary(uniqueKeysWithValues: Fixtures.schlage.map { ($0.model, $0) })
        XCTAssertEqual(byModel["RC"]?.variants, ["RC11", "RC15", "RCK15"])
        XCTAssertEqual(byModel["MTB"]?.variants, ["MTB11", "MTB15", "MTBK15"])
        XCTAssertEqual(byModel["MT15"]?.variants, ["MT15", "MTK15", "MT11", "MTMS15", "MTMSK15"])
        XCTAssertEqual(byModel["MTB"]?.firstCertified.map(\.text), ["60.47.14", "60.47.27"])
        XCTAssertEqual(byModel["AD300"]?.requirement, Requirement(kind: .reader, names: ["MT2", "MTK2"]))
        XCTAssertEqual(byModel["AD400"]?.requirement, Requirement(kind: .reader, names: ["MT2", "MTK2"]))
        XCTAssertEqual(Fixtures.schlage.filter { $0.requirement != nil }.map(\.model), ["AD300", "AD400"])
        XCTAssertTrue(byModel["AD400"]?.note.contains("stray") == true)
    }

    /// The tables compiled into LockBench are firmware-tables/, byte for byte, and every file of it.
    func testBuiltInTablesEqualFirmwareTablesByteForByte() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.tablesDirectory)
            .filter { $0.hasSuffix(".csv") }.sorted()
        let builtIn = CertificationTables.builtInFiles
        XCTAssertEqual(builtIn.map(\.name), names,
                       "the build embeds every firmware-tables/*.csv (EmbedFirmwareTables plugin)")
        for file in builtIn {
            let onDisk = try Data(contentsOf: URL(fileURLWithPath: Fixtures.tablesDirectory).appendingPathComponent(file.name))
            XCTAssertEqual(file.bytes, Array(onDisk),
                           "\(file.name): the embedded bytes differ from firmware-tables/ (EmbedFirmwareTables plugin)")
        }
        let loaded = CertificationTables.builtIn()
        XCTAssertEqual(loaded.origin, "built-in")
        XCTAssertEqual(loaded.rows.map(\.publishedName), Fixtures.shipped.rows.map(\.publishedName))
        XCTAssertEqual(loaded.rows.map(\.line), Fixtures.shipped.rows.map(\.line))
    }
}

final class TableValidationTests: XCTestCase {
    let header = Fixtures.header, nde = Fixtures.ndeRow

    /// Asserts that `text` fails with exactly one error of `code` at `t.csv:line`.
    func assertError(_ text: String, _ code: CertificationError.Code, line: Int?, containing: String,
                     file: StaticString = #filePath, testLine: UInt = #line) {
        let errors = Fixtures.tableErrors(text)
        XCTAssertEqual(errors.count, 1, "\(errors)", file: file, line: testLine)
        guard let error = errors.first else { return }
        XCTAssertEqual(error.code, code, error.description, file: file, line: testLine)
        XCTAssertEqual(error.file, "t.csv", file: file, line: testLine)
        XCTAssertEqual(error.line, line, error.description, file: file, line: testLine)
        XCTAssertTrue(error.description.hasPrefix(line.map { "t.csv:\($0): " } ?? "t.csv: "), error.description, file: file, line: testLine)
        XCTAssertTrue(error.reason.contains(containing), error.reason, file: file, line: testLine)
    }

    func testAValidTableLoads() {
        XCTAssertEqual(Fixtures.tableErrors("# comment\n\(header)\n\(nde)\n"), [])
    }

    func testMissingHeader() {
        assertError("# only a comment\n\n", .missingHeader, line: nil, containing: "no header")
    }

    func testUnknownColumn() {
        assertError("\(header),colour\n\(nde),red\n", .unknownColumn, line: 1, containing: "'colour'")
    }

    func testMissingColumn() {
        let text = header.replacingOccurrences(of: ",status", with: "") + "\n" + nde.replacingOccurrences(of: ",Complete", with: "") + "\n"
        assertError(text, .missingColumn, line: 1, containing: "'status'")
    }

    func testDuplicateColumn() {
        assertError("\(header),kind\n\(nde),lock\n", .duplicateColumn, line: 1, containing: "'kind' appears twice")
    }

    func testFieldCount() {
        assertError("\(header)\n\(nde)\nlock,Schlage,LE\n", .fieldCount, line: 3, containing: "3 fields; the header has 11")
    }

    func testUnterminatedQuote() {
        assertError("\(header)\n\(nde)\nlock,Schlage,\"LE,,x\n", .unterminatedQuote, line: 3, containing: "never closed")
    }

    func testStrayQuote() {
        assertError("\(header)\nlock,Schlage,N\"DE,,Schlage NDE Locks,hw,02.12.72,Complete,,src,\n", .strayQuote, line: 2, containing: "quote inside unquoted field 3")
    }

    func testTextAfterClosingQuote() {
        assertError("\(header)\nlock,Schlage,\"NDE\"x,,Schlage NDE Locks,hw,02.12.72,Complete,,src,\n", .strayQuote, line: 2, containing: "after the closing quote")
    }

    func testEmptyField() {
        assertError("\(header)\n# a comment line counts\n\(nde.replacingOccurrences(of: "guide:153", with: ""))\n", .emptyField, line: 3, containing: "empty 'source'")
    }

    func testUnknownKind() {
        assertError("\(header)\n\(nde)\n\(nde.replacingOccurrences(of: "lock,", with: "latch,").replacingOccurrences(of: "NDE", with: "LE"))\n",
                    .unknownKind, line: 3, containing: "'latch'")
    }

    func testUnknownStatus() {
        assertError("\(header)\n\(nde.replacingOccurrences(of: "Complete", with: "Done"))\n", .unknownStatus, line: 2, containing: "'Done'")
    }

    func testInvalidVersion() {
        assertError("\(header)\n\(nde.replacingOccurrences(of: "02.12.72", with: "02..12"))\n", .invalidVersion, line: 2, containing: "empty segment 2")
    }

    func testInvalidSecondVersionOfARow() {
        assertError("\(header)\n\(nde.replacingOccurrences(of: "02.12.72", with: "\"02.12.72, 02.12-80\""))\n", .invalidVersion, line: 2, containing: "'02.12-80'")
    }

    func testDuplicateVersion() {
        assertError("\(header)\n\(nde.replacingOccurrences(of: "02.12.72", with: "\"02.12.72, 2.12.72\""))\n", .duplicateVersion, line: 2, containing: "2.12.72 twice")
    }

    func testNotPursuedWithAVersion() {
        assertError("\(header)\n\(nde.replacingOccurrences(of: "Complete", with: "n/a"))\n", .statusVersionMismatch, line: 2, containing: "not '02.12.72'")
    }

    func testCompleteWithoutAVersion() {
        assertError("\(header)\n\(nde.replacingOccurrences(of: "02.12.72", with: "n/a"))\n", .statusVersionMismatch, line: 2, containing: "needs a first certified firmware")
    }

    func testInvalidName() {
        assertError("\(header)\n\(nde.replacingOccurrences(of: "lock,Schlage,NDE,", with: "lock,Schlage,NDE,\"RC11,,RC15\""))\n", .invalidName, line: 2, containing: "variant ''")
    }

    func testDuplicateName() {
        let le = nde.replacingOccurrences(of: "NDE,,", with: "LE,NDE,").replacingOccurrences(of: "NDE Locks", with: "LE Locks")
        assertError("\(header)\n\(nde)\n\(le)\n", .duplicateName, line: 3, containing: "also names Schlage NDE (t.csv:2)")
    }

    func testDuplicateNameAfterNormalization() {
        let other = nde.replacingOccurrences(of: "NDE,", with: "n-d-e,").replacingOccurrences(of: "NDE Locks", with: "Other")
        assertError("\(header)\n\(nde)\n\(other)\n", .duplicateName, line: 3, containing: "'n-d-e'")
    }

    func testInvalidRequirement() {
        assertError("\(header)\n\(nde.replacingOccurrences(of: "Complete,,", with: "Complete,MT2 reader,"))\n", .invalidRequirement, line: 2, containing: "kind:NAME")
    }

    func testRequirementOfUnknownKind() {
        assertError("\(header)\n\(nde.replacingOccurrences(of: "Complete,,", with: "Complete,door:MT2,"))\n", .invalidRequirement, line: 2, containing: "'door:MT2'")
    }

    func testNoRows() {
        assertError("\(header)\n", .noRows, line: 1, containing: "no rows")
    }

    func testInvalidUTF8() {
        var bytes = Array("\(header)\n\(nde)\n".utf8)
        bytes += [0x6C, 0x6F, 0x63, 0x6B, 0xFF, 0x0A]
        do {
            _ = try CertificationTables.parse(files: [("t.csv", bytes)], origin: "test")
            XCTFail("loaded")
        } catch {
            XCTAssertEqual(error.errors.map(\.code), [.invalidUTF8])
            XCTAssertEqual(error.errors.first?.description, "t.csv:3: not valid UTF-8")
        }
    }

    func testEveryProblemOfAFileIsReportedInOrder() {
        let text = "\(header)\n\(nde.replacingOccurrences(of: "Complete", with: "Done"))\n\(nde)\nlock,x\n"
        let errors = Fixtures.tableErrors(text)
        XCTAssertEqual(errors.map(\.code), [.unknownStatus, .fieldCount])
        XCTAssertEqual(errors.map(\.line), [2, 4])
    }

    func testColumnsInAnyOrderAndCRLF() throws {
        let columns = header.split(separator: ",").reversed().joined(separator: ",")
        let values = nde.split(separator: ",", omittingEmptySubsequences: false).reversed().joined(separator: ",")
        let tables = try CertificationTables.parse(files: [("t.csv", Array("\(columns)\r\n\(values)\r\n".utf8))], origin: "t")
        XCTAssertEqual(tables.rows.first?.model, "NDE")
        XCTAssertEqual(tables.rows.first?.firstCertifiedText, "02.12.72")
        XCTAssertEqual(tables.rows.first?.line, 2)
    }

    func testNoteColumnIsOptional() throws {
        let text = header.replacingOccurrences(of: ",note", with: "") + "\n" + String(nde.dropLast()) + "\n"
        XCTAssertEqual(Fixtures.tableErrors(text), [])
    }

    func testMissingDirectory() {
        XCTAssertThrowsError(try CertificationTables.load(directory: "/nonexistent/tables")) { error in
            let e = (error as? TableLoadError)?.errors
            XCTAssertEqual(e?.map(\.code), [.unreadableFile])
            XCTAssertEqual(e?.first?.description, "/nonexistent/tables: not a directory of certification tables")
        }
    }

    func testDirectoryWithoutTables() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("not a table".utf8).write(to: dir.appendingPathComponent("README.md"))
        XCTAssertThrowsError(try CertificationTables.load(directory: dir.path)) { error in
            XCTAssertEqual((error as? TableLoadError)?.errors.map(\.code), [.noTables])
        }
    }

    func testErrorsAcrossFilesNameTheirFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-two-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("\(header)\n\(nde)\n".utf8).write(to: dir.appendingPathComponent("a.csv"))
        try Data("\(header)\n\n\(nde)\n".utf8).write(to: dir.appendingPathComponent("b.csv"))
        XCTAssertThrowsError(try CertificationTables.load(directory: dir.path)) { error in
            let errors = (error as? TableLoadError)?.errors ?? []
            XCTAssertEqual(errors.map(\.code), [.duplicateName], "model and published name normalize to one key: one error")
            XCTAssertEqual(errors.first?.file, dir.appendingPathComponent("b.csv").path)
            XCTAssertEqual(errors.first?.line, 3)
            XCTAssertTrue(errors.first?.reason.contains("a.csv:2") == true, errors.first?.reason ?? "")
        }
    }

    /// Every error code a table can produce has a test above.
    func testEveryTableErrorCodeIsCovered() {
        let tested: Set<CertificationError.Code> = [
            .unreadableFile, .noTables, .invalidUTF8, .missingHeader, .unknownColumn, .missingColumn, .duplicateColumn,
            .fieldCount, .unterminatedQuote, .strayQuote, .emptyField, .unknownKind, .unknownStatus, .invalidVersion,
            .duplicateVersion, .statusVersionMismatch, .invalidName, .duplicateName, .invalidRequirement, .noRows,
        ]
        XCTAssertEqual(Set(CertificationError.Code.allCases), tested)
    }
}
