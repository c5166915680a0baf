import ByteCore
import Codecs
import Crypto
import Foundation
import LockBenchTestSupport
import OfflineUnlock
import XCTest
@testable import AccessProtocol

/// Whole transactions between the two state machines, decided by the real offline-unlock engine.
final class TransactionTests: XCTestCase {
    private func lock(_ engine: AccessDecider = Fixture.engine(), versions: [UInt16] = [ProtocolVersion.v1_0]) -> LockReader {
        LockReader(configuration: Fixture.readerConfiguration(versions: versions), decider: engine)
    }

    private func labels(_ o: TransactionOutcome) -> [String] {
        o.transcript.filter { $0.direction == .command }.map(\.label)
    }

    /// A phone told when its answers have gone (as the virtual PN532 tells it) works ahead: K
    /// after AUTH0, Kpersistent after AUTH1. The reader cannot tell the difference.
    func testAPhoneThatWorksAheadBetweenCommandsTransactsAsOneThatDoesNot() {
        for ahead in [false, true] {
            let credential = Fixture.credential()
            let reader = lock()
            XCTAssertTrue(reader.runTransaction(over: InMemoryLink(credential, announcesAnswers: ahead), at: Fixture.time).granted)
            reader.configuration.useFast = false
            let standard = reader.runTransaction(over: InMemoryLink(credential, announcesAnswers: ahead), at: Fixture.time)
            XCTAssertTrue(standard.granted, "ahead \(ahead): \(standard.decision)")
            XCTAssertFalse(standard.fast)
            reader.configuration.useFast = true
            let fast = reader.runTransaction(over: InMemoryLink(credential, announcesAnswers: ahead), at: Fixture.time)
            XCTAssertTrue(fast.granted && fast.fast, "ahead \(ahead): \(fast.decision) fast=\(fast.fast)")
            XCTAssertEqual(credential.fastCache.count, 1)
        }
    }

    /// The reader signs and sends AUTH1 before its ECDH (which runs while AUTH1 is out), so it
    /// checks the device ephemeral key is a curve point first: a key off the curve never gets AUTH1.
    func testADeviceEphemeralKeyOffTheCurveIsRefusedBeforeAUTH1() {
        let credential = Fixture.credential()
        let reader = lock()
        _ = reader.runTransaction(over: InMemoryLink(credential), at: Fixture.time)   // documents cached
        reader.configuration.useFast = false
        let link = InMemoryLink(credential)
        var sentAUTH1 = false
        link.tap = { command, response in
            if command.count > 1, command[1] == Instruction.auth1 { sentAUTH1 = true }
            guard command.count > 1, command[1] == Instruction.auth0, response.count >= 67, response[0] == 0x86, response[1] == 0x41 else { return response }
            var r = response
            for i in 3..<67 { r[i] = 0xFF }     // x, y ≥ p: not a point
            return r
        }
        let outcome = reader.runTransaction(over: link, at: Fixture.time)
        XCTAssertFalse(outcome.granted)
        XCTAssertEqual(outcome.refusal?.reason, .protocol(.malformedInput))
        XCTAssertTrue("\(outcome.decision)".contains("not a point on P-256"), "\(outcome.decision)")
        XCTAssertFalse(sentAUTH1)
    }

