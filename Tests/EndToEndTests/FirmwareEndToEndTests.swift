import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import LockBenchTestSupport
import XCTest

/// `lockbench firmware …` as a user runs it: verdicts, exit codes, formats, table lookup.
final class FirmwareEndToEndTests: XCTestCase {
    var tables: String { LockBenchProcess.repositoryRoot.appendingPathComponent("firmware-tables").path }
    var example: String { LockBenchProcess.repositoryRoot.appendingPathComponent("docs/examples/site-inventory.csv").path }

    func firmware(_ arguments: [String], environment: [String: String] = [:], currentDirectory: URL? = nil,
                  stdin: String? = nil) throws -> LockBenchProcess.Result {
        try LockBenchProcess.run(["firmware"] + arguments, stdin: stdin, environment: environment, currentDirectory: currentDirectory)
    }

    // MARK: check: every verdict and its exit code

    func testCheckVerdictsAndExitCodes() throws {
        let cases: [([String], Int32, String)] = [
            (["--model", "nde", "--firmware", "02.12.72"], 0, "Schlage NDE (lock) on firmware 02.12.72: certified"),
            (["--model", "Schlage NDE", "--firmware", "02.12.100"], 0, ": certified"),
            (["--model", "NDE", "--firmware", "02.12.70"], 1, ": upgrade to ≥ 02.12.72"),
            (["--model", "RC15", "--firmware", "01.08.02"], 1, "Schlage RC (reader) on firmware 01.08.02: certification in process"),
            (["--model", "MTBK15", "--firmware", "60.47.27"], 1, ": certification in process"),
            (["--model", "Schlage Control Locks", "--firmware", "04.12.00"], 1, ": not pursued"),
            (["--model", "AD300", "--firmware", "AD.A.125"], 1, ": requirement not met: needs an MT2/MTK2 reader"),
            (["--model", "AD400", "--firmware", "AD.A.125", "--reader", "MTK15"], 1, ": requirement not met"),
            (["--model", "AD400", "--firmware", "AD.A.125", "--reader", "Schlage MTK2"], 0, ": certified"),
            (["--model", "AD300", "--firmware", "AD.B.130", "--reader", "MT2"], 1, ": upgrade to ≥ AD.A.125"),
            (["--model", "MTK15", "--firmware", "22.02"], 0, "Schlage MT15 (reader) on firmware 22.02: certified"),
        ]
        for (arguments, status, output) in cases {
            let result = try firmware(["check"] + arguments + ["--tables", tables])
            XCTAssertEqual(result.status, status, "\(arguments): \(result.stdout)\(result.stderr)")
            XCTAssertTrue(result.stdout.contains(output), "\(arguments): \(result.stdout)")
        }
    }

