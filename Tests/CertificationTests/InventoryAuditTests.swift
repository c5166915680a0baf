import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest
@testable import Certification

final class InventoryAuditTests: XCTestCase {
    let tables = Fixtures.shipped

    func audit(_ text: String, file: String = "inv.csv") throws -> AuditResult {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { try InventoryAudit.run($0, file: file, tables: tables) }
    }

    func report(_ text: String, _ format: AuditFormat) throws -> String {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { buffer in
            let result = try InventoryAudit.run(buffer, file: "inv.csv", tables: tables)
            var out: [UInt8] = []
            var writer = AuditReportWriter(result: result, bytes: buffer, tablesOrigin: "built-in") { out += $0 }
            writer.write(format)
            return String(decoding: out, as: UTF8.self)
        }
    }

    func verdicts(_ result: AuditResult) -> [String] {
        result.rows.map { result.outcomes[Int($0.outcome)].verdictName }
    }

    static let sample = #"""
    site,device_id,location,model,firmware,reader_model
    HQ,d1,"Lobby, east",Schlage NDE,02.12.72,
    HQ,d2,Lab,NDE,02.12.70,
    HQ,d3,Dock,AD300,AD.A.125,
    HQ,d4,Server,AD400,AD.A.125,MTK2
    Plant,d5,Gate,RC15,01.08.02,
    Plant,d6,Office,Control,1.0,
    Plant,d7,Fence,NDX,1.0,
    Plant,d8,Spare,NDEB
    Plant,d9,"Canteen ""north""",MT20,9.02,

    """#

    func testOneVerdictPerDeviceAndASummary() throws {
        let result = try audit(Self.sample)
        XCTAssertEqual(verdicts(result), ["certified", "upgrade-required", "requirement-not-met", "certified", "in-process",
                                          "not-pursued", "unknown-model", "malformed", "certified"])
        XCTAssertEqual(result.rows.map(\.line), Array(2...10))
        let s = result.summary
        XCTAssertEqual(s.devices, 8)
        XCTAssertEqual(s.certified, 3)
        XCTAssertEqual(s.count(.upgradeRequired), 1)
        XCTAssertEqual(s.count(.requirementNotMet), 1)
        XCTAssertEqual(s.count(.inProcess), 1)
        XCTAssertEqual(s.count(.notPursued), 1)
        XCTAssertEqual(s.count(.unknownModel), 1)
        XCTAssertEqual(s.malformed, 1)
        XCTAssertFalse(s.allCertified)
        XCTAssertEqual(result.malformedMessages, ["inv.csv:9: 4 fields; the header has 6"])
        XCTAssertEqual(result.columns, InventoryColumns(deviceID: 1, model: 3, firmware: 4, reader: 5, site: 0))
    }

    func testAllCertifiedOnlyWhenEveryDeviceIs() throws {
        XCTAssertTrue(try audit("device_id,model,firmware\na,NDE,02.12.72\nb,MTK15,22.02\n").summary.allCertified)
        XCTAssertFalse(try audit("device_id,model,firmware\na,NDE,02.12.72\nb,MTK15,22.01\n").summary.allCertified)
        XCTAssertFalse(try audit("device_id,model,firmware\na,NDE,02.12.72\nb,MTK15\n").summary.allCertified, "a malformed row fails the audit")
    }

    func testHeaderColumnsInAnyOrderAndSpelling() throws {
        let result = try audit("Firmware, Model ,Device ID,Reader-Model\n02.12.72,nde,x,\nAD.A.125,AD300,y,MT2\n")
        XCTAssertEqual(verdicts(result), ["certified", "certified"])
        XCTAssertNil(result.columns.site)
        XCTAssertEqual(result.columns.reader, 3)
    }

    func testHeaderProblemsStopTheAudit() {
        let cases: [(String, CertificationError.Code, String)] = [
            ("", .missingHeader, "inv.csv:1: empty inventory"),
            ("\n\n", .missingHeader, "inv.csv:1: empty inventory"),
            ("device_id,model\na,NDE\n", .missingColumn, "inv.csv:1: the header lacks firmware"),
            ("id,name,version\n", .missingColumn, "inv.csv:1: the header lacks device_id, model, firmware"),
            ("device_id,model,firmware,Model\n", .duplicateColumn, "inv.csv:1: column 'model' appears twice"),
            ("\n\"device_id,model,firmware\n", .unterminatedQuote, "inv.csv:2: header: a quoted field"),
        ]
        for (text, code, prefix) in cases {
            XCTAssertThrowsError(try audit(text), text) { error in
                let e = error as? CertificationError
                XCTAssertEqual(e?.code, code, text)
                XCTAssertTrue(e?.description.hasPrefix(prefix) == true, "\(text): \(e?.description ?? "")")
            }
        }
    }

    func testMalformedRowsAreReportedWithTheirLinesAndTheAuditGoesOn() throws {
        let text = #"""
        device_id,model,firmware
        a,NDE,02.12.72
        b,NDE
        c,NDE,02.12.72,extra
        d,"NDE,02.12.72
        e,N"DE,02.12.72
        e2,"NDE"x,02.12.72
        f,,02.12.72
        ,NDE,02.12.72
        g,NDE,
        h,NDE,02..12
        i,NDE,1.2-beta
        j,"multi
        line",02.12.72
        k,NDE,02.12.80

