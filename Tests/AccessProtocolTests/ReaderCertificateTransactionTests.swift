import ByteCore
import Codecs
import Crypto
import Foundation
import LockBenchTestDoubles
import LockBenchTestSupport
import OfflineUnlock
import XCTest
@testable import AccessProtocol

/// Whole transactions where the lock presents a reader certificate (in AUTH1 `90` or by LOAD
/// CERT, chained or not) and the phone trusts the reader issuer CA for the group; and each reason
/// the phone refuses one.
final class ReaderCertificateTransactionTests: XCTestCase {
    static let caKey = Fixture.key(0x57)
    static let otherCAKey = Fixture.key(0x58)

    static func certificate(over key: P256.Signing.PrivateKey = Fixture.readerKey, by ca: P256.Signing.PrivateKey = caKey,
                            longNames: Bool = false, until: Date = Fixture.time.addingTimeInterval(86_400)) -> ReaderCertificate {
        try! ReaderCertificate.issue(subjectPublicKey: key.publicBytes, issuerKey: ca,
                                     serialNumber: longNames ? [UInt8](repeating: 0x42, count: 20) : ReaderCertificate.defaultSerialNumber,
                                     issuer: longNames ? String(repeating: "i", count: 32) : "issuer",
                                     subject: longNames ? String(repeating: "s", count: 32) : "subject",
                                     notBefore: Fixture.time.addingTimeInterval(-86_400), notAfter: until)
    }

    /// One certificate for the whole class (ECDSA signatures differ at every issue).
    static let standard = certificate()

    private func lock(_ mode: ReaderCertificatePresentation.Mode?, certificate: ReaderCertificate = standard,
                      issuer: P256.Signing.PrivateKey = caKey, alwaysChain: Bool = false) -> LockReader {
        var config = Fixture.readerConfiguration()
        config.useFast = false
        config.certificate = mode.map { ReaderCertificatePresentation(certificate: certificate, issuerPublicKey: issuer.publicBytes,
                                                                       mode: $0, alwaysChain: alwaysChain) }
        return LockReader(configuration: config, decider: Fixture.engine())
    }

    private func phone(trusting reader: TrustedReader = TrustedReader(groupID: Fixture.groupID, publicKey: caKey.publicBytes, issuerCA: true),
                       faults: CredentialFaults = []) -> CredentialSession {
        var c = CredentialConfiguration(signingKey: Fixture.credentialKey, trustedReaders: [reader],
                                        accessDocuments: [Fixture.accessDocument()], faults: faults)
        c.now = { Fixture.time }
        return CredentialSession(configuration: c)
    }

    private func commands(_ o: TransactionOutcome, _ label: String) -> [[UInt8]] {
        o.transcript.filter { $0.direction == .command && $0.label == label }.map(\.bytes)
    }

    private func refusedAtAUTH1(_ o: TransactionOutcome, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(o.granted, file: file, line: line)
        let answer = o.transcript.last { $0.direction == .response && $0.label == "AUTH1" }
        XCTAssertEqual(answer?.bytes, [0x69, 0x82], "AUTH1 must be refused 6982", file: file, line: line)
    }

    func testCertificateInAUTH1IsOneAPDUAndGrants() throws {
        let o = lock(.auth1).runTransaction(over: InMemoryLink(phone()), at: Fixture.time)
        XCTAssertTrue(o.granted, "\(o.decision)")
        let auth1 = commands(o, "AUTH1")
        XCTAssertEqual(auth1.count, 1)
        XCTAssertEqual(auth1[0][0], 0x80)
        let tlvs = try TLV.parseAll(Array(auth1[0][5..<(auth1[0].count - 1)]))
        XCTAssertEqual(tlvs.map(\.tag), [0x41, 0x9E, 0x90])
        XCTAssertEqual(tlvs[2].value, Self.standard.compressed())
        XCTAssertTrue(commands(o, "LOAD CERT").isEmpty)
    }

    func testCertificateByLoadCertComesBetweenAUTH0AndAUTH1() throws {
        let o = lock(.loadCert).runTransaction(over: InMemoryLink(phone()), at: Fixture.time)
        XCTAssertTrue(o.granted, "\(o.decision)")
        let labels = o.transcript.filter { $0.direction == .command }.map(\.label)
        XCTAssertEqual(Array(labels.prefix(4)), ["SELECT", "AUTH0", "LOAD CERT", "AUTH1"])
        let load = commands(o, "LOAD CERT")
        XCTAssertEqual(load.count, 1)
        XCTAssertEqual(Array(load[0].prefix(4)), [0x80, 0xD1, 0x00, 0x00])
        XCTAssertEqual(load[0].last, 0x00, "Le 00 as the official reader sends")
        let auth1 = commands(o, "AUTH1")[0]
        XCTAssertNil(try Auth1Command(parsing: Array(auth1[5..<(auth1.count - 1)])).certificate, "no 90 once LOAD CERT carried it")
    }

