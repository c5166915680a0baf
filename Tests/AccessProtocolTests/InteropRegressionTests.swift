import ByteCore
import Codecs
import Crypto
import Foundation
import LockBenchTestSupport
import OfflineUnlock
import LockBenchTestSupport
import XCTest
@testable import AccessProtocol

/// Issue 8 §1: the six places where LockBench diverged from the public reference device and the
/// public test plan. Each test holds the bytes at stake.
final class InteropRegressionTests: XCTestCase {
    private func lock(_ config: ReaderConfiguration = Fixture.readerConfiguration(),
                      _ engine: AccessDecider = Fixture.engine()) -> LockReader {
        LockReader(configuration: config, decider: engine)
    }

    private func commands(_ o: TransactionOutcome) -> [TranscriptEntry] { o.transcript.filter { $0.direction == .command } }

    private func credential(timestamps: Bool = true, stepUpSelect: StepUpSelectPolicy = .optional, mailbox: Mailbox? = nil,
                            faults: CredentialFaults = [], accessDocuments: [[UInt8]]? = nil,
                            versions: [UInt16] = [ProtocolVersion.v1_0]) -> CredentialSession {
        CredentialSession(configuration: CredentialConfiguration(
            signingKey: Fixture.credentialKey,
            trustedReaders: [TrustedReader(groupID: Fixture.groupID, publicKey: Fixture.readerKey.publicBytes)],
            accessDocuments: accessDocuments ?? [Fixture.accessDocument()], versions: versions, faults: faults,
            credentialTimestamp: timestamps ? Auth1ResponsePlaintext.zeroTimestamp : nil,
            revocationTimestamp: timestamps ? Auth1ResponsePlaintext.zeroTimestamp : nil,
            stepUpSelect: stepUpSelect, mailbox: mailbox))
    }

    // MARK: 1. AUTH1 answer without 91/92

    /// The public reference device's AUTH1 plaintext: `5A 41 key ‖ 9E 40 sig ‖ 5E 02 1C39`, nothing else.
    func testAuth1AnswerOfTheReferenceDeviceParses() throws {
        let key = Fixture.credentialKey.publicBytes
        let signature = [UInt8](repeating: 0x5C, count: 64)
        let bytes = [0x5A, 0x41] + key + [0x9E, 0x40] + signature + [0x5E, 0x02, 0x1C, 0x39]
        let answer = try Auth1ResponsePlaintext(parsing: bytes)
        XCTAssertEqual(answer.identity, .publicKey(key))
        XCTAssertEqual(answer.signaling.rawValue, 0x1C39)
        XCTAssertNil(answer.credentialTimestamp)
        XCTAssertNil(answer.revocationTimestamp)
        // Only 91 (a device holding an access document), and an unknown tag, are fine too.
        let ts = Array("2026-03-02T08:00:00Z".utf8)
        let withAccess = try Auth1ResponsePlaintext(parsing: bytes + [0x91, 0x14] + ts + [0xAA, 0x03, 0x01, 0x02, 0x03])
        XCTAssertEqual(withAccess.credentialTimestamp, ts)
        XCTAssertNil(withAccess.revocationTimestamp)
        // No 5E: an empty bitmap.
        XCTAssertEqual(try Auth1ResponsePlaintext(parsing: Array(bytes.dropLast(4))).signaling, [])
        // A present timestamp of the wrong length is still refused.
        XCTAssertThrowsError(try Auth1ResponsePlaintext(parsing: bytes + [0x92, 0x13] + ts.dropLast())) { error in
            XCTAssertEqual((error as? TLVError)?.code, .badLength)
        }
        // The identity and the signature are required.
        XCTAssertThrowsError(try Auth1ResponsePlaintext(parsing: [0x5A, 0x41] + key + [0x5E, 0x02, 0x00, 0x00]))
    }

