import ByteCore
import Codecs
import Crypto
import Foundation
import LockBenchTestSupport
import OfflineUnlock
import XCTest
@testable import AccessProtocol

/// Every reason of every layer below the lock — the engine's `DenyReason`, the protocol's
/// `ProtocolFailure`, the transport's `TransportFailure` — each produced by a real transaction
/// between `ReaderSession` (through `LockReader`) and `CredentialSession`, decided by the real
/// offline-unlock engine, and attributed to the layer that produced it. (The lock's own reasons,
/// `jammed` and `storage_failure`, need a lock: `LockOutcomeTests`, `EmulatedLockTests`.)
final class DenyReasonTests: XCTestCase {
    private var produced: [Refusal.Reason] = []

    private func run(_ credential: CredentialSession, engine: OfflineUnlockEngine = Fixture.engine(),
                     versions: [UInt16] = [ProtocolVersion.v1_0], link: ((InMemoryLink) -> Void)? = nil) -> TransactionOutcome {
        let l = InMemoryLink(credential)
        link?(l)
        return LockReader(configuration: Fixture.readerConfiguration(versions: versions), decider: engine)
            .runTransaction(over: l, at: Fixture.time)
    }

    private func expect(_ reason: Refusal.Reason, _ outcome: TransactionOutcome, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(outcome.reason, reason, "\(outcome.decision)", file: file, line: line)
        if outcome.reason == reason { produced.append(reason) }
    }

    private func expect(_ reason: DenyReason, _ outcome: TransactionOutcome, file: StaticString = #filePath, line: UInt = #line) {
        expect(.engine(reason), outcome, file: file, line: line)
    }

    private func expect(_ reason: ProtocolFailure, _ outcome: TransactionOutcome, file: StaticString = #filePath, line: UInt = #line) {
        expect(.protocol(reason), outcome, file: file, line: line)
    }