    /// Chained on request (the case names WITH_CHAINING), and on its own when the certificate is long.
    func testChainingOnRequestAndWhenLong() {
        for mode in ReaderCertificatePresentation.Mode.allCases {
            for (cert, always) in [(Self.standard, true), (Self.certificate(longNames: true), false)] {
                let o = lock(mode, certificate: cert, alwaysChain: always).runTransaction(over: InMemoryLink(phone()), at: Fixture.time)
                XCTAssertTrue(o.granted, "\(mode) always=\(always): \(o.decision)")
                let parts = commands(o, mode == .auth1 ? "AUTH1" : "LOAD CERT")
                XCTAssertGreaterThanOrEqual(parts.count, 2, "\(mode) always=\(always)")
                XCTAssertEqual(parts.dropLast().map { $0[0] }, Array(repeating: 0x90, count: parts.count - 1))
                XCTAssertEqual(parts.last?[0], 0x80)
            }
        }
        XCTAssertGreaterThan(Self.certificate(longNames: true).compressed().count + 70, 255)
    }

    func testAnIssuerCAGroupNeedsACertificate() {
        refusedAtAUTH1(lock(nil).runTransaction(over: InMemoryLink(phone()), at: Fixture.time))
    }

    func testACertificateFromAnotherCAIsRefused() {
        let o = lock(.loadCert, certificate: Self.certificate(by: Self.otherCAKey), issuer: Self.otherCAKey)
            .runTransaction(over: InMemoryLink(phone()), at: Fixture.time)
        refusedAtAUTH1(o)
        XCTAssertEqual(o.transcript.first { $0.direction == .response && $0.label == "LOAD CERT" }?.bytes, [0x90, 0x00],
                       "LOAD CERT itself is answered 9000, as the official phone does")
    }

    func testAnExpiredCertificateIsRefused() {
        refusedAtAUTH1(lock(.auth1, certificate: Self.certificate(until: Fixture.time.addingTimeInterval(-60)))
            .runTransaction(over: InMemoryLink(phone()), at: Fixture.time))
    }

    /// The certificate verifies but names another key than the one that signed AUTH1.
    func testACertificateOverAnotherKeyIsRefused() {
        refusedAtAUTH1(lock(.auth1, certificate: Self.certificate(over: Fixture.otherReaderKey))
            .runTransaction(over: InMemoryLink(phone()), at: Fixture.time))
    }

    /// A phone that trusts the reader key itself and is sent a certificate the reader key did not
    /// sign refuses it; with the fault it takes the certificate unchecked.
    func testAnUndecodableOrUntrustedCertificateIsRefusedUnlessTheFaultSkipsTheCheck() {
        let plain = TrustedReader(groupID: Fixture.groupID, publicKey: Fixture.readerKey.publicBytes)
        var config = Fixture.readerConfiguration()
        config.useFast = false
        config.certificate = ReaderCertificatePresentation(certificate: Self.standard, issuerPublicKey: Fixture.readerKey.publicBytes, mode: .auth1)
        refusedAtAUTH1(LockReader(configuration: config, decider: Fixture.engine()).runTransaction(over: InMemoryLink(phone(trusting: plain)), at: Fixture.time))
        let ignoring = LockReader(configuration: config, decider: Fixture.engine())
            .runTransaction(over: InMemoryLink(phone(trusting: plain, faults: .skipCertificateCheck)), at: Fixture.time)
        XCTAssertTrue(ignoring.granted, "\(ignoring.decision)")
    }