    func testALockGrantsAPhoneThatSendsNoTimestamps() {
        let phone = credential(timestamps: false)
        let outcome = lock().runTransaction(over: InMemoryLink(phone), at: Fixture.time)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        // And the encoder leaves them out: 5A 9E 5E only.
        let plain = Auth1ResponsePlaintext(identity: .publicKey(phone.publicKey), signature: [UInt8](repeating: 1, count: 64),
                                           signaling: [.accessDocumentAvailable], credentialTimestamp: nil, revocationTimestamp: nil)
        XCTAssertEqual(try TLV.parseAll(plain.encoded()).map(\.tag), [0x5A, 0x9E, 0x5E])
    }

    /// nfc_rdr_neg_auth0_extra_tag, nfc_rdr_neg_auth1_extra_tag: unknown tags are skipped.
    func testUnknownTagsInTheAnswersAreSkipped() {
        XCTAssertTrue(lock().runTransaction(over: InMemoryLink(credential(faults: .auth0ExtraTag)), at: Fixture.time).granted)
        let phone = credential(faults: .auth1ExtraTag)
        let reader = lock()
        reader.configuration.useFast = false
        let outcome = reader.runTransaction(over: InMemoryLink(phone), at: Fixture.time)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertEqual(phone.lastReaderStatus, ReaderStatus.unsecured)
    }

    /// The credential side is tolerant too: AUTH0 fields in another order, and an unknown tag.
    func testAuth0CommandFieldsAreReadInAnyOrder() throws {
        let cmd = Auth0Command(flags: 1, policy: 1, version: 0x0100, readerEphemeralKey: [0x04] + [UInt8](repeating: 7, count: 64),
                               transactionID: [UInt8](repeating: 2, count: 16), readerID: [UInt8](repeating: 3, count: 32))
        var tlvs = try TLV.parseAll(cmd.encoded())
        tlvs.reverse()
        tlvs.append(TLV(0xAA, [1, 2, 3]))
        XCTAssertEqual(try Auth0Command(parsing: tlvs.encoded()), cmd)
    }

    // MARK: 2. Step-up SELECT driven by bitmap bit 2

    func testStepUpSelectOnlyWhenTheBitmapAsks() {
        // Bit 2 clear (the default): no step-up SELECT, ENVELOPE straight after AUTH1.
        let optional = credential()
        XCTAssertEqual(optional.configuration.signaling.bytes, [0x00, 0x01])
        let o1 = lock().runTransaction(over: InMemoryLink(optional), at: Fixture.time)
        XCTAssertTrue(o1.granted, "\(o1.decision)")
        XCTAssertTrue(o1.stepUp)
        XCTAssertFalse(commands(o1).contains { $0.label == "SELECT step-up" })
        XCTAssertEqual(commands(o1)[3].bytes.prefix(4), [0x00, 0xC3, 0x00, 0x00])

        // `--step-up-select required`: bit 2 set (5E 02 0005), and the lock sends the SELECT.
        let required = credential(stepUpSelect: .required)
        XCTAssertEqual(required.configuration.signaling.bytes, [0x00, 0x05])
        let o2 = lock().runTransaction(over: InMemoryLink(required), at: Fixture.time)
        XCTAssertTrue(o2.granted, "\(o2.decision)")
        XCTAssertEqual(commands(o2)[3].bytes, [0x00, 0xA4, 0x04, 0x00, 0x09] + AID.stepUp + [0x00])

        // A lock configured `always` sends it to a phone that did not ask; the phone accepts it.
        var always = Fixture.readerConfiguration()
        always.stepUpSelect = .always
        let o3 = lock(always).runTransaction(over: InMemoryLink(credential()), at: Fixture.time)
        XCTAssertTrue(o3.granted, "\(o3.decision)")
        XCTAssertEqual(commands(o3)[3].label, "SELECT step-up")
    }

    func testAlwaysSelectSurvivesAPhoneThatDoesNotKnowTheStepUpAID() {
        // The public reference device answers the step-up SELECT 6D00.
        let phone = credential()
        let link = InMemoryLink(phone)
        link.tap = { command, response in
            command.count >= 14 && command.starts(with: [0x00, 0xA4]) && Array(command[5..<14]) == AID.stepUp ? [0x6D, 0x00] : response
        }
        var always = Fixture.readerConfiguration()
        always.stepUpSelect = .always
        let outcome = lock(always).runTransaction(over: link, at: Fixture.time)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
    }