    func testEveryDenyReasonFromARealTransaction() {
        // Protocol layer.
        expect(ProtocolFailure.badReaderSignature, run(Fixture.credential(trusting: Fixture.otherReaderKey)))
        expect(ProtocolFailure.badCredentialSignature, run(Fixture.credential(faults: .wrongSignature)))
        expect(ProtocolFailure.secureChannelFailure, run(Fixture.credential(faults: .corruptCiphertext)))
        expect(ProtocolFailure.secureChannelFailure, run(Fixture.credential(faults: .corruptEnvelope)))
        expect(ProtocolFailure.unsupportedVersion, run(Fixture.credential(versions: [0x0200])))
        let both = [ProtocolVersion.v1_0, ProtocolVersion.v0_9]
        expect(ProtocolFailure.downgrade, run(Fixture.credential(versions: both, faults: .stripVersions), versions: both))
        expect(ProtocolFailure.downgrade, run(Fixture.credential(versions: both), versions: both) { link in
            // A man in the middle that strips 1.0 from the SELECT answer.
            link.tap = { command, response in
                guard command[1] == Instruction.select, command.count > 5, Array(command[5..<14]) == AID.expedited,
                      let fci = try? SelectResponse(parsing: Array(response.dropLast(2))) else { return response }
                return SelectResponse(aid: fci.aid, versions: [ProtocolVersion.v0_9], maxCommand: fci.maxCommand,
                                      maxResponse: fci.maxResponse).encoded() + [0x90, 0x00]
            }
        })
        expect(ProtocolFailure.malformedInput, run(Fixture.credential(faults: .malformedAuth0)))
        expect(.transport(.transactionLimit), LockReader(configuration: Fixture.readerConfiguration(), decider: Fixture.engine())
            .runTransaction(over: InMemoryLink(EndlessPeer()), at: Fixture.time))
        let replaying = Fixture.credential(faults: .replayEphemeralKey)
        let engine = Fixture.engine()
        let reader = LockReader(configuration: Fixture.readerConfiguration(), decider: engine)
        XCTAssertTrue(reader.runTransaction(over: InMemoryLink(replaying), at: Fixture.time).granted)
        expect(ProtocolFailure.replay, reader.runTransaction(over: InMemoryLink(replaying), at: Fixture.time))

        // Transport: the link fails mid-transaction (the card leaves the field).
        final class Gone: APDUTransceiver {
            struct Lost: Error {}
            var left = 2
            let inner: InMemoryLink
            init(_ inner: InMemoryLink) { self.inner = inner }
            func transceive(_ command: [UInt8]) throws -> [UInt8] {
                guard left > 0 else { throw Lost() }
                left -= 1
                return try inner.transceive(command)
            }
        }
        expect(.transport(.linkLost), LockReader(configuration: Fixture.readerConfiguration(), decider: Fixture.engine())
            .runTransaction(over: Gone(InMemoryLink(Fixture.credential())), at: Fixture.time))

        // Engine, from the documents the credential delivers in step-up.
        let t = Fixture.time
        expect(.unknownCredential, run(Fixture.credential(accessDocuments: [])))
        expect(.missingDocument, run(Fixture.credential(faults: .emptyDeviceResponse)))
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
        // A document asking for time verification (MSO key 7), signed after the high-water mark:
        // no evidence of time, so a lock without verified time refuses it by that rule.
        expect(.timeNotVerified, run(Fixture.credential(accessDocuments: [Fixture.accessDocument(signed: t.addingTimeInterval(-60), timeVerificationRequired: true)]),
                                     engine: Fixture.engine(clock: TrustedClock(highWaterMark: t.addingTimeInterval(-3600), trusted: false))))
        var noSchedules = LockPolicy()
        noSchedules.supportsSchedules = false
        expect(.schedulesNotSupported, run(Fixture.credential(accessDocuments: [Fixture.accessDocument(schedules: [try! WeeklySchedule(parsing: "daily 00:00-24:00")])]),
                                           engine: Fixture.engine(policy: noSchedules)))

        // Engine, from the lock's policy and memory: the version it allows, its minimum, a
        // transaction id it has seen, a document that is not one.
        var onlyOld = LockPolicy()
        onlyOld.supportedProtocolVersions = [ProtocolVersion.v0_9]
        expect(DenyReason.unsupportedVersion, run(Fixture.credential(), engine: Fixture.engine(policy: onlyOld)))
        var newOnly = LockPolicy()
        newOnly.minimumProtocolVersion = ProtocolVersion.v1_0
        let old = [ProtocolVersion.v0_9]
        expect(DenyReason.downgrade, run(Fixture.credential(versions: old), engine: Fixture.engine(policy: newOnly), versions: old))
        let remembering = Fixture.engine()
        func sameTransactionID() -> LockReader {
            LockReader(configuration: Fixture.readerConfiguration(), decider: remembering, random: SeededRandom("tid"))
        }
        XCTAssertTrue(sameTransactionID().runTransaction(over: InMemoryLink(Fixture.credential()), at: t).granted)
        expect(DenyReason.replay, sameTransactionID().runTransaction(over: InMemoryLink(Fixture.credential()), at: t))
        let notADocument: [UInt8] = [0xA1, 0x61, 0x35, 0x67] + Array("aliro-a".utf8)   // {"5": "aliro-a"}
        expect(DenyReason.malformedInput, run(Fixture.credential(accessDocuments: [notADocument])))

        // Engine, from validity iterations (Aliro 0.9.4 §7.2.3), on a reader that steps up at every tap.
        var everyTap = Fixture.readerConfiguration()
        everyTap.stepUpEveryTap = true
        let iterations = Fixture.engine()
        func tap(_ c: CredentialSession) -> TransactionOutcome {
            LockReader(configuration: everyTap, decider: iterations).runTransaction(over: InMemoryLink(c), at: t)
        }
        XCTAssertTrue(tap(Self.iterated(Fixture.credentialKey, 9)).granted)
        expect(.credentialIssuerRemoved, tap(Self.iterated(Fixture.credentialKey, 0, signedAfter: 1)))
        expect(.iterationRemoved, tap(Self.iterated(Fixture.otherCredentialKey, 1)))

        let every: [Refusal.Reason] = DenyReason.allCases.map { .engine($0) } + ProtocolFailure.allCases.map { .protocol($0) }
            + TransportFailure.allCases.map { .transport($0) }
        XCTAssertEqual(every.filter { !produced.contains($0) }.map(\.description), [], "reasons never produced by a transaction")
    }

