import ByteCore
import Foundation
import XCTest
@testable import VirtualPN532
#if canImport(Glibc)
import Glibc
#endif

/// The virtual PN532 at the wire, with scripted frame sequences from a raw pty client: the
/// behaviours libnfc's tools do not exercise (NACK, ACK abort, late-reply cancellation, error
/// frames, extended frames), and target mode through libnfc's own nfc-emulate-forum-tag4.
final class VirtualPN532WireTests: XCTestCase {
    /// A raw client on the pty slave, as libnfc's uart bus would be.
    final class RawClient {
        let fd: Int32
        init(_ path: String) throws {
            fd = open(path, O_RDWR | O_NOCTTY)
            guard fd >= 0 else { throw PN532Error(.ptyUnavailable, "open \(path): \(errno)") }
        }
        deinit { close(fd) }

        func send(_ bytes: [UInt8]) { _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }

        /// Everything that arrives within `timeout` after the first byte (or nothing).
        func receive(timeout: Int32 = 300, settle: Int32 = 30) -> [UInt8] {
            var out: [UInt8] = []
            var wait = timeout
            while true {
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&pfd, 1, wait) > 0 else { return out }
                var buffer = [UInt8](repeating: 0, count: 1024)
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { return out }
                out += buffer[0..<n]
                wait = settle
            }
        }

