import ByteCore
import Codecs
import Crypto
import Foundation
import LockBenchTestSupport
import OfflineUnlock
import XCTest
@testable import AccessProtocol

/// Every `DenyReason`, each produced by a real transaction between `ReaderSession` (through
/// `LockReader`) and `CredentialSession`, decided by the real offline-unlock engine.
final class DenyReasonTests: XCTestCase {
    private var produced: Set<DenyReason> = []

    private func run(_ credential: CredentialSession, engine: OfflineUnlockEngine = Fixture.engine(),
                     versions: [UInt16] = [ProtocolVersion.v1_0], link: ((InMemoryLink) -> Void)? = nil) -> TransactionOutcome {
        let l = InMemoryLink(credential)
        link?(l)
        return LockReader(configuration: Fixture.readerConfiguration(versions: versions), decider: engine)
            .runTransaction(over: l, at: Fixture.time)
    }

    private func expect(_ reason: DenyReason, _ outcome: TransactionOutcome, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(outcome.reason, reason, "\(outcome.decision)", file: file, line: line)
        produced.insert(reason)
    }

    func testEveryDenyReasonFromARealTransaction() {
        // Protocol layer.
        expect(.badReaderSignature, run(Fixture.credential(trusting: Fixture.otherReaderKey)))
        expect(.badCredentialSignature, run(Fixture.credential(faults: .wrongSignature)))
        expect(.secureChannelFailure, run(Fixture.credential(faults: .corruptCiphertext)))
        expect(.secureChannelFailure, run(Fixture.credential(faults: .corruptEnvelope)))
        expect(.unsupportedVersion, run(Fixture.credential(versions: [0x0200])))
        let both = [ProtocolVersion.v1_0, ProtocolVersion.v0_9]
        expect(.downgrade, run(Fixture.credential(versions: both, faults: .stripVersions), versions: both))
        expect(.downgrade, run(Fixture.credential(versions: both), versions: both) { link in
            // A man in the middle that strips 1.0 from the SELECT answer.
            link.tap = { command, response in
                guard command[1] == Instruction.select, command.count > 5, Array(command[5..<14]) == AID.expedited,
                      let fci = try? SelectResponse(parsing: Array(response.dropLast(2))) else { return response }
                return SelectResponse(aid: fci.aid, versions: [ProtocolVersion.v0_9], maxCommand: fci.maxCommand,
                                      maxResponse: fci.maxResponse).encoded() + [0x90, 0x00]
            }
        })
        expect(.malformedInput, run(Fixture.credential(faults: .malformedAuth0)))
        expect(.transactionLimit, LockReader(configuration: Fixture.readerConfiguration(), decider: Fixture.engine())
            .runTransaction(over: InMemoryLink(EndlessPeer()), at: Fixture.time))
        let replaying = Fixture.credential(faults: .replayEphemeralKey)
        let engine = Fixture.engine()
        let reader = LockReader(configuration: Fixture.readerConfiguration(), decider: engine)
        XCTAssertTrue(reader.runTransaction(over: InMemoryLink(replaying), at: Fixture.time).granted)
        expect(.replay, reader.runTransaction(over: InMemoryLink(replaying), at: Fixture.time))

        // Engine, from the documents the credential delivers in step-up.
        let t = Fixture.time
        expect(.unknownCredential, run(Fixture.credential(accessDocuments: [])))
        expect(.untrustedIssuer, run(Fixture.credential(accessDocuments: [Fixture.accessDocument(by: Fixture.otherIssuerKey)])))
        var tampered = try! AccessDocument(parsing: Fixture.accessDocument())
        tampered.document.items = try! AccessDocument(parsing: Fixture.accessDocument(id: "mallory")).document.items
        expect(.digestMismatch, run(Fixture.credential(accessDocuments: [tampered.encoded()])))
        expect(.documentKeyMismatch, run(Fixture.credential(accessDocuments: [Fixture.accessDocument(for: Fixture.otherCredentialKey)])))
        expect(.notYetValid, run(Fixture.credential(accessDocuments: [Fixture.accessDocument(from: t.addingTimeInterval(3600), until: t.addingTimeInterval(7200), signed: t.addingTimeInterval(-60))])))
        expect(.expired, run(Fixture.credential(accessDocuments: [Fixture.accessDocument(from: t.addingTimeInterval(-7200), until: t.addingTimeInterval(-3600))])))
        expect(.validityTooLong, run(Fixture.credential(accessDocuments: [Fixture.accessDocument(until: t.addingTimeInterval(30 * 86_400))])))
        expect(.wrongReader, run(Fixture.credential(accessDocuments: [Fixture.accessDocument(readers: [try! ReaderRule(groupID: [UInt8](repeating: 0xEE, count: 16))])])))
        expect(.outsideSchedule, run(Fixture.credential(accessDocuments: [Fixture.accessDocument(schedules: [try! WeeklySchedule(parsing: "sat-sun 00:00-24:00")])])))
        expect(.revoked, run(Fixture.credential(revocationDocuments: [Fixture.revocationDocument()])))
        expect(.clockUntrusted, run(Fixture.credential(accessDocuments: [Fixture.accessDocument(signed: t.addingTimeInterval(-86_400))]),
                                    engine: Fixture.engine(clock: TrustedClock(highWaterMark: t, trusted: false))))
        expect(.clockRollback, run(Fixture.credential(), engine: Fixture.engine(clock: TrustedClock(trustedAt: t.addingTimeInterval(86_400)))))

        XCTAssertEqual(Set(DenyReason.allCases).subtracting(produced), [], "deny reasons never produced by a transaction")
    }

    func testTheCredentialHearsWhy() {
        let credential = Fixture.credential(accessDocuments: [Fixture.accessDocument(from: Fixture.time.addingTimeInterval(-7200), until: Fixture.time.addingTimeInterval(-3600))])
        XCTAssertEqual(run(credential).reason, .expired)
        XCTAssertEqual(credential.lastReaderStatus, ReaderStatus.keyExpired)
        let refused = Fixture.credential(trusting: Fixture.otherReaderKey)
        XCTAssertEqual(run(refused).reason, .badReaderSignature)
        // The public test plan: S2 27 only for "protocol version not supported", 00 otherwise.
        XCTAssertEqual(refused.lastControlFlow, ControlFlow(s1: 0, s2: ControlFlow.noInformation))
        let old = Fixture.credential(versions: [0x0200])
        XCTAssertEqual(run(old).reason, .unsupportedVersion)
        XCTAssertEqual(old.lastControlFlow, ControlFlow(s1: 0, s2: ControlFlow.protocolVersionNotSupported))
    }
}