    func testUnknownModelIsAUsageErrorWithSuggestions() throws {
        let result = try firmware(["check", "--model", "NDX", "--firmware", "02.12.72"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains("'NDX' is not a model or variant"), result.stderr)
        XCTAssertTrue(result.stderr.contains("did you mean NDE?"), result.stderr)
        let json = try firmware(["check", "--model", "ad", "--firmware", "1", "--json"])
        XCTAssertEqual(json.status, 2)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(object?["verdict"] as? String, "unknown-model")
        XCTAssertEqual(object?["suggestions"] as? [String], ["AD300", "AD400"])
    }

    func testUsageErrorsExit2() throws {
        let cases: [([String], String)] = [
            (["check", "--model", "NDE", "--firmware", "02..12"], "empty segment 2"),
            (["check", "--model", "NDE", "--firmware", "1.2-beta"], "contains '-'"),
            (["check", "--model", "NDE"], "--firmware"),
            (["check", "--model", " ", "--firmware", "1"], "--model is empty"),
            (["list", "--kind", "door"], "door"),
            (["audit", "x.csv", "--format", "xml"], "xml"),
            (["audit", "/nonexistent/inventory.csv"], "/nonexistent/inventory.csv: cannot read the inventory"),
            (["list", "--tables", "/nonexistent/tables"], "/nonexistent/tables: not a directory of certification tables"),
        ]
        for (arguments, message) in cases {
            let result = try firmware(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }

    func testCheckJSON() throws {
        let result = try firmware(["check", "--model", "LE", "--firmware", "01.07.60", "--json", "--tables", tables])
        XCTAssertEqual(result.status, 1)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["verdict"] as? String, "upgrade-required")
        XCTAssertEqual(object["certified"] as? Bool, false)
        XCTAssertEqual(object["requiredFirmware"] as? String, "01.07.67")
        XCTAssertEqual(object["matchedModel"] as? String, "Schlage LE")
        XCTAssertEqual(object["kind"] as? String, "lock")
        XCTAssertEqual(object["tables"] as? String, tables)
        XCTAssertTrue(object["reader"] is NSNull)
    }

    // MARK: list

    func testListTableAndJSON() throws {
        let result = try firmware(["list", "--tables", tables])
        XCTAssertEqual(result.status, 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "Certification tables: \(tables)")
        XCTAssertEqual(lines.count, 2 + 16)
        XCTAssertTrue(lines.contains { $0.hasPrefix("reader  Schlage MTB") && $0.contains("60.47.14, 60.47.27") && $0.contains("In process") }, result.stdout)
        XCTAssertTrue(lines.contains { $0.hasPrefix("lock    Schlage AD300") && $0.hasSuffix("an MT2/MTK2 reader") }, result.stdout)

        let readers = try firmware(["list", "--kind", "reader", "--json", "--tables", tables])
        XCTAssertEqual(readers.status, 0)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(readers.stdout.utf8)) as? [String: Any])
        let models = try XCTUnwrap(object["models"] as? [[String: Any]])
        XCTAssertEqual(models.map { $0["model"] as? String }, ["RC", "MTB", "MT15", "OEM200", "MT20"])
        XCTAssertEqual(models[1]["firstCertifiedVersions"] as? [String], ["60.47.14", "60.47.27"])
        XCTAssertEqual(models[0]["variants"] as? [String], ["RC11", "RC15", "RCK15"])
        let locks = try firmware(["list", "--kind", "lock", "--json"])
        let lockModels = (try JSONSerialization.jsonObject(with: Data(locks.stdout.utf8)) as? [String: Any])?["models"] as? [[String: Any]]
        XCTAssertEqual(lockModels?.count, 11)
    }

    // MARK: where the tables come from

    func testTablesFromAnywhereEnvironmentAndFlag() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        // From another directory, with no flag: the source tree's tables (or the built-in copy).
        let anywhere = try firmware(["check", "--model", "NDE", "--firmware", "02.12.72"], currentDirectory: dir)
        XCTAssertEqual(anywhere.status, 0, anywhere.stderr)