    func testAPhoneThatRequiresTheSelectRefusesEnvelopeWithoutIt() {
        let phone = credential(stepUpSelect: .required)
        var reader = lock().makeSession()
        var action = reader.start(at: Fixture.time)
        // SELECT, AUTH0, AUTH1 through the real session, then ENVELOPE straight away.
        for _ in 0..<3 {
            guard case .transmit(let c) = action else { return XCTFail("ended early") }
            action = reader.received(phone.respond(to: c), at: Fixture.time)
        }
        let envelope = Commands.envelope(StepUpEnvelope.wrap([UInt8](repeating: 0, count: 32))).bytes
        XCTAssertEqual(phone.respond(to: envelope), [0x69, 0x85])
    }

    // MARK: 3. Closing EXCHANGE after ENVELOPE

    func testClosingExchangeAfterStepUpRunsOnTheStepUpChannelByDefault() {
        let phone = credential()
        let outcome = lock().runTransaction(over: InMemoryLink(phone), at: Fixture.time)
        XCTAssertTrue(outcome.granted && outcome.stepUp && outcome.acknowledged, "\(outcome.decision)")
        XCTAssertEqual(phone.lastExchangeChannel, .stepUp)
        XCTAssertEqual(phone.lastReaderStatus, ReaderStatus.unsecured)

        var expedited = Fixture.readerConfiguration()
        expedited.stepUpExchange = .expedited
        let other = credential()
        let o2 = lock(expedited).runTransaction(over: InMemoryLink(other), at: Fixture.time)
        XCTAssertTrue(o2.granted && o2.acknowledged, "\(o2.decision)")
        XCTAssertEqual(other.lastExchangeChannel, .expedited)
        // Without a step-up, EXCHANGE is always on the expedited channel.
        let reader = lock()
        _ = reader.runTransaction(over: InMemoryLink(credential()), at: Fixture.time)
        reader.configuration.useFast = false
        let plain = credential()
        XCTAssertTrue(reader.runTransaction(over: InMemoryLink(plain), at: Fixture.time).granted)
        XCTAssertEqual(plain.lastExchangeChannel, .expedited)
    }

    // MARK: 4. Mailbox

    func testMailboxAnswerBytes() throws {
        // ALIRO-FACTS: the public reference device answered a read of 8 bytes at offset 0 with
        // `0008 ‖ 8 bytes ‖ 00020000`; the certification tool's reader requires `00 02 00 00`.
        let data: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        XCTAssertEqual(ExchangeResponsePlaintext(reads: [data]).encoded(), [0x00, 0x08] + data + [0x00, 0x02, 0x00, 0x00])
        XCTAssertEqual(ExchangeResponsePlaintext().encoded(), [0x00, 0x02, 0x00, 0x00])
        let reference = try ExchangeResponsePlaintext(parsing: [0x00, 0x08] + data + [0x00, 0x02, 0x00, 0x00], reads: 1)
        XCTAssertEqual(reference.reads, [data])
        XCTAssertEqual(reference.status, .success)
        // Older phones (LockBench's own before 2026-11-26) ended `00 02 90 00`: still success.
        let older = try ExchangeResponsePlaintext(parsing: [0x00, 0x08] + data + [0x00, 0x02, 0x90, 0x00], reads: 1)
        XCTAssertEqual(older.reads, [data])
        XCTAssertEqual(older.status, .success)
        XCTAssertEqual(try ExchangeResponsePlaintext(parsing: [0x00, 0x02, 0x00, 0x00], reads: 0).status, .success)
        XCTAssertEqual(try ExchangeResponsePlaintext(parsing: [0x00, 0x02, 0x6A, 0x82], reads: 1).status, .fileNotFound)
        // The command: BA 13 { 87 04 0000 0008, 8A 04 0008 AABB, 95 05 000C 0002 FF } 97 02 0101.
        let cmd = ExchangeCommandPlaintext(readerStatus: 0x0101, mailbox: [
            .set(offset: 12, length: 2, value: 0xFF), .write(offset: 8, data: [0xAA, 0xBB]), .read(offset: 0, length: 8)])
        let bytes: [UInt8] = [0xBA, 0x13, 0x87, 0x04, 0x00, 0x00, 0x00, 0x08, 0x8A, 0x04, 0x00, 0x08, 0xAA, 0xBB,
                              0x95, 0x05, 0x00, 0x0C, 0x00, 0x02, 0xFF, 0x97, 0x02, 0x01, 0x01]
        XCTAssertEqual(cmd.encoded(), bytes)
        XCTAssertEqual(try ExchangeCommandPlaintext(parsing: bytes).mailbox, cmd.orderedMailbox)
        XCTAssertThrowsError(try ExchangeCommandPlaintext(parsing: [0xBA, 0x05, 0x87, 0x03, 0x00, 0x00, 0x08]))
    }