    /// A phone with one document of validity iteration `iteration`, signed `signedAfter` seconds
    /// after the fixture's documents.
    static func iterated(_ key: P256.Signing.PrivateKey, _ iteration: Int, signedAfter: TimeInterval = 0) -> CredentialSession {
        let t = Fixture.time
        let document = TestFixtures.accessDocument(credentialPublicKey: key.publicBytes, id: Array("iterated".utf8), from: t.addingTimeInterval(-3600),
                                                   until: t.addingTimeInterval(8 * 3600), signed: t.addingTimeInterval(-3600 + signedAfter),
                                                   issuer: Fixture.issuerKey, validityIteration: iteration)
        return CredentialSession(configuration: CredentialConfiguration(
            signingKey: key, trustedReaders: [TrustedReader(groupID: Fixture.groupID, publicKey: Fixture.readerKey.publicBytes)],
            accessDocuments: [document]), random: SystemRandom())
    }

    /// NFC_RDR_STEPUP_FAST_KPERSISTENT_REMOVED: a credential whose document the issuer removed
    /// loses its Kpersistent (its next tap does AUTH1 and steps up); a stranger keeps it (NFC_RDR_FAST).
    func testARemovedCredentialsKpersistentIsForgotten() {
        var fast = Fixture.readerConfiguration()
        fast.useFast = true
        let reader = LockReader(configuration: fast, decider: Fixture.engine())
        let a = Fixture.credentialKey, b = Fixture.otherCredentialKey
        func cached(_ key: P256.Signing.PrivateKey) -> Bool { reader.fastCache.all.contains { $0.key == key.publicBytes } }
        XCTAssertTrue(reader.runTransaction(over: InMemoryLink(Self.iterated(a, 1)), at: Fixture.time).granted)
        XCTAssertTrue(cached(a))
        XCTAssertTrue(reader.runTransaction(over: InMemoryLink(Self.iterated(b, 9)), at: Fixture.time).granted)
        let refused = reader.runTransaction(over: InMemoryLink(Self.iterated(a, 1)), at: Fixture.time)
        XCTAssertEqual(refused.reason, .engine(.iterationRemoved))
        XCTAssertFalse(cached(a), "A's Kpersistent is gone")
        XCTAssertTrue(cached(b))
        let learning = ReaderLearning(deviceEphemeralKey: nil, credentialPublicKey: b.publicBytes, persistentKey: nil, usedFast: false)
        XCTAssertTrue(learning.isEmpty)
        var forget = learning
        forget.forgetsPersistentKey = true
        XCTAssertFalse(forget.isEmpty)
        let decoded = try! JSONDecoder().decode(ReaderLearning.self, from: JSONEncoder().encode(forget))
        XCTAssertEqual(decoded, forget, "journalled and replayed as it was")
    }

    func testTheCredentialHearsWhy() {
        let credential = Fixture.credential(accessDocuments: [Fixture.accessDocument(from: Fixture.time.addingTimeInterval(-7200), until: Fixture.time.addingTimeInterval(-3600))])
        XCTAssertEqual(run(credential).reason, .engine(.expired))
        XCTAssertEqual(credential.lastReaderStatus, ReaderStatus.keyExpired)
        let refused = Fixture.credential(trusting: Fixture.otherReaderKey)
        XCTAssertEqual(run(refused).reason, .protocol(.badReaderSignature))
        // The public test plan: S2 27 only for "protocol version not supported", 00 otherwise.
        XCTAssertEqual(refused.lastControlFlow, ControlFlow(s1: 0, s2: ControlFlow.noInformation))
        let old = Fixture.credential(versions: [0x0200])
        XCTAssertEqual(run(old).reason, .protocol(.unsupportedVersion))
        XCTAssertEqual(old.lastControlFlow, ControlFlow(s1: 0, s2: ControlFlow.protocolVersionNotSupported))
    }
}
