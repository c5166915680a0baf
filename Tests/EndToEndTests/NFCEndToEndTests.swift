import ByteCore
import Foundation
import LockBenchTestSupport
import XCTest

/// `lockbench nfc …` and `lockbench doctor` run as a user would, against libnfc's own tools.
final class NFCEndToEndTests: XCTestCase {
    /// A long-running `lockbench` whose stdout lines can be awaited and whose stdin can be written.
    final class Running: Sendable {
        let process = Process()
        private let input = Pipe()
        private let lines = Monitor<[String]>([])

        init(_ arguments: [String]) throws {
            process.executableURL = LockBenchProcess.binary
            process.arguments = arguments
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            process.standardInput = input
            out.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                guard let self, !data.isEmpty else { return }
                self.lines.withLock { $0 += String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init) }
            }
            try process.run()
        }

        func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

        /// The first line starting with `prefix`, waiting for it.
        func line(_ prefix: String, after count: Int = 0, timeout: TimeInterval = 10) -> String? {
            let match = { (lines: [String]) in lines.dropFirst(count).first(where: { $0.hasPrefix(prefix) }) }
            return lines.wait(until: Date().addingTimeInterval(timeout), for: { match($0) != nil }) { lines, _ in match(lines) }
        }

        var lineCount: Int { lines.withLock { $0.count } }
        var output: [String] { lines.withLock { $0 } }
    }

    static func nfcList(_ connstring: String) throws -> String {
        try LockBenchProcess.run([], executable: URL(fileURLWithPath: "/usr/bin/nfc-list"),
                                 environment: ["LIBNFC_DEVICE": connstring, "LIBNFC_AUTO_SCAN": "false", "PATH": "/usr/bin:/bin"], timeout: 60).stdout
    }

    func testVirtualReaderCommandServesNfcListAndTakesInsertRemove() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let link = dir.appendingPathComponent("reader").path
        let reader = try Running(["nfc", "virtual-reader", "--link", link, "--card-uid", "04C0FFEE123456"])
        defer { if reader.process.isRunning { reader.process.terminate() } }
        XCTAssertEqual(reader.line("connstring: "), "connstring: pn532_uart:\(link)")
        XCTAssertNotNil(reader.line("card: inserted UID 04c0ffee123456"), "\(reader.output)")
        XCTAssertTrue(try Self.nfcList("pn532_uart:\(link)").contains("UID (NFCID1): 04  c0  ff  ee  12  34  56"))
        let mark = reader.lineCount
        reader.send("remove")
        XCTAssertNotNil(reader.line("card: removed", after: mark))
        XCTAssertFalse(try Self.nfcList("pn532_uart:\(link)").contains("ISO14443A passive target(s) found:"))
        reader.send("insert 04112233445566")
        XCTAssertNotNil(reader.line("card: inserted UID 04112233445566"))
        XCTAssertTrue(try Self.nfcList("pn532_uart:\(link)").contains("UID (NFCID1): 04  11  22  33  44  55  66"))
        reader.process.interrupt()  // SIGINT: a clean stop
        reader.process.waitUntilExit()
        XCTAssertEqual(reader.process.terminationStatus, 0)
        XCTAssertNotNil(reader.line("virtual PN532 stopped"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: link), "the symlink is removed on exit")
    }

    func testVirtualReaderControlFIFOAndSIGTERM() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let fifo = dir.appendingPathComponent("control").path
        let reader = try Running(["nfc", "virtual-reader", "--no-card", "--control", fifo])
        defer { if reader.process.isRunning { reader.process.terminate() } }
        let connstring = try XCTUnwrap(reader.line("connstring: ")).replacingOccurrences(of: "connstring: ", with: "")
        XCTAssertNotNil(reader.line("control: \(fifo)"))
        XCTAssertNotNil(reader.line("card: none"))
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: fifo))
        handle.write(Data("insert\n".utf8))
        try handle.close()
        XCTAssertNotNil(reader.line("card: inserted UID 04a2246a1b5c80"))
        XCTAssertTrue(try Self.nfcList(connstring).contains("1 ISO14443A passive target(s) found"))
        reader.process.terminate()  // SIGTERM
        reader.process.waitUntilExit()
        XCTAssertEqual(reader.process.terminationStatus, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: fifo))
    }

    func testVirtualReaderRejectsABadUID() throws {
        let result = try LockBenchProcess.run(["nfc", "virtual-reader", "--card-uid", "88112233"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains("cascade tag"), result.stderr)
    }

    func testNfcListFindsTheVirtualReaderAsJSON() throws {
        let reader = try Running(["nfc", "virtual-reader"])
        defer { reader.process.terminate(); reader.process.waitUntilExit() }
        let connstring = try XCTUnwrap(reader.line("connstring: ")).replacingOccurrences(of: "connstring: ", with: "")
        let result = try LockBenchProcess.run(["nfc", "list", "--json"], environment: ["LIBNFC_DEVICE": connstring, "LIBNFC_AUTO_SCAN": "false"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let entries = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [[String: String]]
        XCTAssertEqual(entries, [["connstring": connstring, "name": "user defined device", "chip": "PN532 v1.6"]])
    }

    func testNfcListWithNoReaderIsAnEnvironmentFailure() throws {
        let result = try LockBenchProcess.run(["nfc", "list"], environment: ["LIBNFC_AUTO_SCAN": "false"])
        XCTAssertEqual(result.status, 3)
        XCTAssertTrue(result.stderr.contains("pn532_uart:/dev/ttyUSB0"), result.stderr)
    }

    /// This machine: libnfc present, no USB and no kernel Bluetooth.
    func testDoctorOnThisMachine() throws {
        let result = try LockBenchProcess.run(["doctor", "--json"], environment: ["LIBNFC_AUTO_SCAN": "false"])
        XCTAssertEqual(result.status, 1, result.stdout)
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        XCTAssertEqual(report["ok"] as? Bool, false)
        let checks = Dictionary((report["checks"] as! [[String: Any]]).map { ($0["id"] as! String, $0) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(checks["libnfc"]?["status"] as? String, "ok")
        XCTAssertTrue((checks["libnfc"]?["detail"] as? String)?.contains("libnfc 1.") == true)
        XCTAssertEqual(checks["nfc-devices"]?["status"] as? String, "problem")
        XCTAssertTrue((checks["nfc-devices"]?["fix"] as? String)?.contains("lockbench nfc virtual-reader") == true)
        XCTAssertEqual(checks["usb-readers"]?["status"] as? String, "ok")
        XCTAssertTrue((checks["usb-readers"]?["detail"] as? String)?.hasPrefix("none plugged in") == true)
        XCTAssertEqual(checks["kernel-modules"]?["status"] as? String, "ok")
        XCTAssertEqual(checks["pty"]?["status"] as? String, "ok")
        XCTAssertEqual(checks["bluetooth-kernel"]?["status"] as? String, "problem")
        XCTAssertTrue((checks["bluetooth-kernel"]?["fix"] as? String)?.contains("modprobe bluetooth") == true)
        XCTAssertEqual(checks["bluetooth-adapters"]?["status"] as? String, "problem")
        XCTAssertEqual(checks["libnfc-config"]?["status"] as? String, "ok")
    }

    func testDoctorSeesAConfiguredVirtualReader() throws {
        let reader = try Running(["nfc", "virtual-reader"])
        defer { reader.process.terminate(); reader.process.waitUntilExit() }
        let connstring = try XCTUnwrap(reader.line("connstring: ")).replacingOccurrences(of: "connstring: ", with: "")
        let result = try LockBenchProcess.run(["doctor"], environment: ["LIBNFC_DEVICE": connstring, "LIBNFC_AUTO_SCAN": "false"])
        XCTAssertTrue(result.stdout.contains("[ok     ] NFC readers: libnfc finds \(connstring)"), result.stdout)
        XCTAssertTrue(result.stdout.contains("LIBNFC_DEVICE=\(connstring)"), result.stdout)
        XCTAssertTrue(result.stdout.contains("fix: sudo modprobe bluetooth"), result.stdout)
    }
}

/// Help text of the NFC commands, pinned so changes are deliberate.
final class NFCHelpEndToEndTests: XCTestCase {
    func testNfcHelpListsItsSubcommands() throws {
        let result = try LockBenchProcess.run(["nfc", "--help"])
        XCTAssertEqual(result.status, 0)
        // Compare with runs of whitespace collapsed: the help wraps at the terminal's width.
        let text = result.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        XCTAssertTrue(text.contains("virtual-reader Run a virtual PN532 reader that libnfc opens as pn532_uart:/dev/pts/N."), result.stdout)
        XCTAssertTrue(text.contains("list List the NFC readers libnfc finds, with their connstrings."), result.stdout)
    }

    func testVirtualReaderHelpDocumentsTheConsoleCommands() throws {
        let result = try LockBenchProcess.run(["nfc", "virtual-reader", "--help"])
        XCTAssertEqual(result.status, 0)
        for text in ["--link <path>", "--card-uid <hex>", "--no-card", "--control <path>", "insert [UID-HEX]", "remove", "quit",
                     "--key, --credential-key <key.pem>", "--document, --documents <doc.cbor>",
                     "--trust-reader, --reader-identity, --lock-config <file>", "--reader-group <hex>", "--fault <name>"] {
            XCTAssertTrue(result.stdout.contains(text), "\(text) missing from:\n\(result.stdout)")
        }
    }

    func testDoctorIsARootSubcommand() throws {
        let result = try LockBenchProcess.run(["--help"])
        XCTAssertTrue(result.stdout.contains("doctor"), result.stdout)
        XCTAssertTrue(result.stdout.contains("nfc"), result.stdout)
    }
}
