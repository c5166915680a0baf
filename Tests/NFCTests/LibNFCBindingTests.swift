import ByteCore
import Foundation
import XCTest
@testable import NFC
import VirtualPN532

/// The binding through the real libnfc 1.8.0 and its pn532_uart driver, against the virtual PN532.
final class LibNFCBindingTests: XCTestCase {
    static let select: [UInt8] = [0x00, 0xA4, 0x04, 0x00, 0x07, 0xA0, 0x00, 0x00, 0x08, 0x58, 0x01, 0x01, 0x00]

    private func openReader(_ reader: VirtualReader) throws -> (NFCContext, NFCDevice) {
        let context = try NFCContext()
        let device = try context.open(reader.connstring)
        try device.initiatorInit()
        return (context, device)
    }

    func testOpenSelectAndTransceive() throws {
        let card = TestCard()
        let reader = try VirtualReader(card: card)
        defer { reader.stop() }
        let (_, device) = try openReader(reader)
        defer { device.close() }
        XCTAssertEqual(device.connstring, reader.connstring)
        XCTAssertTrue(try device.information().contains("PN532 v1.6"))
        let target = try XCTUnwrap(try device.selectISO14443A())
        XCTAssertEqual(target.uid, VirtualCard.defaultUID)
        XCTAssertEqual(target.atqa, 0x0044)
        XCTAssertEqual(target.sak, 0x20)
        XCTAssertEqual(target.ats, [0x78, 0x80, 0x70, 0x02])
        XCTAssertTrue(target.isISODEP)
        let link = device.link(target)
        XCTAssertEqual(try link.transceive(Self.select), [0x90, 0x00])
        XCTAssertTrue(card.selected)
        XCTAssertEqual(try link.transceive([0x80, 0xEE, 0x00, 0x00, 0x03, 0x01, 0x02, 0x03]), [0x01, 0x02, 0x03, 0x90, 0x00])
        XCTAssertEqual(try link.transceive([0x80, 0x99, 0x00, 0x00]), [0x6D, 0x00])
        XCTAssertTrue(try device.isTargetPresent())
    }

    func testResponsesChainedWith61xxAndGetResponse() throws {
        let reader = try VirtualReader(card: TestCard())
        defer { reader.stop() }
        let (_, device) = try openReader(reader)
        defer { device.close() }
        let link = device.link(try XCTUnwrap(try device.selectISO14443A()))
        // 1000 bytes: 256 + 256 + 256 + 232 through GET RESPONSE.
        var response = try link.transceive([0x80, 0xB0, 0x03, 0xE8])
        var collected: [UInt8] = []
        while response.count >= 2 && response[response.count - 2] == 0x61 {
            collected += response.dropLast(2)
            response = try link.transceive([0x00, 0xC0, 0x00, 0x00, response.last!])
        }
        collected += response.dropLast(2)
        XCTAssertEqual(Array(response.suffix(2)), [0x90, 0x00])
        XCTAssertEqual(collected, TestCard.pattern(1000))
    }

    func testLargestSingleResponseAndCommand() throws {
        let reader = try VirtualReader(card: TestCard())
        defer { reader.stop() }
        let (_, device) = try openReader(reader)
        defer { device.close() }
        let link = device.link(try XCTUnwrap(try device.selectISO14443A()))
        // 261 data bytes + SW = 263, libnfc's largest R-APDU (an extended frame reply).
        XCTAssertEqual(try link.transceive([0x80, 0xB1, 0x01, 0x05]), TestCard.pattern(261) + [0x90, 0x00])
        // 257 bytes of data in one C-APDU: 262 bytes, an extended host frame.
        let data = (0..<255).map { UInt8(truncatingIfNeeded: $0) }
        let echo = try link.transceive([0x80, 0xEE, 0x00, 0x00, 0xFF] + data)
        XCTAssertEqual(echo, data + [0x90, 0x00])
        XCTAssertThrowsError(try link.transceive([UInt8](repeating: 0, count: 263))) { error in
            XCTAssertEqual((error as? NFCError)?.code, .invalidArgument)
        }
    }

    /// A response beyond one PN532 frame goes out with the MI bit, as the chip chains it; libnfc
    /// gathers it up to its own buffer.
    func testOversizedResponseUsesMoreInformationChaining() throws {
        let reader = try VirtualReader(card: TestCard())
        defer { reader.stop() }
        let (_, device) = try openReader(reader)
        defer { device.close() }
        let link = device.link(try XCTUnwrap(try device.selectISO14443A()))
        XCTAssertThrowsError(try link.transceive([0x80, 0xB1, 0x02, 0x00])) { error in
            XCTAssertEqual((error as? NFCError)?.code, .chip, "\(error)")
        }
        // The reader and card are still usable afterwards.
        XCTAssertEqual(try link.transceive(Self.select), [0x90, 0x00])
    }