    func testFirstContactStepsUpThenStandardThenFast() {
        let credential = Fixture.credential()
        let reader = lock()
        // 1. The lock has no document for this key: step-up fetches it.
        let first = reader.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(first.granted, "\(first.decision)")
        XCTAssertTrue(first.stepUp)
        XCTAssertEqual(first.credentialID, Hex.encode(Array("alice-1".utf8)))
        XCTAssertEqual(credential.lastReaderStatus, ReaderStatus.unsecured)
        XCTAssertEqual(reader.fastCache.count, 1)
        XCTAssertEqual(credential.fastCache.count, 1)
        // 2. Standard: the document is cached, no step-up.
        reader.configuration.useFast = false
        let standard = reader.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(standard.granted, "\(standard.decision)")
        XCTAssertFalse(standard.stepUp)
        XCTAssertFalse(standard.fast)
        XCTAssertEqual(labels(standard), ["SELECT", "AUTH0", "AUTH1", "EXCHANGE"])
        XCTAssertEqual(standard.credentialKey, Fixture.credentialKey.publicBytes.hex)
        XCTAssertTrue(standard.acknowledged)
        // 3. FAST: no asymmetric work, three commands.
        reader.configuration.useFast = true
        let fast = reader.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(fast.granted, "\(fast.decision)")
        XCTAssertTrue(fast.fast)
        XCTAssertTrue(fast.acknowledged)
        XCTAssertEqual(labels(fast), ["SELECT", "AUTH0", "EXCHANGE"])
        XCTAssertEqual(credential.lastReaderStatus, ReaderStatus.unsecured)
        // FAST keys are fresh per transaction: again.
        XCTAssertTrue(reader.runTransaction(over: InMemoryLink(credential), at: Fixture.time).fast)
        for o in [first, standard, fast] {
            for entry in o.transcript { XCTAssertLessThanOrEqual(entry.bytes.count, entry.direction == .command ? 262 : 263) }
        }
    }

    func testFastFallsBackToStandardWhenTheReaderForgot() {
        let credential = Fixture.credential()
        let reader = lock()
        _ = reader.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        reader.fastCache = FastCache()
        let outcome = reader.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(outcome.granted)
        XCTAssertFalse(outcome.fast)
        XCTAssertEqual(reader.fastCache.count, 1)
    }

    func testFastFallsBackToStepUpWhenTheLockNeedsDocumentsAgain() {
        let credential = Fixture.credential()
        let engine = Fixture.engine()
        let reader = lock(engine)
        _ = reader.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        var state = engine.state
        state.cachedDocuments = [:]
        engine.state = state
        let outcome = reader.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertFalse(outcome.fast)
        XCTAssertTrue(outcome.stepUp)
    }