        // A table of our own, by environment and by flag (the flag wins).
        let own = dir.appendingPathComponent("own")
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        try Data("""
        kind,vendor,model,variants,published_name,hardware,first_certified,status,requires,source
        lock,Acme,Bolt 9,,Acme Bolt 9,all,3.0,Complete,,test

        """.utf8).write(to: own.appendingPathComponent("acme.csv"))
        let byEnvironment = try firmware(["check", "--model", "acme bolt-9", "--firmware", "3.1"],
                                         environment: ["LOCKBENCH_TABLES": own.path])
        XCTAssertEqual(byEnvironment.status, 0, byEnvironment.stderr)
        XCTAssertTrue(byEnvironment.stdout.contains("Acme Bolt 9 (lock) on firmware 3.1: certified"), byEnvironment.stdout)
        let flagWins = try firmware(["check", "--model", "NDE", "--firmware", "02.12.72", "--tables", tables],
                                    environment: ["LOCKBENCH_TABLES": own.path])
        XCTAssertEqual(flagWins.status, 0, flagWins.stderr)
        let notThere = try firmware(["check", "--model", "NDE", "--firmware", "02.12.72"], environment: ["LOCKBENCH_TABLES": own.path])
        XCTAssertEqual(notThere.status, 2)
    }

    func testAnInvalidTableIsReportedWithFileAndLine() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let table = dir.appendingPathComponent("bad.csv")
        try Data("""
        # comment
        kind,vendor,model,variants,published_name,hardware,first_certified,status,requires,source
        lock,Acme,Bolt,,Acme Bolt,all,3..0,Complete,,test
        gate,Acme,Gate,,Acme Gate,all,1.0,Complete,,test
        lock,Acme,Latch,,Acme Latch,all,1.0,Done,,test

        """.utf8).write(to: table)
        let result = try firmware(["list", "--tables", dir.path])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.stderr.split(separator: "\n").map(String.init), [
            "\(table.path):3: first_certified: firmware version '3..0' has an empty segment 2 (two dots, or a dot at an end)",
            "\(table.path):4: unknown kind 'gate'; expected lock or reader",
            "\(table.path):5: unknown status 'Done'; expected Complete, In process or n/a",
        ])
    }

    // MARK: audit

    func testAuditOfTheExampleInventory() throws {
        let result = try firmware(["audit", example])
        XCTAssertEqual(result.status, 1, "the example has devices that are not certified")
        XCTAssertTrue(result.stdout.hasPrefix("LINE  DEVICE        SITE   MODEL"), result.stdout)
        XCTAssertTrue(result.stdout.contains("15 devices: 7 certified, 3 upgrade required, 2 certification in process, 1 not pursued, 1 requirement not met, 1 unknown model; 1 malformed row — not all certified"), result.stdout)
        XCTAssertTrue(result.stdout.contains("site-inventory.csv:17: 5 fields; the header has 6"), result.stdout)
        XCTAssertEqual(result.stderr, "", "the table report carries the malformed rows itself")
        for verdict in ["certified", "upgrade to ≥ 02.12.72", "certification in process", "not pursued",
                        "requirement not met: needs an MT2/MTK2 reader", "unknown model; did you mean NDE?"] {
            XCTAssertTrue(result.stdout.contains(verdict), verdict)
        }
    }

    func testAuditExitsZeroOnlyWhenEveryDeviceIsCertified() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let good = dir.appendingPathComponent("good.csv"), bad = dir.appendingPathComponent("bad.csv")
        try Data("device_id,model,firmware,reader_model\na,NDE,02.12.72,\nb,AD300,AD.A.125,MT2\nc,MTK15,22.10,\n".utf8).write(to: good)
        try Data("device_id,model,firmware\na,NDE,02.12.72\nb,NDE,02.12.71\n".utf8).write(to: bad)
        let ok = try firmware(["audit", good.path])
        XCTAssertEqual(ok.status, 0, ok.stdout + ok.stderr)
        XCTAssertTrue(ok.stdout.contains("3 devices: 3 certified — all certified"), ok.stdout)
        XCTAssertEqual(try firmware(["audit", bad.path]).status, 1)
        let stdin = try firmware(["audit", "-", "--format", "csv"], stdin: "device_id,model,firmware\na,NDE,02.12.72\n")
        XCTAssertEqual(stdin.status, 0, stdin.stderr)
        XCTAssertTrue(stdin.stdout.hasPrefix("device_id,model,firmware,line,verdict"), stdin.stdout)
    }

    func testMalformedInventories() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let headerless = dir.appendingPathComponent("headerless.csv")
        try Data("a,NDE,02.12.72\n".utf8).write(to: headerless)
        let noHeader = try firmware(["audit", headerless.path])
        XCTAssertEqual(noHeader.status, 2)
        XCTAssertTrue(noHeader.stderr.contains("\(headerless.path):1: the header lacks device_id, model, firmware"), noHeader.stderr)

        let empty = dir.appendingPathComponent("empty.csv")
        try Data().write(to: empty)
        let emptyResult = try firmware(["audit", empty.path])
        XCTAssertEqual(emptyResult.status, 2)
        XCTAssertTrue(emptyResult.stderr.contains("\(empty.path):1: empty inventory"), emptyResult.stderr)

        let rows = dir.appendingPathComponent("rows.csv")
        try Data("device_id,model,firmware\na,NDE,02.12.72\nb,NDE\nc,\"NDE,02.12.72\nd,NDE,02..72\ne,NDE,02.12.72\n".utf8).write(to: rows)
        let result = try firmware(["audit", rows.path, "--format", "csv"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr.split(separator: "\n").map(String.init), [
            "\(rows.path):3: 2 fields; the header has 3",
            "\(rows.path):4: a quoted field opened on this line is never closed",
            "\(rows.path):5: firmware: firmware version '02..72' has an empty segment 2 (two dots, or a dot at an end)",
            "2 devices: 2 certified; 3 malformed rows — not all certified",
        ])
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 6)
        XCTAssertEqual(lines.map { $0.split(separator: ",", omittingEmptySubsequences: false)[4] },
                       ["verdict", "certified", "malformed", "malformed", "malformed", "certified"])
    }

    func testAuditJSON() throws {
        let result = try firmware(["audit", example, "--format", "json"])
        XCTAssertEqual(result.status, 1)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let summary = try XCTUnwrap(object["summary"] as? [String: Any])
        XCTAssertEqual(summary["devices"] as? Int, 15)
        XCTAssertEqual(summary["certified"] as? Int, 7)
        XCTAssertEqual(summary["malformed"] as? Int, 1)
        let devices = try XCTUnwrap(object["devices"] as? [[String: Any]])
        XCTAssertEqual(devices.count, 15)
        let byID = Dictionary(uniqueKeysWithValues: devices.map { ($0["deviceID"] as! String, $0) })
        XCTAssertEqual(byID["hq-lobby-2"]?["verdict"] as? String, "upgrade-required")
        XCTAssertEqual(byID["hq-dock"]?["verdict"] as? String, "requirement-not-met")
        XCTAssertEqual(byID["pl-fence"]?["suggestions"] as? [String], ["NDE"])
        XCTAssertEqual((byID["hq-lobby-1"]?["columns"] as? [String: String])?["location"], "Lobby, east door")
        XCTAssertEqual((byID["pl-canteen"]?["columns"] as? [String: String])?["location"], "Canteen \"north\" door")
        XCTAssertEqual((object["malformed"] as? [[String: Any]])?.first?["line"] as? Int, 17)
    }

    func testAuditCSVKeepsExtraColumns() throws {
        let result = try firmware(["audit", example, "--format", "csv"])
        XCTAssertEqual(result.status, 1)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 17)
        XCTAssertEqual(lines[0], "site,device_id,location,model,firmware,reader_model,line,verdict,matched_model,required_firmware,detail")
        XCTAssertTrue(lines[1].hasPrefix("HQ,hq-lobby-1,\"Lobby, east door\",Schlage NDE,02.12.72,,2,certified,Schlage NDE,02.12.72,"), lines[1])
        XCTAssertTrue(lines[14].hasPrefix("Plant,pl-canteen,\"Canteen \"\"north\"\" door\",Control BM,05.11.39,,15,certified,"), lines[14])
        XCTAssertTrue(lines[16].hasPrefix(",,,,,,17,malformed,"), lines[16])
    }

    func testAuditJUnitParsesBackAsXML() throws {
        let result = try firmware(["audit", example, "--format", "junit"])
        XCTAssertEqual(result.status, 1)
        let document = try XMLDocument(data: Data(result.stdout.utf8))
        let suite = try XCTUnwrap(try document.nodes(forXPath: "/testsuites/testsuite").first as? XMLElement)
        XCTAssertEqual(suite.attribute(forName: "tests")?.stringValue, "16")
        XCTAssertEqual(suite.attribute(forName: "failures")?.stringValue, "8")
        XCTAssertEqual(suite.attribute(forName: "errors")?.stringValue, "1")
        let cases = try document.nodes(forXPath: "//testcase").compactMap { $0 as? XMLElement }
        XCTAssertEqual(cases.count, 16)
        XCTAssertEqual(try document.nodes(forXPath: "//testcase/failure").count, 8)
        XCTAssertEqual(try document.nodes(forXPath: "//testcase/error").count, 1)
        let dock = try XCTUnwrap(cases.first { $0.attribute(forName: "name")?.stringValue?.hasPrefix("hq-dock ") == true })
        XCTAssertEqual(dock.elements(forName: "failure").first?.attribute(forName: "type")?.stringValue, "requirement-not-met")
        XCTAssertEqual(dock.attribute(forName: "classname")?.stringValue, "firmware.HQ")

        // The same XML through the streaming parser: well-formed, with every test case.
        final class Counter: NSObject, XMLParserDelegate {
            var testcases = 0
            func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
                if name == "testcase" { testcases += 1 }
            }
        }
        let parser = XMLParser(data: Data(result.stdout.utf8))
        let counter = Counter()
        parser.delegate = counter
        XCTAssertTrue(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        XCTAssertEqual(counter.testcases, 16)
    }

    func testHelpNamesTheSubcommands() throws {
        let result = try firmware(["--help"])
        XCTAssertEqual(result.status, 0)
        for word in ["list", "check", "audit", "LOCKBENCH_TABLES", "Exit codes"] {
            XCTAssertTrue(result.stdout.contains(word), "\(word): \(result.stdout)")
        }
    }
}