    func testCardRemovedMidTransactionIsAnErrorAndTheReaderKeepsWorking() throws {
        let reader = try VirtualReader(card: TestCard())
        defer { reader.stop() }
        let (_, device) = try openReader(reader)
        defer { device.close() }
        let link = device.link(try XCTUnwrap(try device.selectISO14443A()))
        XCTAssertEqual(try link.transceive(Self.select), [0x90, 0x00])
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { reader.remove() }
        // SLOW: the card takes 500 ms, and leaves after 100 ms.
        let started = Date()
        XCTAssertThrowsError(try link.transceive([0x80, 0x5E, 0x00, 0x00, 50])) { error in
            XCTAssertEqual((error as? NFCError)?.code, .targetLost, "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.45, "the chip reports the card gone at once")
        XCTAssertFalse(try device.isTargetPresent())
        XCTAssertNil(try device.selectISO14443A())
        try reader.insert(TestCard())
        let again = try XCTUnwrap(try device.selectISO14443A())
        XCTAssertEqual(try device.link(again).transceive(Self.select), [0x90, 0x00])
    }

    func testPresenceCheckSeesRemovalAndHaltAfterDeselect() throws {
        let reader = try VirtualReader(card: TestCard())
        defer { reader.stop() }
        let (_, device) = try openReader(reader)
        defer { device.close() }
        _ = try XCTUnwrap(try device.selectISO14443A())
        XCTAssertTrue(try device.isTargetPresent())
        try device.deselect()
        XCTAssertNil(try device.selectISO14443A(), "a deselected card is halted until the field resets")
        try device.cycleField()
        XCTAssertNotNil(try device.selectISO14443A())
        reader.remove()
        XCTAssertFalse(try device.isTargetPresent())
    }

    func testSelectByUIDAndPolling() throws {
        let reader = try VirtualReader(card: TestCard())
        defer { reader.stop() }
        let (_, device) = try openReader(reader)
        defer { device.close() }
        XCTAssertNil(try device.selectISO14443A(uid: [0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]))
        XCTAssertEqual(try device.selectISO14443A(uid: VirtualCard.defaultUID)?.uid, VirtualCard.defaultUID)
        try device.cycleField()
        XCTAssertEqual(try device.pollISO14443A(count: 1, period: 1)?.uid, VirtualCard.defaultUID)
        reader.remove()
        let started = Date()
        XCTAssertNil(try device.pollISO14443A(count: 1, period: 1))
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.14, "InAutoPoll waits its period for a card")
        XCTAssertEqual(try device.listISO14443A().count, 0)
    }

    func testRawFrameReachesTheChipAndNoCardAnswersIt() throws {
        let reader = try VirtualReader(card: TestCard())
        defer { reader.stop() }
        let (_, device) = try openReader(reader)
        defer { device.close() }
        XCTAssertEqual(try device.transceiveRaw(ECPFrame.accessDefault.bytes), [])
        XCTAssertEqual(reader.rawFrames.last, ECPFrame.accessDefault.bytes)
        // Easy framing is back on: APDUs still work.
        let link = device.link(try XCTUnwrap(try device.selectISO14443A()))
        XCTAssertEqual(try link.transceive(Self.select), [0x90, 0x00])
    }

    func testPtyClosedUnderTheClientIsAnIOErrorNotACrash() throws {
        let reader = try VirtualReader(card: TestCard())
        let (_, device) = try openReader(reader)
        defer { device.close() }
        let link = device.link(try XCTUnwrap(try device.selectISO14443A()))
        XCTAssertEqual(try link.transceive(Self.select), [0x90, 0x00])
        reader.stop()
        XCTAssertThrowsError(try link.transceive(Self.select)) { error in
            XCTAssertTrue([.io, .timeout].contains((error as? NFCError)?.code), "\(error)")
        }
        XCTAssertThrowsError(try device.selectISO14443A())
    }

    func testSecondClientIsRefusedOnlyWhileTheFirstHoldsTheSession() throws {
        let reader = try VirtualReader(card: TestCard())
        defer { reader.stop() }
        let (_, device) = try openReader(reader)
        XCTAssertTrue(reader.hasSession)
        device.close()
        XCTAssertFalse(reader.hasSession, "nfc_close powers the chip down, which ends the session")
        let (_, again) = try openReader(reader)
        defer { again.close() }
        XCTAssertNotNil(try again.selectISO14443A())
        XCTAssertEqual(reader.statistics.sessions, 2)
    }

    func testOpenFailuresSayWhatToDo() throws {
        let context = try NFCContext()
        XCTAssertThrowsError(try context.open("pn532_uart:/dev/pts/does-not-exist")) { error in
            let e = error as! NFCError
            XCTAssertEqual(e.code, .noDevice)
            XCTAssertTrue(e.reason.contains("lockbench nfc virtual-reader"), e.reason)
        }
        XCTAssertThrowsError(try context.open("acr122_usb")) { error in
            let e = error as! NFCError
            XCTAssertEqual(e.code, .noDevice)
            XCTAssertTrue(e.reason.contains("pn532_uart:/dev/ttyUSB0"), e.reason)
        }
        XCTAssertThrowsError(try context.open("nosuchdriver:x")) { error in
            XCTAssertEqual((error as! NFCError).code, .noDevice)
        }
        // A tty that is no PN532: /dev/ptmx opens a fresh pty master nobody answers on.
        XCTAssertThrowsError(try context.open("pn532_uart:/dev/null")) { error in
            XCTAssertEqual((error as! NFCError).code, .openFailed, "\(error)")
        }
    }

    func testListDevicesReportsTheConfiguredVirtualReader() throws {
        let reader = try VirtualReader()
        defer { reader.stop() }
        setenv("LIBNFC_DEVICE", reader.connstring, 1)
        setenv("LIBNFC_AUTO_SCAN", "false", 1)
        defer { unsetenv("LIBNFC_DEVICE"); unsetenv("LIBNFC_AUTO_SCAN") }
        let context = try NFCContext()
        XCTAssertEqual(context.listDevices(), [reader.connstring])
    }

    func testLibNFCVersion() {
        XCTAssertTrue(LibNFC.version.hasPrefix("1."), LibNFC.version)
    }
}

/// One client session at a time: the slave is exclusive (TIOCEXCL) from SAMConfiguration to
/// PowerDown, so a second program cannot open it meanwhile (CAP_SYS_ADMIN bypasses TIOCEXCL, so
/// as root the second client runs as nobody).
final class VirtualReaderSessionTests: XCTestCase {
    /// Tries to open `path` read-write as a second client; true when the open succeeded.
    private func secondClientCanOpen(_ path: String) throws -> Bool {
        if geteuid() != 0 {
            let fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK)
            if fd >= 0 { close(fd); return true }
            XCTAssertEqual(errno, EBUSY)
            return false
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        p.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c", "exec 3<>\"$0\"", path]
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus == 0
    }

