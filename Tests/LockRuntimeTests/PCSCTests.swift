import AccessProtocol
import ByteCore
import Foundation
import LockBenchTestSupport
import LockRuntime
import OfflineUnlock
import PhoneRadios
import PhoneSeam
@testable import PCSC
import VirtualPN532
import XCTest

/// PC/SC for real: pcscd with vsmartcard's virtual reader driver (vpcd), libpcsclite on the
/// lock's side, `VirtualICC` carrying a software phone into `Virtual PCD 00 00` over vpcd's
/// TCP port 35963. All PC/SC tests of this target are in this one class, so they never share
/// the reader (vpcd has one port per reader); the CLI's end-to-end test uses `Virtual PCD 00 01`.
final class PCSCTests: XCTestCase {
    static let reader = "Virtual PCD 00 00"
    static let port: UInt16 = 35963

    override func setUpWithError() throws {
        try PCSCDaemon.ensureRunning(offering: Self.reader)
    }

    // MARK: The binding

    func testPcscdOffersBothVirtualReaders() throws {
        let readers = try PCSCContext().readers()
        XCTAssertTrue(readers.contains("Virtual PCD 00 00"), "\(readers)")
        XCTAssertTrue(readers.contains("Virtual PCD 00 01"), "\(readers)")
    }

    func testACardIsSeenConnectedOverT1AndAnswers() throws {
        let reader = PCSCReader(readerName: Self.reader)
        XCTAssertEqual(try reader.open(), Self.reader)
        defer { reader.close() }
        XCTAssertNil(try reader.waitForCard(timeout: 0.2), "no card yet")
        let icc = VirtualICC(responder: SimpleCard())
        try icc.insert(port: Self.port)
        defer { icc.remove() }
        let card = try XCTUnwrap(waitForCard(reader))
        XCTAssertEqual(card.atr, [0x3B, 0x80, 0x80, 0x01, 0x01], "the contactless ISO 14443-4 ATR")
        XCTAssertEqual(card.handle.protocolName, "T=1")
        let select: [UInt8] = [0x00, 0xA4, 0x04, 0x00, 0x09, 0xA0, 0x00, 0x00, 0x09, 0x09, 0xAC, 0xCE, 0x55, 0x01, 0x00]
        XCTAssertEqual(try card.link.transceive(select).suffix(2), [0x90, 0x00])
        XCTAssertFalse(try reader.waitForRemoval(card, timeout: 0.3), "the card is still there")
        icc.remove()
        XCTAssertTrue(try waitUntil(10) { try reader.waitForRemoval(card, timeout: 0.25) }, "removal seen")
    }

    /// What SCardTransmit does when the card leaves mid-exchange (docs/pcsc.md): pcscd answers the
    /// exchange in flight with success and no bytes, then SCARD_E_NOT_TRANSACTED, then, once it
    /// noticed, SCARD_W_REMOVED_CARD. Each is `.cardRemoved` here, never a reader failure.
    func testACardLeavingMidExchangeIsCardRemoved() throws {
        let reader = PCSCReader(readerName: Self.reader)
        _ = try reader.open()
        defer { reader.close() }
        var icc: VirtualICC!
        let pulling = PulledAfter(SimpleCard(), apdus: 2) { icc.remove(wait: false) }
        icc = VirtualICC(responder: pulling)
        try icc.insert(port: Self.port)
        defer { icc.remove() }
        let card = try XCTUnwrap(waitForCard(reader))
        let select: [UInt8] = [0x00, 0xA4, 0x04, 0x00, 0x09, 0xA0, 0x00, 0x00, 0x09, 0x09, 0xAC, 0xCE, 0x55, 0x01, 0x00]
        XCTAssertEqual(try card.link.transceive(select).suffix(2), [0x90, 0x00])
        var codes: [PCSCError] = []
        for _ in 0..<3 {
            XCTAssertThrowsError(try card.link.transceive(select)) { error in
                guard let e = error as? PCSCError else { return XCTFail("\(error)") }
                codes.append(e)
                XCTAssertEqual(e.code, .cardRemoved, e.reason)
                XCTAssertFalse(reader.isReaderFailure(e))
            }
        }
        XCTAssertTrue(codes[0].reason.contains("no status word"), codes[0].reason)
        XCTAssertTrue(try waitUntil(10) { try reader.waitForRemoval(card, timeout: 0.25) })
    }

    func testAReaderThatDoesNotExistSaysWhereToLook() {
        XCTAssertThrowsError(try PCSCReader(readerName: "ACS ACR1252 1S CL Reader 00 00").open()) { error in
            let e = error as? PCSCError
            XCTAssertEqual(e?.code, .unknownReader)
            XCTAssertTrue(e?.reason.contains("lockbench pcsc list") == true, e?.reason ?? "\(error)")
            XCTAssertTrue(e?.reason.contains("\"Virtual PCD 00 00\"") == true, "names the readers there are: \(e?.reason ?? "")")
            XCTAssertTrue(e.map { PCSCReader().isReaderFailure($0) } ?? false, "a missing reader is reopened with backoff")
        }
    }

