import ByteCore
import Codecs
import Crypto
import Foundation
import OfflineUnlock
import XCTest
@testable import AccessProtocol

final class TransactionTests: XCTestCase {
    private func reader(_ decider: AccessDecider, versions: [UInt16] = [ProtocolVersion.v1_0]) -> LockReader {
        LockReader(configuration: Fixture.readerConfiguration(versions: versions), decider: decider)
    }

    private var grantAll: TestDecider { TestDecider(known: [Fixture.credentialKey.publicBytes]) }

    func testStandardTransactionGrantsAndTellsTheCredential() {
        let credential = Fixture.credential()
        let lock = reader(grantAll)
        let outcome = lock.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertFalse(outcome.fast)
        XCTAssertFalse(outcome.stepUp)
        XCTAssertTrue(outcome.acknowledged)
        XCTAssertEqual(outcome.version, 0x0100)
        XCTAssertEqual(outcome.credentialKey, Fixture.credentialKey.publicBytes.hex)
        XCTAssertEqual(outcome.transcript.filter { $0.direction == .command }.map(\.label), ["SELECT", "AUTH0", "AUTH1", "EXCHANGE"])
        XCTAssertEqual(credential.lastReaderStatus, ReaderStatus.unsecured)
        XCTAssertEqual(lock.fastCache.count, 1)
        XCTAssertEqual(credential.fastCache.count, 1)
        for entry in outcome.transcript where entry.direction == .command { XCTAssertLessThanOrEqual(entry.bytes.count, 262) }
    }

    func testFastTransactionAfterAStandardOne() {
        let credential = Fixture.credential()
        let lock = reader(grantAll)
        XCTAssertFalse(lock.runTransaction(over: InMemoryLink(credential), at: Fixture.time).fast)
        let fast = lock.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(fast.granted, "\(fast.decision)")
        XCTAssertTrue(fast.fast)
        XCTAssertTrue(fast.acknowledged)
        XCTAssertEqual(fast.transcript.filter { $0.direction == .command }.map(\.label), ["SELECT", "AUTH0", "EXCHANGE"])
        XCTAssertEqual(credential.lastReaderStatus, ReaderStatus.unsecured)
        // And again: FAST keys are fresh per transaction.
        XCTAssertTrue(lock.runTransaction(over: InMemoryLink(credential), at: Fixture.time).fast)
    }

    func testFastFallsBackToStandardWhenTheReaderForgot() {
        let credential = Fixture.credential()
        let lock = reader(grantAll)
        _ = lock.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        lock.fastCache = FastCache()
        let outcome = lock.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(outcome.granted)
        XCTAssertFalse(outcome.fast)
    }