    func testLoadCertOutOfSequenceAndEmptyAreRefused() {
        let p = phone()
        let load = ReaderCertificatePresentation(certificate: Self.standard, issuerPublicKey: Self.caKey.publicBytes, mode: .loadCert).loadCertCommand
        XCTAssertEqual(p.respond(to: load.bytes), [0x69, 0x85], "LOAD CERT before AUTH0")
        _ = p.respond(to: Commands.select(AID.expedited).bytes)
        _ = p.respond(to: Auth0Command(flags: 0, policy: 1, version: ProtocolVersion.v1_0, readerEphemeralKey: Fixture.key(0x60).publicBytes,
                                       transactionID: [UInt8](repeating: 1, count: 16), readerID: Fixture.groupID + Fixture.subID).apdu.bytes)
        XCTAssertEqual(p.respond(to: CommandAPDU(cla: 0x80, ins: Instruction.loadCert, data: [], le: 256).bytes), [0x67, 0x00], "empty LOAD CERT")
        // A chain longer than any certificate: each part 9000, the whole refused 6700.
        let long = CommandAPDU(cla: 0x80, ins: Instruction.loadCert, data: [UInt8](repeating: 0x30, count: ReaderCertificate.maxCompressed + 1), le: 256)
        let parts = CommandChainer.split(long)
        for part in parts.dropLast() { XCTAssertEqual(p.respond(to: part.bytes), [0x90, 0x00]) }
        XCTAssertEqual(p.respond(to: parts.last!.bytes), [0x67, 0x00], "LOAD CERT longer than \(ReaderCertificate.maxCompressed) bytes")
        XCTAssertEqual(p.respond(to: CommandAPDU(cla: 0x80, ins: Instruction.loadCert, data: [0x30, 0x00], le: 256).bytes), [0x90, 0x00],
                       "an undecodable certificate is still answered 9000 (refused at AUTH1)")
    }

    /// A group trusted both ways: the reader's own key for a reader without a certificate (the
    /// omit-certificate fault's lock), the CA for one with.
    func testAGroupTrustedBothWaysTakesEither() {
        let both = CredentialSession(configuration: {
            var c = CredentialConfiguration(signingKey: Fixture.credentialKey,
                                            trustedReaders: [TrustedReader(groupID: Fixture.groupID, publicKey: Fixture.readerKey.publicBytes),
                                                             TrustedReader(groupID: Fixture.groupID, publicKey: Self.caKey.publicBytes, issuerCA: true)],
                                            accessDocuments: [Fixture.accessDocument()])
            c.now = { Fixture.time }
            return c
        }())
        let withCertificate = lock(.auth1)
        XCTAssertTrue(withCertificate.runTransaction(over: InMemoryLink(both), at: Fixture.time).granted)
        withCertificate.configuration.faults = .omitCertificate
        let without = withCertificate.runTransaction(over: InMemoryLink(both), at: Fixture.time)
        XCTAssertTrue(without.granted, "\(without.decision)")
        XCTAssertNil(try Auth1Command(parsing: Array(commands(without, "AUTH1")[0].dropFirst(5).dropLast())).certificate)
        // The CA-only phone refuses the lock that omits its certificate.
        refusedAtAUTH1(withCertificate.runTransaction(over: InMemoryLink(phone()), at: Fixture.time))
    }

    /// Skipping the check, an undecodable certificate is as none: AUTH1 checked with the group key.
    func testSkippingTheCheckTakesAnUndecodableCertificateAsNone() {
        let plain = TrustedReader(groupID: Fixture.groupID, publicKey: Fixture.readerKey.publicBytes)
        var broken = Self.standard
        broken.signature = []   // [6] holds only the 00: the compressed form does not decode
        for (faults, granted) in [(CredentialFaults(), false), (.skipCertificateCheck, true)] {
            var config = Fixture.readerConfiguration()
            config.useFast = false
            config.certificate = ReaderCertificatePresentation(certificate: broken, issuerPublicKey: Fixture.readerKey.publicBytes, mode: .loadCert)
            let o = LockReader(configuration: config, decider: Fixture.engine()).runTransaction(over: InMemoryLink(phone(trusting: plain, faults: faults)), at: Fixture.time)
            XCTAssertEqual(o.granted, granted, "\(faults): \(o.decision)")
        }
    }

    /// After a standard transaction with the certificate, the next tap runs FAST: no certificate
    /// then, both sides deriving with the CA's key as the group key.
    func testFastAfterACertificateTransaction() {
        let reader = lock(.loadCert)
        reader.configuration.useFast = true
        let credential = phone()
        let first = reader.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(first.granted && !first.fast, "\(first.decision)")
        let second = reader.runTransaction(over: InMemoryLink(credential), at: Fixture.time)
        XCTAssertTrue(second.granted && second.fast, "\(second.decision) fast=\(second.fast)")
        XCTAssertTrue(commands(second, "LOAD CERT").isEmpty)
    }
}