    func testASecondClientCannotOpenTheReaderDuringASession() throws {
        let reader = try VirtualReader(card: TestCard())
        defer { reader.stop() }
        if geteuid() == 0 { XCTAssertEqual(chmod(reader.devicePath, 0o666), 0) }
        XCTAssertFalse(reader.isExclusive)
        XCTAssertTrue(try secondClientCanOpen(reader.devicePath), "no session yet: anyone may open")
        let context = try NFCContext()
        let device = try context.open(reader.connstring)
        try device.initiatorInit()
        XCTAssertTrue(reader.hasSession)
        XCTAssertTrue(reader.isExclusive)
        XCTAssertFalse(try secondClientCanOpen(reader.devicePath), "a second client is refused during the session")
        XCTAssertNotNil(try device.selectISO14443A(), "the first client is unaffected")
        device.close()
        XCTAssertFalse(reader.isExclusive)
        XCTAssertTrue(try secondClientCanOpen(reader.devicePath), "after nfc_close the next client may open")
    }

    func testASessionWhoseClientVanishedEndsAfterItsIdleTimeout() throws {
        let reader = try VirtualReader(card: TestCard())
        defer { reader.stop() }
        reader.sessionIdleTimeout = 0.3
        let client = try VirtualPN532WireTests.RawClient(reader.devicePath)
        _ = client.exchange(0x14, [0x01])  // SAMConfiguration, then the client "crashes" (no PowerDown)
        XCTAssertTrue(reader.hasSession)
        Thread.sleep(forTimeInterval: 0.6)
        XCTAssertFalse(reader.hasSession)
        XCTAssertFalse(reader.isExclusive)
    }
}
