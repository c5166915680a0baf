import ByteCore
import Foundation
import XCTest
import VirtualPN532

/// libnfc's own command-line tools (Debian's libnfc-bin and libnfc-examples) against the virtual
/// reader: they must see a PN532 and the ISO14443A card.
final class LibNFCToolsTests: XCTestCase {
    static func tool(_ name: String) throws -> String {
        for dir in ["/usr/bin", "/usr/local/bin", "/usr/sbin"] where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") {
            return "\(dir)/\(name)"
        }
        throw PN532Error(.notRunning, "\(name) not installed: apt-get install libnfc-bin libnfc-examples")
    }

    /// Runs a tool with the device given through LIBNFC_DEVICE; `whileRunning` is called once it started.
    static func run(_ name: String, _ args: [String] = [], connstring: String, timeout: TimeInterval = 20,
                    whileRunning: (() -> Void)? = nil) throws -> (status: Int32, out: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try tool(name))
        process.arguments = args
        var env = ProcessInfo.processInfo.environment
        env["LIBNFC_DEVICE"] = connstring
        env["LIBNFC_AUTO_SCAN"] = "false"
        env["LIBNFC_LOG_LEVEL"] = "1"
        process.environment = env
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        final class Box: @unchecked Sendable { var data = Data() }
        let box = Box()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { box.data = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        whileRunning?()
        if group.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            group.wait()
            XCTFail("\(name) did not finish in \(timeout) s:\n\(String(decoding: box.data, as: UTF8.self))")
        }
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: box.data, as: UTF8.self))
    }

    func testNfcListSeesPN532AndTheCard() throws {
        let reader = try VirtualReader(card: TestCard())
        defer { reader.stop() }
        let result = try Self.run("nfc-list", connstring: reader.connstring)
        XCTAssertEqual(result.status, 0, result.out)
        XCTAssertTrue(result.out.contains("NFC device: user defined device opened"), result.out)
        XCTAssertTrue(result.out.contains("1 ISO14443A passive target(s) found"), result.out)
        XCTAssertTrue(result.out.contains("ATQA (SENS_RES): 00  44"), result.out)
        XCTAssertTrue(result.out.contains("UID (NFCID1): 04  a2  24  6a  1b  5c  80"), result.out)
        XCTAssertTrue(result.out.contains("SAK (SEL_RES): 20"), result.out)
        XCTAssertTrue(result.out.contains("ATS: 78  80  70  02"), result.out)
        XCTAssertFalse(result.out.contains("Felica"), result.out)
    }

    func testNfcListWithAnEmptyFieldFindsNoTarget() throws {
        let reader = try VirtualReader()
        defer { reader.stop() }
        let result = try Self.run("nfc-list", ["-v"], connstring: reader.connstring)
        XCTAssertEqual(result.status, 0, result.out)
        XCTAssertTrue(result.out.contains("0 ISO14443A passive target(s) found"), result.out)
    }

    func testNfcListThroughTheStableSymlinkAndAnotherUID() throws {
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-pn532-\(UUID().uuidString)").path
        let reader = try VirtualReader(card: TestCard(), uid: [0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66], link: link)
        defer { reader.stop() }
        XCTAssertEqual(reader.connstring, "pn532_uart:\(link)")
        let result = try Self.run("nfc-list", connstring: reader.connstring)
        XCTAssertTrue(result.out.contains("UID (NFCID1): 04  11  22  33  44  55  66"), result.out)
        reader.stop()
        XCTAssertFalse(FileManager.default.fileExists(atPath: link), "the symlink goes away with the reader")
    }

    func testNfcPollFindsTheCardAndEndsWhenItIsRemoved() throws {
        let reader = try VirtualReader(card: TestCard())
        defer { reader.stop() }
        let started = Date()
        let result = try Self.run("nfc-poll", connstring: reader.connstring) {
            // nfc-poll spins on presence checks until the card leaves the field.
            Thread.sleep(forTimeInterval: 1.0)
            reader.remove()
        }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 1.0)
        XCTAssertGreaterThan(reader.rawFrames.filter { $0 == [0xB2] }.count, 5, "nfc-poll kept checking presence until the card left")
        XCTAssertEqual(result.status, 0, result.out)
        XCTAssertTrue(result.out.contains("NFC reader: user defined device opened"), result.out)
        XCTAssertTrue(result.out.contains("ISO/IEC 14443A (106 kbps) target:"), result.out)
        XCTAssertTrue(result.out.contains("UID (NFCID1): 04  a2  24  6a  1b  5c  80"), result.out)
        XCTAssertTrue(result.out.contains("Waiting for card removing..."), result.out)
        XCTAssertTrue(result.out.contains("done."), result.out)
        XCTAssertTrue(reader.rawFrames.contains([0xB2]), "presence checks are R(NAK) B2 through InCommunicateThru")
    }

    func testNfcPollWaitsForACardInsertedLater() throws {
        let reader = try VirtualReader()
        defer { reader.stop() }
        let result = try Self.run("nfc-poll", connstring: reader.connstring) {
            Thread.sleep(forTimeInterval: 0.5)
            try? reader.insert(TestCard(), uid: [0x04, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06])
            Thread.sleep(forTimeInterval: 0.5)
            reader.remove()
        }
        XCTAssertEqual(result.status, 0, result.out)
        XCTAssertTrue(result.out.contains("UID (NFCID1): 04  01  02  03  04  05  06"), result.out)
    }

    func testNfcScanDeviceVerboseDescribesThePN532() throws {
        let reader = try VirtualReader()
        defer { reader.stop() }
        let result = try Self.run("nfc-scan-device", ["-v", "-i"], connstring: reader.connstring)
        XCTAssertEqual(result.status, 0, result.out)
        XCTAssertTrue(result.out.contains("chip: PN532 v1.6"), result.out)
        XCTAssertTrue(result.out.contains("initator mode modulations: ISO/IEC 14443A ("), result.out)
    }
}