        /// Sends a command; returns what came back.
        func exchange(_ code: UInt8, _ data: [UInt8] = [], timeout: Int32 = 300) -> [UInt8] {
            send(PN532Wire.command(code, data))
            return receive(timeout: timeout)
        }
    }

    static func ackThenReply(_ code: UInt8, _ data: [UInt8]) -> [UInt8] { PN532Wire.ack + PN532Wire.reply(to: code, data) }

    func testSessionOpeningAsLibNFCSendsIt() throws {
        let reader = try VirtualReader()
        defer { reader.stop() }
        let client = try RawClient(reader.devicePath)
        client.send(PN532Wire.wakeUpPreamble)
        XCTAssertEqual(client.exchange(0x14, [0x01]), Self.ackThenReply(0x14, []))
        XCTAssertEqual(client.exchange(0x00, [0x00] + Array("libnfc".utf8)), Self.ackThenReply(0x00, [0x00] + Array("libnfc".utf8)))
        XCTAssertEqual(client.exchange(0x02), Self.ackThenReply(0x02, [0x32, 0x01, 0x06, 0x07]))
        XCTAssertEqual(client.exchange(0x08, [0x63, 0x02, 0x80, 0x63, 0x03, 0x80]), Self.ackThenReply(0x08, []))
        XCTAssertEqual(client.exchange(0x06, [0x63, 0x02, 0x63, 0x3C]), Self.ackThenReply(0x06, [0x80, 0x00]))
        XCTAssertEqual(client.exchange(0x4A, [0x01, 0x03, 0x00]), Self.ackThenReply(0x4A, [0x00]), "type B finds nothing")
        XCTAssertEqual(client.exchange(0x16, [0xF0]), Self.ackThenReply(0x16, [0x00]))
        XCTAssertEqual(reader.statistics.sessions, 1)
        XCTAssertFalse(reader.hasSession)
    }

    func testNackResendsTheLastReply() throws {
        let reader = try VirtualReader()
        defer { reader.stop() }
        let client = try RawClient(reader.devicePath)
        let reply = client.exchange(0x02)
        XCTAssertEqual(reply, Self.ackThenReply(0x02, [0x32, 0x01, 0x06, 0x07]))
        client.send(PN532Wire.nack)
        XCTAssertEqual(client.receive(), PN532Wire.reply(to: 0x02, [0x32, 0x01, 0x06, 0x07]))
    }

    func testUnknownOrShortCommandsGetTheErrorFrame() throws {
        let reader = try VirtualReader()
        defer { reader.stop() }
        let client = try RawClient(reader.devicePath)
        XCTAssertEqual(client.exchange(0x7E), PN532Wire.ack + PN532Wire.errorFrame)
        XCTAssertEqual(client.exchange(0x4A, [0x01]), PN532Wire.ack + PN532Wire.errorFrame)
        client.send([0x00, 0x00, 0xFF, 0x03, 0xFD, 0xD4, 0x02, 0x00, 0x00])  // bad data checksum: dropped
        XCTAssertEqual(client.receive(timeout: 100), [])
        XCTAssertEqual(client.exchange(0x02), Self.ackThenReply(0x02, [0x32, 0x01, 0x06, 0x07]), "the stream resynchronises")
    }

    func testAckAbortsAWaitingAutoPoll() throws {
        let reader = try VirtualReader()
        defer { reader.stop() }
        let client = try RawClient(reader.devicePath)
        XCTAssertEqual(client.exchange(0x60, [0xFF, 0x01, 0x20, 0x10], timeout: 200), PN532Wire.ack, "an endless InAutoPoll waits")
        client.send(PN532Wire.ack)
        try reader.insert(TestCard())
        XCTAssertEqual(client.receive(timeout: 200), [], "the aborted poll never answers, even when a card comes")
        let poll = client.exchange(0x60, [0x01, 0x01, 0x20])
        XCTAssertEqual(Array(poll.prefix(6)), PN532Wire.ack)
        XCTAssertEqual(Array(poll.dropFirst(6)), PN532Wire.reply(to: 0x60, [0x01, 0x20, 0x11, 0x01, 0x00, 0x44, 0x20, 0x07] + VirtualCard.defaultUID + VirtualCard.defaultATS))
    }

    func testLateReplyIsCancelledByTheNextCommand() throws {
        let card = TestCard()
        let reader = try VirtualReader(card: card)
        defer { reader.stop() }
        let client = try RawClient(reader.devicePath)
        client.send(PN532Wire.command(0x12, [0x14]))  // SetParameters: auto RATS
        _ = client.receive()
        XCTAssertEqual(Array(client.exchange(0x4A, [0x01, 0x00]).dropFirst(6).prefix(8)), [0x00, 0x00, 0xFF, 0x14, 0xEC, 0xD5, 0x4B, 0x01])
        // A slow APDU (300 ms): the host gives up after 50 ms and sends something else.
        XCTAssertEqual(client.exchange(0x40, [0x01, 0x80, 0x5E, 0x00, 0x00, 30], timeout: 50), PN532Wire.ack)
        XCTAssertEqual(client.exchange(0x02), Self.ackThenReply(0x02, [0x32, 0x01, 0x06, 0x07]))
        XCTAssertEqual(client.receive(timeout: 500), [], "the slow APDU's answer never arrives late")
        XCTAssertEqual(client.exchange(0x40, [0x01, 0x80, 0xEE, 0x00, 0x00, 0x01, 0x42]), Self.ackThenReply(0x40, [0x00, 0x42, 0x90, 0x00]))
    }

    func testExtendedFramesBothWays() throws {
        let reader = try VirtualReader(card: TestCard())
        defer { reader.stop() }
        let client = try RawClient(reader.devicePath)
        _ = client.exchange(0x12, [0x14])
        _ = client.exchange(0x4A, [0x01, 0x00])
        let data = (0..<255).map { UInt8(truncatingIfNeeded: $0) }
        let command = [0x01, 0x80, 0xEE, 0x00, 0x00, 0xFF] + data
        client.send(PN532Wire.command(0x40, command, forceExtended: true))
        let reply = client.receive()
        XCTAssertEqual(reply, Self.ackThenReply(0x40, [0x00] + data + [0x90, 0x00]))
        XCTAssertEqual(Array(reply.dropFirst(6).prefix(5)), [0x00, 0x00, 0xFF, 0xFF, 0xFF], "a 260-byte reply is an extended frame")
    }

    func testStatusBytesNeverHaveBit7() throws {
        let reader = try VirtualReader(card: TestCard())
        defer { reader.stop() }
        let client = try RawClient(reader.devicePath)
        let statusCommands: [(UInt8, [UInt8])] = [
            (0x40, [0x01, 0x00, 0xA4]), (0x40, [0x02, 0x00]), (0x42, [0xB2]), (0x42, [0x6A, 0x02]), (0x44, [0x01]),
            (0x52, [0x00]), (0x54, [0x01]), (0x86, []), (0x8E, [0x90, 0x00]), (0x16, [0xF0]), (0x4E, [0x01, 0x00, 0x00]),
        ]
        for (code, data) in statusCommands {
            let reply = client.exchange(code, data)
            XCTAssertGreaterThan(reply.count, 13, "0x\([code].hex)")
            guard reply.count > 13 else { continue }
            XCTAssertEqual(reply[13] & 0x80, 0, "status of 0x\([code].hex): \(reply.hex)")
        }
    }

    /// Target mode: libnfc's nfc-emulate-forum-tag4 runs the PN532 as an NFC Forum type 4 tag;
    /// an external reader tapping the virtual chip reads it.
    func testTargetModeWithNfcEmulateForumTag4() throws {
        let reader = try VirtualReader()
        defer { reader.stop() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try LibNFCToolsTests.tool("nfc-emulate-forum-tag4"))
        process.environment = ["LIBNFC_DEVICE": reader.connstring, "LIBNFC_AUTO_SCAN": "false", "PATH": "/usr/bin:/bin"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() }; process.waitUntilExit() }
        let deadline = Date().addingTimeInterval(5)
        while !reader.hasSession && Date() < deadline { usleep(10_000) }
        usleep(200_000)  // TgInitAsTarget is waiting for a reader
        let phone = reader.tapExternalReader()
        XCTAssertEqual(try phone.transceive([0x00, 0xA4, 0x04, 0x00, 0x07, 0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01, 0x00]), [0x90, 0x00])
        XCTAssertEqual(try phone.transceive([0x00, 0xA4, 0x00, 0x0C, 0x02, 0xE1, 0x03]), [0x90, 0x00])
        XCTAssertEqual(try phone.transceive([0x00, 0xB0, 0x00, 0x00, 0x0F]),
                       [0x00, 0x0F, 0x20, 0x00, 0x54, 0x00, 0xFF, 0x04, 0x06, 0xE1, 0x04, 0xFF, 0xFE, 0x00, 0x00, 0x90, 0x00])
        XCTAssertEqual(try phone.transceive([0x00, 0xA4, 0x00, 0x0C, 0x02, 0xE1, 0x04]), [0x90, 0x00])
        XCTAssertEqual(try phone.transceive([0x00, 0xB0, 0x00, 0x00, 0x02]), [0x00, 33, 0x90, 0x00])
        reader.removeExternalReader()
    }
}