    func testNoFastKeyIsCachedForADeniedCredential() {
        let credential = Fixture.credential()
        let lock = reader(TestDecider(known: []))
        let outcome = lock.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .unknownCredential)
        XCTAssertEqual(lock.fastCache.count, 0)
        XCTAssertEqual(credential.lastReaderStatus, ReaderStatus.keyNotFound)
    }

    func testStepUpCarriesLargeDocumentsThroughChaining() throws {
        // Documents large enough that ENVELOPE's answer needs several GET RESPONSEs.
        let access = CBOR.map(["5": .text(DocType.access), "1": .bytes([UInt8](repeating: 0xA1, count: 900))]).encoded()
        let revocation = CBOR.map(["5": .text(DocType.revocation), "1": .bytes([UInt8](repeating: 0xB2, count: 300))]).encoded()
        let credential = Fixture.credential(accessDocuments: [access], revocationDocuments: [revocation])
        let decider = grantAll
        decider.stepUpFor = [Fixture.credentialKey.publicBytes]
        let outcome = reader(decider).runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertTrue(outcome.stepUp)
        XCTAssertEqual(decider.presentations.last?.accessDocuments, [access])
        XCTAssertEqual(decider.presentations.last?.revocationDocuments, [revocation])
        let labels = outcome.transcript.filter { $0.direction == .command }.map(\.label)
        XCTAssertTrue(labels.contains("GET RESPONSE"), "\(labels)")
        XCTAssertEqual(labels.last, "EXCHANGE")
        for entry in outcome.transcript {
            XCTAssertLessThanOrEqual(entry.bytes.count, entry.direction == .command ? 262 : 263)
        }
    }

    func testStepUpRequestIsChainedWhenTheReaderChunksSmall() {
        let access = CBOR.map(["5": .text(DocType.access)]).encoded()
        let credential = Fixture.credential(accessDocuments: [access])
        let decider = grantAll
        decider.stepUpFor = [Fixture.credentialKey.publicBytes]
        var config = Fixture.readerConfiguration()
        config.commandChunk = 16
        let outcome = LockReader(configuration: config, decider: decider).runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertTrue(outcome.transcript.contains { $0.direction == .command && $0.bytes[0] & 0x10 != 0 })
    }

    // MARK: Deny reasons produced by the protocol

    func testBadReaderSignature() {
        let credential = Fixture.credential(trusting: Fixture.otherReaderKey)
        let outcome = reader(grantAll).runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .badReaderSignature)
        XCTAssertEqual(credential.lastControlFlow?.s2, ControlFlow.authenticationFailure)
        XCTAssertTrue(outcome.acknowledged)
    }

    func testBadCredentialSignature() {
        let outcome = reader(grantAll).runTransaction(over: InMemoryLink(Fixture.credential(faults: .wrongSignature)), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .badCredentialSignature)
    }

    func testSecureChannelFailure() {
        let outcome = reader(grantAll).runTransaction(over: InMemoryLink(Fixture.credential(faults: .corruptCiphertext)), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .secureChannelFailure)
    }

    func testSecureChannelFailureInStepUp() {
        let credential = Fixture.credential(faults: .corruptEnvelope, accessDocuments: [CBOR.map(["5": .text(DocType.access)]).encoded()])
        let decider = grantAll
        decider.stepUpFor = [Fixture.credentialKey.publicBytes]
        let outcome = reader(decider).runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .secureChannelFailure)
    }

    func testUnsupportedVersion() {
        let credential = Fixture.credential(versions: [ProtocolVersion.v0_9])
        let outcome = reader(grantAll).runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .unsupportedVersion)
        XCTAssertEqual(credential.lastControlFlow?.s2, 0x00)
    }

    func testOlderVersionIsFineWhenBothSpeakIt() {
        let credential = Fixture.credential(versions: [ProtocolVersion.v0_9])
        let outcome = reader(grantAll, versions: [ProtocolVersion.v1_0, ProtocolVersion.v0_9])
            .runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertEqual(outcome.version, ProtocolVersion.v0_9)
    }

    func testDowngradeByAManInTheMiddleThatStripsVersions() throws {
        let both = [ProtocolVersion.v1_0, ProtocolVersion.v0_9]
        let credential = Fixture.credential(versions: both)
        let link = InMemoryLink(credential)
        link.tap = { command, response in
            guard command.count > 1, command[1] == Instruction.select, let r = try? ResponseAPDU(parsing: response),
                  let fci = try? SelectResponse(parsing: r.data) else { return response }
            return SelectResponse(aid: fci.aid, versions: [ProtocolVersion.v0_9], maxCommand: fci.maxCommand,
                                  maxResponse: fci.maxResponse).encoded() + [0x90, 0x00]
        }
        let outcome = reader(grantAll, versions: both).runTransaction(over: link, at: Fixture.time)
        XCTAssertEqual(outcome.reason, .downgrade)
        // The same through the credential's own fault switch (usable from the command line).
        let faulty = Fixture.credential(versions: both, faults: .stripVersions)
        XCTAssertEqual(reader(grantAll, versions: both).runTransaction(over: InMemoryLink(faulty), at: Fixture.time).reason, .downgrade)
    }

    func testMalformedInput() {
        let outcome = reader(grantAll).runTransaction(over: InMemoryLink(Fixture.credential(faults: .malformedAuth0)), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .malformedInput)
    }

    func testReplayedEphemeralKey() {
        let credential = Fixture.credential(faults: .replayEphemeralKey)
        let lock = reader(grantAll)
        lock.configuration.useFast = false
        XCTAssertTrue(lock.runTransaction(over: InMemoryLink(credential), at: Fixture.time).granted)
        let second = lock.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertEqual(second.reason, .replay)
    }

    func testTransportFailureIsADeny() {
        final class Gone: APDUTransceiver {
            struct Lost: Error {}
            func transceive(_ command: [UInt8]) throws -> [UInt8] { throw Lost() }
        }
        let outcome = reader(grantAll).runTransaction(over: Gone(), at: Fixture.time)
        XCTAssertFalse(outcome.granted)
        XCTAssertEqual(outcome.reason, .malformedInput)
    }

    /// Every deny reason the protocol layer itself produces comes out of a real transaction.
    func testProtocolDenyReasonsAreCovered() {
        let produced: Set<DenyReason> = [.badReaderSignature, .badCredentialSignature, .secureChannelFailure,
                                         .unsupportedVersion, .downgrade, .malformedInput, .replay]
        XCTAssertEqual(produced.count, 7)
    }
}