    func testTheLockReadsAndWritesThePhonesMailbox() throws {
        let box = try Mailbox(Array(0..<16))
        let changes = Monitor<[UInt8]?>(nil)
        box.onChange = { content in changes.withLock { $0 = content } }
        let phone = credential(mailbox: box)
        XCTAssertTrue(phone.configuration.signaling.isSuperset(of: [.mailboxHasData, .mailboxReadable, .mailboxWritable]))
        var config = Fixture.readerConfiguration()
        config.mailbox = [.read(offset: 0, length: 8), .write(offset: 8, data: [0xAA, 0xBB]), .set(offset: 12, length: 2, value: 0xFF)]
        let outcome = lock(config).runTransaction(over: InMemoryLink(phone), at: Fixture.time)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertEqual(outcome.mailbox?.reads, ["0001020304050607"])
        XCTAssertEqual(outcome.mailbox?.status, "9000")
        XCTAssertEqual(outcome.mailbox?.line, "mailbox: read 0+8 → 0001020304050607; write 8: aabb; set 12+2=ff; status 9000")
        let expected: [UInt8] = [0, 1, 2, 3, 4, 5, 6, 7, 0xAA, 0xBB, 10, 11, 0xFF, 0xFF, 14, 15]
        XCTAssertEqual(box.bytes, expected)
        XCTAssertEqual(changes.withLock { $0 }, expected)

        // Outside the mailbox: refused as a whole, nothing written.
        config.mailbox = [.write(offset: 0, data: [0x11]), .read(offset: 10, length: 7)]
        let refused = lock(config).runTransaction(over: InMemoryLink(phone), at: Fixture.time)
        XCTAssertEqual(refused.mailbox?.status, "6A80")
        XCTAssertEqual(box.bytes, expected)
        // A phone without a mailbox: 6A82.
        let none = lock(config).runTransaction(over: InMemoryLink(credential()), at: Fixture.time)
        XCTAssertEqual(none.mailbox?.status, "6A82")
        XCTAssertTrue(none.granted)
    }

    // MARK: 5. Documents verbatim

    /// The outer Document with integer keys `1` and `5` (docs/documents.md reads either spelling).
    private func integerKeyed(_ document: [UInt8]) throws -> [UInt8] {
        let m = try CBOR(parsing: document).asMap("doc")
        return CBOR.map([1: m["1"]!, 5: m["5"]!]).encoded()
    }

    func testADocumentWithIntegerKeysIsGrantedInATransaction() throws {
        let doc = try integerKeyed(Fixture.accessDocument())
        XCTAssertEqual(DeviceResponse.docType(of: doc), DocType.access)
        let decider = RecordingDecider(Fixture.engine())
        let outcome = lock(Fixture.readerConfiguration(), decider).runTransaction(over: InMemoryLink(credential(accessDocuments: [doc])),
                                                                                  at: Fixture.time)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertEqual(decider.presentations.last?.accessDocuments, [doc])
    }