    /// Every return code the wrappers meet maps to its code and advice.
    func testReturnCodesMapToErrorsThatSayWhatToDo() {
        let table: [(UInt32, PCSCError.Code, String)] = [
            (0x8010_001D, .noService, "systemctl start pcscd"),
            (0x8010_001E, .noService, "pcscd -f"),
            (0x8010_002E, .noReaders, "lockbench pcsc list"),
            (0x8010_0009, .unknownReader, "lockbench pcsc list"),
            (0x8010_0017, .readerUnavailable, "plug it in"),
            (0x8010_000C, .noCard, "no card"),
            (0x8010_0069, .cardRemoved, "left the reader"),
            (0x8010_0016, .cardRemoved, "left the reader"),
            (0x8010_0068, .cardReset, "tap again"),
            (0x8010_0066, .cardUnresponsive, "T=0 or T=1"),
            (0x8010_000B, .sharingViolation, "exclusively"),
            (0x8010_000A, .timeout, "timed out"),
            (0x8010_0003, .invalidHandle, "restarted"),
            (0x8010_0013, .communication, "pcscd -f -d"),
            (0x8010_0004, .other, "SCARD_E_INVALID_PARAMETER"),
            (0x8010_00FF, .other, "0x801000FF"),
        ]
        for (rc, code, advice) in table {
            let e = PCSCLite.error(rc, "SCardX")
            XCTAssertEqual(e.code, code, String(format: "0x%08X", rc))
            XCTAssertEqual(e.pcscCode, rc)
            XCTAssertTrue(e.reason.hasPrefix("SCardX: "), e.reason)
            XCTAssertTrue(e.reason.contains(advice), "\(e.reason) should say \(advice)")
        }
        XCTAssertTrue(PCSCLite.error(0x8010_001D, "x").isReaderFailure)
        XCTAssertFalse(PCSCLite.error(0x8010_0069, "x").isReaderFailure)
    }

    func testVPICCFramingAndATR() {
        var d = VPICCFrameDecoder()
        let stream: [UInt8] = [0x00, 0x01, 0x04] + [0x00, 0x05, 0x00, 0xA4, 0x04, 0x00, 0x00] + [0x00]
        for b in stream { d.feed([b]) }  // byte by byte
        XCTAssertEqual(d.next().map(VPICCMessage.init(parsing:)), .getATR)
        XCTAssertEqual(d.next().map(VPICCMessage.init(parsing:)), .apdu([0x00, 0xA4, 0x04, 0x00, 0x00]))
        XCTAssertNil(d.next(), "half a length: need more")
        XCTAssertEqual(VPICCMessage(parsing: [0x00]), .powerOff)
        XCTAssertEqual(VPICCMessage(parsing: [0x01]), .powerOn)
        XCTAssertEqual(VPICCMessage(parsing: [0x02]), .reset)
        XCTAssertEqual(VPICCMessage(parsing: [0x07]), .control(0x07))
        XCTAssertEqual(VPICCMessage.frame([0x90, 0x00]), [0x00, 0x02, 0x90, 0x00])
        XCTAssertEqual(ContactlessATR.iso14443_4(), [0x3B, 0x80, 0x80, 0x01, 0x01])
        // Historical bytes raise n in T0 and enter the TCK.
        XCTAssertEqual(ContactlessATR.iso14443_4(historicalBytes: [0x80, 0x73]), [0x3B, 0x82, 0x80, 0x01, 0x80, 0x73, 0x82 ^ 0x80 ^ 0x01 ^ 0x80 ^ 0x73])
    }

    // MARK: The lock on a PC/SC reader

    func testATapThroughPcscdIsGrantedAndAudited() throws {
        let lock = try RunningLock(self, nfc: .pcsc(reader: Self.reader)).start()
        XCTAssertTrue(lock.events.contains { $0.message.contains("reader \(Self.reader) opened (pcsc:\(Self.reader))") },
                      lock.events.map(\.line).joined(separator: "\n"))
        let phone = try lock.provisioning.phone(id: "alice")
        let outcome = try tap(lock, phone.session)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertEqual(outcome.interface, .nfc)
        XCTAssertEqual(outcome.credentialID, Array("alice".utf8).hex)
        let audit = try lock.audit()
        XCTAssertEqual(audit.map(\.decision), ["grant"])
        XCTAssertEqual(audit.last?.transaction, outcome.transactionID)
        // Again: FAST with what the lock learnt.
        let again = try tap(lock, phone.session)
        XCTAssertTrue(again.granted)
        XCTAssertTrue(again.fast)
    }