        """#
        let result = try audit(text)
        XCTAssertEqual(result.malformedMessages, [
            "inv.csv:3: 2 fields; the header has 3",
            "inv.csv:4: 4 fields; the header has 3",
            "inv.csv:5: a quoted field opened on this line closes on line 6 and is followed by more text",
            "inv.csv:6: a quote inside unquoted field 2; quote the whole field and double the quote (\"\")",
            "inv.csv:7: unexpected character after the closing quote of field 2",
            "inv.csv:8: empty model",
            "inv.csv:9: empty device_id",
            "inv.csv:10: empty firmware",
            "inv.csv:11: firmware: firmware version '02..12' has an empty segment 2 (two dots, or a dot at an end)",
            "inv.csv:12: firmware: firmware version '1.2-beta' contains '-'; segments are letters and digits separated by dots",
        ])
        XCTAssertEqual(verdicts(result).first, "certified")
        XCTAssertEqual(verdicts(result).suffix(2), ["unknown-model", "certified"])
        XCTAssertEqual(result.rows.suffix(2).map(\.line), [13, 15], "a quoted line break is one record over two lines")
        XCTAssertEqual(result.summary.malformed, 10)
        XCTAssertEqual(result.summary.devices, 3)
    }

    func testAQuoteNeverClosedCostsOnlyItsLine() throws {
        let result = try audit("device_id,model,firmware\na,\"NDE,02.12.72\nb,NDE,02.12.72\nc,NDE,02.12.71\n")
        XCTAssertEqual(result.malformedMessages, ["inv.csv:2: a quoted field opened on this line is never closed"])
        XCTAssertEqual(verdicts(result), ["malformed", "certified", "upgrade-required"])
        XCTAssertEqual(result.rows.map(\.line), [2, 3, 4])
    }

    /// The verdict cache is keyed by the raw bytes of (model, firmware, reader): same bytes, same
    /// outcome; any difference, a fresh verdict.
    func testRepeatedTriplesShareOneVerdict() throws {
        var text = "device_id,model,firmware,reader_model\n"
        for i in 0..<3000 {
            let firmware = ["02.12.72", "02.12.70", "2.12.72"][i % 3]
            let reader = i % 2 == 0 ? "MT2" : ""
            text += "d\(i),\(i % 5 == 0 ? "AD300" : "NDE"),\(i % 5 == 0 ? "AD.A.125" : firmware),\(reader)\n"
        }
        let result = try audit(text)
        XCTAssertEqual(result.rows.count, 3000)
        XCTAssertLessThanOrEqual(result.outcomes.count, 8)
        for (i, row) in result.rows.enumerated() {
            let expected: String
            if i % 5 == 0 { expected = i % 2 == 0 ? "certified" : "requirement-not-met" }
            else { expected = i % 3 == 1 ? "upgrade-required" : "certified" }
            XCTAssertEqual(result.outcomes[Int(row.outcome)].verdictName, expected, "row \(i)")
        }
    }

    // MARK: Formats

    func testCSVKeepsEveryColumnAndAppendsTheVerdict() throws {
        let csv = try report(Self.sample, .csv)
        let lines = csv.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(lines[0], "site,device_id,location,model,firmware,reader_model,line,verdict,matched_model,required_firmware,detail")
        XCTAssertEqual(lines[1], "HQ,d1,\"Lobby, east\",Schlage NDE,02.12.72,,2,certified,Schlage NDE,02.12.72,\"Schlage NDE Locks: firmware 02.12.72 is at or above 02.12.72, the first certified version\"")
        XCTAssertTrue(lines[2].hasPrefix("HQ,d2,Lab,NDE,02.12.70,,3,upgrade-required,Schlage NDE,02.12.72,"), lines[2])
        XCTAssertEqual(lines[8], ",,,,,,9,malformed,,,4 fields; the header has 6")
        XCTAssertEqual(lines.last, "")
        // Read back as CSV: one record per row, each as wide as the header.
        let back = Array(csv.utf8).withUnsafeBufferPointer { buffer -> [[String]] in
            var scanner = CSVScanner(buffer)
            var fields: [CSVField] = []
            var rows: [[String]] = []
            while scanner.next(fields: &fields) != nil { rows.append(fields.map { scanner.string($0) }) }
            return rows
        }
        XCTAssertEqual(back.count, 10)
        XCTAssertTrue(back.allSatisfy { $0.count == 11 })
        XCTAssertEqual(back[9][2], "Canteen \"north\"")
        XCTAssertEqual(back.dropFirst().map { $0[7] }, ["certified", "upgrade-required", "requirement-not-met", "certified",
                                                        "in-process", "not-pursued", "unknown-model", "malformed", "certified"])
    }

    func testCSVAddedColumnsNeverShadowTheInventorys() throws {
        let csv = try report("device_id,model,firmware,verdict,line\na,NDE,02.12.72,old,L7\n", .csv)
        XCTAssertEqual(csv, #"""
        device_id,model,firmware,verdict,line,audit_line,audit_verdict,matched_model,required_firmware,detail
        a,NDE,02.12.72,old,L7,2,certified,Schlage NDE,02.12.72,"Schlage NDE Locks: firmware 02.12.72 is at or above 02.12.72, the first certified version"