    /// NFC_RDR_FAST: the tool's phone has no document and a key the reader does not know, yet its
    /// second tap must run FAST. So an authenticated standard transaction teaches the reader the
    /// phone's Kpersistent whatever the decision, and the engine still decides the FAST tap.
    func testADeniedCredentialsFastKeyIsCachedAndItsFastTapIsStillDenied() {
        let credential = Fixture.credential(accessDocuments: [])
        let reader = lock()
        let outcome = reader.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .engine(.unknownCredential))
        XCTAssertEqual(reader.fastCache.count, 1)
        // Not this lock's credential: told the reader's state, secured (NFC_RDR_EXCHANGE_MAILBOX).
        XCTAssertEqual(credential.lastReaderStatus, ReaderStatus.secured)
        let again = reader.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(again.fast)
        XCTAssertEqual(again.reason, .engine(.unknownCredential))
        XCTAssertEqual(credential.lastReaderStatus, ReaderStatus.secured)
    }

    /// A reader that has met no phone asks for a standard AUTH0 (flags 00), as every official
    /// reader case's first tap requires; once it holds a Kpersistent it asks for FAST.
    func testTheFirstAUTH0IsStandardAndFASTIsAskedOnceAKeyIsCached() {
        let credential = Fixture.credential(accessDocuments: [Fixture.accessDocument()])
        let reader = lock()
        let first = reader.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertEqual(first.transcript.first { $0.label == "AUTH0" }?.bytes[7], 0x00, "41 01 flags of the first AUTH0")
        let second = reader.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertEqual(second.transcript.first { $0.label == "AUTH0" }?.bytes[7], Auth0Command.flagFast)
        XCTAssertTrue(second.fast)
    }

    func testStepUpCarriesAccessAndRevocationDocumentsThroughResponseChaining() {
        let access = Fixture.accessDocument()
        let revocation = Fixture.revocationDocument(revoking: Fixture.otherCredentialKey)
        let credential = Fixture.credential(accessDocuments: [access], revocationDocuments: [revocation])
        let decider = RecordingDecider(Fixture.engine())
        let outcome = lock(decider).runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertTrue(outcome.stepUp)
        XCTAssertEqual(decider.presentations.last?.accessDocuments, [access])
        XCTAssertEqual(decider.presentations.last?.revocationDocuments, [revocation])
        // No step-up SELECT: the credential's bitmap leaves bit 2 clear (InteropRegressionTests).
        XCTAssertEqual(labels(outcome), ["SELECT", "AUTH0", "AUTH1", "ENVELOPE", "GET RESPONSE", "GET RESPONSE", "GET RESPONSE", "EXCHANGE"])
    }

    func testStepUpRequestIsChainedWhenTheReaderChunksSmall() {
        let credential = Fixture.credential()
        var config = Fixture.readerConfiguration()
        config.commandChunk = 16
        let outcome = LockReader(configuration: config, decider: Fixture.engine()).runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertTrue(outcome.transcript.contains { $0.direction == .command && $0.bytes[0] & 0x10 != 0 })
    }

    func testOlderVersionIsFineWhenBothSpeakIt() {
        let credential = Fixture.credential(versions: [ProtocolVersion.v0_9])
        let outcome = lock(versions: [ProtocolVersion.v1_0, ProtocolVersion.v0_9]).runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertEqual(outcome.version, ProtocolVersion.v0_9)
    }

    func testBLEInterfaceByteIsBoundIntoTheKeys() {
        // A reader on BLE and a credential that thinks it is on NFC derive different keys.
        var config = Fixture.readerConfiguration()
        config.interface = .ble
        let outcome = LockReader(configuration: config, decider: Fixture.engine()).runTransaction(over: InMemoryLink(Fixture.credential()), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .protocol(.secureChannelFailure))
        let bleCredential = CredentialSession(configuration: CredentialConfiguration(
            signingKey: Fixture.credentialKey, trustedReaders: [TrustedReader(groupID: Fixture.groupID, publicKey: Fixture.readerKey.publicBytes)],
            accessDocuments: [Fixture.accessDocument()], interface: .ble))
        XCTAssertTrue(LockReader(configuration: config, decider: Fixture.engine()).runTransaction(over: InMemoryLink(bleCredential), at: Fixture.time).granted)
    }

    /// Issue 9 item 3: the link drops after the lock decided (the closing EXCHANGE never gets an
    /// answer). The outcome is what the lock decided and did, and separately that the phone never
    /// heard it.
    func testLinkLostAfterTheDecisionKeepsTheDecision() {
        final class DropsExchange: APDUTransceiver {
            struct Lost: Error {}
            let inner: InMemoryLink
            init(_ c: CredentialSession) { inner = InMemoryLink(c) }
            func transceive(_ command: [UInt8]) throws -> [UInt8] {
                if command.count > 1, command[1] == Instruction.exchange { throw Lost() }
                return try inner.transceive(command)
            }
        }
        let decider = RecordingDecider(Fixture.engine())
        let outcome = lock(decider).runTransaction(over: DropsExchange(Fixture.credential()), at: Fixture.time)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertTrue(outcome.decided)
        XCTAssertFalse(outcome.acknowledged)
        XCTAssertEqual(outcome.linkLostAfterDecision, "Lost()")
        XCTAssertEqual(decider.presentations.count, 1)
        // Before the decision a lost link is still the transport's denial.
        final class Gone: APDUTransceiver { func transceive(_ c: [UInt8]) throws -> [UInt8] { throw DropsExchange.Lost() } }
        let early = lock().runTransaction(over: Gone(), at: Fixture.time)
        XCTAssertFalse(early.decided)
        XCTAssertNil(early.linkLostAfterDecision)
    }

    /// Issue 10 §1: a transport failure is the transport's own reason (`link_lost`), no longer
    /// the protocol's `malformed_input` with a "transport:" detail.
    func testTransportFailureIsADeny() {
        final class Gone: APDUTransceiver {
            struct Lost: Error {}
            func transceive(_ command: [UInt8]) throws -> [UInt8] { throw Lost() }
        }
        let outcome = lock().runTransaction(over: Gone(), at: Fixture.time)
        XCTAssertFalse(outcome.granted)
        XCTAssertEqual(outcome.reason, .transport(.linkLost))
        XCTAssertEqual(outcome.refusal?.code, "link_lost")
        XCTAssertEqual(outcome.refusal?.layer, .transport)
        XCTAssertTrue(outcome.decision == .deny(Refusal(.transport(.linkLost), detail: "transport: Lost()")), "\(outcome.decision)")
    }
}