    /// The phone-side seam on PC/SC: the registry's `vpicc` radio inserts the phone into vpcd's
    /// reader, the lock's `PCSCReader` (pcsc-lite through pcscd) taps it, and the phone is pulled
    /// once the lock ended the transaction — twice, two decisions.
    func testAPhoneFromTheRegistryOnVpiccIsGrantedByTheLockThroughPcscd() throws {
        let lock = try RunningLock(self, nfc: .pcsc(reader: Self.reader)).start()
        let radio = try PhoneRadioSpec(parsing: "vpicc:127.0.0.1:\(Self.port)").radio()
        defer { radio.close() }
        XCTAssertEqual((radio as? VirtualICCPhoneRadio)?.readerName, Self.reader)
        let phone = try lock.provisioning.phone(id: "dave")
        var entered = 0
        let tap = try radio.present(phone.session, timeout: 20) { entered += 1 }
        XCTAssertEqual(entered, 1)
        XCTAssertTrue(tap.ended, "the lock ended the transaction")
        XCTAssertGreaterThanOrEqual(tap.commands, 3)
        try lock.wait("a decision", timeout: 20) { _, outcomes in !outcomes.isEmpty }
        XCTAssertTrue(lock.outcomes[0].granted, "\(lock.outcomes[0].decision)")
        XCTAssertEqual(lock.outcomes[0].credentialID, Array("dave".utf8).hex)
        try lock.wait("the card leaving", timeout: 20) { events, _ in events.contains { $0.radioEvent == .cardRemoved } }
        XCTAssertTrue(try radio.present(phone.session, timeout: 20).ended)
        try lock.wait("a second decision", timeout: 20) { _, outcomes in outcomes.count >= 2 }
        XCTAssertTrue(lock.outcomes[1].granted)
        // vpcd reports a card about once a second: the lock sees it leave before the reader is reused.
        try lock.wait("the card leaving again", timeout: 20) { events, _ in events.filter { $0.radioEvent == .cardRemoved }.count >= 2 }
    }

    func testAnExpiredDocumentIsDenied() throws {
        let lock = try RunningLock(self, nfc: .pcsc(reader: Self.reader)).start()
        let phone = try lock.provisioning.phone(id: "bob", validFrom: Date().addingTimeInterval(-10 * 3600), validFor: 8 * 3600)
        let outcome = try tap(lock, phone.session)
        XCTAssertFalse(outcome.granted)
        XCTAssertEqual(outcome.reason, .engine(.expired), "\(outcome.decision)")
        XCTAssertEqual(try lock.audit().map(\.reason), ["expired"])
        XCTAssertEqual(lock.service.lock.boltName, "secured")
    }

    func testACardPulledMidTransactionIsSurvivedAndTheNextTapGranted() throws {
        let lock = try RunningLock(self, nfc: .pcsc(reader: Self.reader)).start()
        let phone = try lock.provisioning.phone(id: "hasty")
        var icc: VirtualICC!
        // Pulled while answering the 3rd APDU (AUTH1): the answer never reaches the lock.
        let hasty = PulledAfter(phone.session, apdus: 3) { icc.remove(wait: false) }
        icc = VirtualICC(responder: hasty)
        let before = lock.outcomes.count
        try icc.insert(port: Self.port)
        try lock.wait("the aborted transaction", timeout: 20) { _, outcomes in outcomes.count > before }
        icc.remove()
        let aborted = lock.outcomes[before]
        XCTAssertFalse(aborted.granted)
        XCTAssertTrue("\(aborted.decision)".contains("transport"), "\(aborted.decision)")
        try lock.waitForMessage("card removed", timeout: 20)
        XCTAssertEqual(lock.events.filter { $0.message.contains("reader lost") }.count, 0, "a pulled card is not a lost reader")
        XCTAssertEqual(lock.service.lock.boltName, "secured")

        let next = try tap(lock, phone.session)
        XCTAssertTrue(next.granted, "\(next.decision)")
        XCTAssertEqual(try lock.audit().map(\.decision), ["deny", "grant"])
    }

    // MARK: Helpers

    /// Puts `card` on the reader through vpcd, waits for the decision, pulls it, waits until the
    /// lock saw it leave.
    private func tap(_ lock: RunningLock, _ card: APDUResponder) throws -> TransactionOutcome {
        let before = lock.outcomes.count
        let removedBefore = lock.events.filter { $0.message.hasPrefix("card removed") }.count
        let icc = VirtualICC(responder: card)
        try icc.insert(port: Self.port)
        defer { icc.remove() }
        try lock.wait("a decision", timeout: 20) { _, outcomes in outcomes.count > before }
        icc.remove()
        try lock.waitForMessage("card removed", count: removedBefore + 1, timeout: 20)
        return lock.outcomes[before]
    }

    /// vpcd polls its socket about once a second: a card takes that long to appear.
    private func waitForCard(_ reader: PCSCReader) throws -> PCSCReader.Card? {
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if let card = try reader.waitForCard(timeout: 0.25) { return card }
        }
        return nil
    }

    private func waitUntil(_ seconds: TimeInterval, _ condition: () throws -> Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline { if try condition() { return true } }
        return false
    }
}