        """#)
    }

    func testJSONParsesBack() throws {
        let json = try report(Self.sample, .json)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        XCTAssertEqual(object["inventory"] as? String, "inv.csv")
        XCTAssertEqual(object["tables"] as? String, "built-in")
        let summary = try XCTUnwrap(object["summary"] as? [String: Any])
        XCTAssertEqual(summary["devices"] as? Int, 8)
        XCTAssertEqual(summary["certified"] as? Int, 3)
        XCTAssertEqual(summary["malformed"] as? Int, 1)
        XCTAssertEqual(summary["allCertified"] as? Bool, false)
        let devices = try XCTUnwrap(object["devices"] as? [[String: Any]])
        XCTAssertEqual(devices.count, 8)
        XCTAssertEqual(devices[1]["deviceID"] as? String, "d2")
        XCTAssertEqual(devices[1]["verdict"] as? String, "upgrade-required")
        XCTAssertEqual(devices[1]["requiredFirmware"] as? String, "02.12.72")
        XCTAssertEqual(devices[1]["summary"] as? String, "upgrade to ≥ 02.12.72")
        XCTAssertEqual(devices[1]["line"] as? Int, 3)
        XCTAssertEqual((devices[0]["columns"] as? [String: String])?["location"], "Lobby, east")
        XCTAssertEqual((devices[7]["columns"] as? [String: String])?["location"], "Canteen \"north\"")
        XCTAssertEqual(devices[3]["readerModel"] as? String, "MTK2")
        XCTAssertTrue(devices[0]["readerModel"] is NSNull)
        XCTAssertEqual(devices[6]["suggestions"] as? [String], ["NDE"])
        let malformed = try XCTUnwrap(object["malformed"] as? [[String: Any]])
        XCTAssertEqual(malformed.count, 1)
        XCTAssertEqual(malformed[0]["line"] as? Int, 9)
    }

    func testJSONOfAnInventoryWithoutRows() throws {
        let object = try JSONSerialization.jsonObject(with: Data(try report("device_id,model,firmware\n", .json).utf8)) as? [String: Any]
        XCTAssertEqual((object?["devices"] as? [Any])?.count, 0)
        // Issue 20 §5: an inventory with no device certifies nothing (it said "all certified").
        XCTAssertEqual((object?["summary"] as? [String: Any])?["allCertified"] as? Bool, false)
    }

    func testJUnitParsesBackAsXML() throws {
        let xml = try report(Self.sample, .junit)
        let document = try XMLDocument(data: Data(xml.utf8))
        let root = try XCTUnwrap(document.rootElement())
        XCTAssertEqual(root.name, "testsuites")
        XCTAssertEqual(root.attribute(forName: "tests")?.stringValue, "9")
        XCTAssertEqual(root.attribute(forName: "failures")?.stringValue, "5")
        XCTAssertEqual(root.attribute(forName: "errors")?.stringValue, "1")
        let cases = try document.nodes(forXPath: "//testcase").compactMap { $0 as? XMLElement }
        XCTAssertEqual(cases.count, 9)
        XCTAssertEqual(cases[0].attribute(forName: "name")?.stringValue, "d1 (Schlage NDE 02.12.72)")
        XCTAssertEqual(cases[0].attribute(forName: "classname")?.stringValue, "firmware.HQ")
        XCTAssertEqual(cases[0].elements(forName: "failure").count, 0)
        let failure = try XCTUnwrap(cases[1].elements(forName: "failure").first)
        XCTAssertEqual(failure.attribute(forName: "type")?.stringValue, "upgrade-required")
        XCTAssertEqual(failure.attribute(forName: "message")?.stringValue, "upgrade to ≥ 02.12.72")
        XCTAssertEqual(cases[3].attribute(forName: "name")?.stringValue, "d4 (AD400 AD.A.125 with reader MTK2)")
        let error = try XCTUnwrap(cases[7].elements(forName: "error").first)
        XCTAssertEqual(error.attribute(forName: "type")?.stringValue, "malformed")
        XCTAssertEqual(error.stringValue, "inv.csv:9: 4 fields; the header has 6")
        XCTAssertEqual(cases[7].attribute(forName: "line")?.stringValue, "9")
        let failed = cases.filter { !$0.elements(forName: "failure").isEmpty }.compactMap { $0.elements(forName: "failure").first?.attribute(forName: "type")?.stringValue }
        XCTAssertEqual(failed, ["upgrade-required", "requirement-not-met", "in-process", "not-pursued", "unknown-model"])
    }

    func testJUnitEscapesMarkupInValues() throws {
        let xml = try report("device_id,model,firmware,site\n\"<a&b> \"\"q\"\"\",NDE,02.12.72,S'1\n", .junit)
        let document = try XMLDocument(data: Data(xml.utf8))
        let testcase = try XCTUnwrap(try document.nodes(forXPath: "//testcase").first as? XMLElement)
        XCTAssertEqual(testcase.attribute(forName: "name")?.stringValue, "<a&b> \"q\" (NDE 02.12.72)")
        XCTAssertEqual(testcase.attribute(forName: "classname")?.stringValue, "firmware.S'1")
    }

    func testNonASCIIAndInvalidUTF8SurviveJSONAndJUnit() throws {
        var bytes = Array("device_id,model,firmware,site,note\nt\u{fc}r-1,NDE,02.12.72,B\u{fc}ro,\"tab\there\"\nx".utf8)
        bytes += [0xFC, 0x2C] + Array("NDE,02.12.70,Caf".utf8) + [0xE9] + Array(",\u{1}\n".utf8)
        try bytes.withUnsafeBufferPointer { buffer in
            let result = try InventoryAudit.run(buffer, file: "inv.csv", tables: tables)
            for format in [AuditFormat.json, .junit] {
                var out: [UInt8] = []
                var writer = AuditReportWriter(result: result, bytes: buffer, tablesOrigin: "t") { out += $0 }
                writer.write(format)
                XCTAssertNotNil(String(validating: out, as: UTF8.self), "\(format) output is valid UTF-8")
                if format == .json {
                    let object = try JSONSerialization.jsonObject(with: Data(out)) as? [String: Any]
                    let devices = object?["devices"] as? [[String: Any]]
                    XCTAssertEqual(devices?.first?["deviceID"] as? String, "t\u{fc}r-1")
                    XCTAssertEqual(devices?.first?["site"] as? String, "B\u{fc}ro")
                    XCTAssertEqual((devices?.first?["columns"] as? [String: String])?["note"], "tab\there")
                    XCTAssertEqual(devices?.last?["deviceID"] as? String, "x\u{FFFD}")
                    XCTAssertEqual((devices?.last?["columns"] as? [String: String])?["note"], "\u{1}")
                } else {
                    let document = try XMLDocument(data: Data(out))
                    let names = try document.nodes(forXPath: "//testcase").compactMap { ($0 as? XMLElement)?.attribute(forName: "name")?.stringValue }
                    XCTAssertEqual(names, ["t\u{fc}r-1 (NDE 02.12.72)", "x\u{FFFD} (NDE 02.12.70)"])
                }
            }
        }
    }

    func testTableAlignsNonASCIIByCharacters() throws {
        let table = try report("device_id,model,firmware,site\nd1,NDE,02.12.72,B\u{fc}ro\nd2,NDE,02.12.72,HQ\n", .table)
        let lines = table.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines[0], "LINE  DEVICE  SITE  MODEL  FIRMWARE  VERDICT")
        XCTAssertEqual(lines[1], "2     d1      B\u{fc}ro  NDE    02.12.72  certified")
        XCTAssertEqual(lines[2], "3     d2      HQ    NDE    02.12.72  certified")
    }

    func testTableForPeople() throws {
        let table = try report(Self.sample, .table)
        let lines = table.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(lines[0], "LINE  DEVICE  SITE   MODEL        FIRMWARE  READER  VERDICT")
        XCTAssertEqual(lines[2], "3     d2      HQ     NDE          02.12.70          upgrade to ≥ 02.12.72")
        XCTAssertTrue(table.contains("Malformed rows (not audited):\n  inv.csv:9: 4 fields; the header has 6\n"), table)
        XCTAssertTrue(table.hasSuffix("8 devices: 3 certified, 1 upgrade required, 1 certification in process, 1 not pursued, 1 requirement not met, 1 unknown model; 1 malformed row — not all certified\n"), table)
    }
}