    func testDeviceResponseKeepsEachDocumentsBytes() throws {
        // A document whose map keys are not in deterministic order (another encoder): a re-encoding
        // would sort them; the bytes must come through unchanged.
        let doc: [UInt8] = [0xA2, 0x61, 0x35, 0x67] + Array("aliro-a".utf8) + [0x61, 0x31, 0xA0]
        XCTAssertEqual(DeviceResponse.docType(of: doc), DocType.access)
        let encoded = try DeviceResponse(documents: [doc]).encoded()
        XCTAssertEqual(encoded, [0xA3, 0x61, 0x31, 0x63] + Array("1.0".utf8) + [0x61, 0x32, 0x81] + doc + [0x61, 0x33, 0x00])
        XCTAssertEqual(try DeviceResponse(parsing: encoded).documents, [doc])
        XCTAssertEqual(try DeviceResponse(parsing: encoded).accessDocuments, [doc])
        // Integer keys on the DeviceResponse itself, "1" and "3" absent.
        let intKeyed: [UInt8] = [0xA1, 0x02, 0x81] + doc
        XCTAssertEqual(try DeviceResponse(parsing: intKeyed).documents, [doc])
    }

    // MARK: 6. Failure signalling as the public test plan expects

    /// nfc_rdr_neg_sel_rsp_no_common_expedited_protocol_version: S1 00, S2 27.
    func testNoCommonVersionIsControlFlowS2_27() {
        let phone = credential(versions: [0x0200])
        let outcome = lock().runTransaction(over: InMemoryLink(phone), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .protocol(.unsupportedVersion))
        XCTAssertEqual(commands(outcome).last?.bytes, [0x80, 0x3C, 0x00, 0x00, 0x06, 0x41, 0x01, 0x00, 0x42, 0x01, 0x27])
    }

    /// nfc_rdr_neg_auth0_wrong_value: the AUTH0 answer carries `88` instead of `86`: S1 00, S2 00.
    func testAuth0AnswerWithAWrongTagIsControlFlowS2_00() {
        let phone = credential(faults: .auth0WrongTag)
        let outcome = lock().runTransaction(over: InMemoryLink(phone), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .protocol(.malformedInput))
        XCTAssertEqual(commands(outcome).last?.bytes, [0x80, 0x3C, 0x00, 0x00, 0x06, 0x41, 0x01, 0x00, 0x42, 0x01, 0x00])
        XCTAssertEqual(phone.lastControlFlow, ControlFlow(s1: 0, s2: 0))
    }

    /// nfc_rdr_neg_auth1_wrong_ud_signature: a failure reader status in EXCHANGE, not CONTROL FLOW.
    func testWrongDeviceSignatureIsToldInExchange() {
        let phone = credential(faults: .wrongSignature)
        let outcome = lock().runTransaction(over: InMemoryLink(phone), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .protocol(.badCredentialSignature))
        XCTAssertEqual(commands(outcome).last?.label, "EXCHANGE")
        XCTAssertEqual(phone.lastReaderStatus, ReaderStatus.badSignature)
        XCTAssertNil(phone.lastControlFlow)
        XCTAssertEqual(outcome.readerStatus, 0x0004)
    }

    /// nfc_rdr_neg_auth1_wrong_value: the signature under `88`: EXCHANGE with 0023 (no signature).
    func testAuth1AnswerWithAWrongSignatureTagIsToldInExchange() {
        let phone = credential(faults: .auth1WrongSignatureTag)
        let outcome = lock().runTransaction(over: InMemoryLink(phone), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .protocol(.malformedInput))
        XCTAssertEqual(commands(outcome).last?.label, "EXCHANGE")
        XCTAssertEqual(phone.lastReaderStatus, ReaderStatus.noSignature)
        XCTAssertEqual(ExchangeCommandPlaintext(readerStatus: ReaderStatus.noSignature).encoded(), [0x97, 0x02, 0x00, 0x23])
    }

    /// A refused reader signature (6982): no channel, so CONTROL FLOW, S2 00.
    func testRefusedReaderSignatureIsControlFlowS2_00() {
        let phone = Fixture.credential(trusting: Fixture.otherReaderKey)
        let outcome = lock().runTransaction(over: InMemoryLink(phone), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .protocol(.badReaderSignature))
        XCTAssertEqual(commands(outcome).last?.bytes, [0x80, 0x3C, 0x00, 0x00, 0x06, 0x41, 0x01, 0x00, 0x42, 0x01, 0x00])
    }
}
