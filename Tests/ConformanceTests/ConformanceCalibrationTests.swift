import AccessProtocol
import ByteCore
import Codecs
import Conformance
import Crypto
import LockBenchTestSupport
import OfflineUnlock
import XCTest

/// Calibration of `conformance credential`: against devices whose official verdict is known, the
/// checks that mirror official cases fail exactly where the official case would, and nowhere else.
/// The corpus is the table "Calibration" of docs/conformance.md.
final class ConformanceCalibrationTests: XCTestCase {
    let readerKey = P256.Signing.PrivateKey()
    lazy var identity = ReaderSigningIdentity(signingKey: readerKey, groupID: [UInt8](repeating: 0xA1, count: 16), subID: [UInt8](repeating: 0xB1, count: 16))

    let issuer = TestFixtures.key(0x1F)

    /// A phone with a 0x12C-byte mailbox (the official tool's phone has that size), an access and
    /// a revocation document signed by `issuer` (the official step-up cases verify them).
    func phone(profile: PhoneProfile = .lockbench, faults: CredentialFaults = [], versions: [UInt16] = [ProtocolVersion.v1_0]) throws -> CredentialSession {
        let key = P256.Signing.PrivateKey()
        let access = TestFixtures.accessDocument(credentialPublicKey: key.publicBytes, id: Array("cal".utf8), readers: [try ReaderRule(groupID: identity.groupID)],
                                                 from: TestFixtures.monday, until: TestFixtures.monday.addingTimeInterval(3600), issuer: issuer)
        let revocation = TestFixtures.revocationDocument(order: 1, entries: [], issued: TestFixtures.monday,
                                                         expiry: TestFixtures.monday.addingTimeInterval(3600), issuer: issuer)
        var c = CredentialConfiguration(signingKey: key,
                                        trustedReaders: [TrustedReader(groupID: identity.groupID, publicKey: identity.publicKey),
                                                         // Provisioned as the reader-certificate cases' prompt says.
                                                         TrustedReader(groupID: OfficialReaderCertificates.groupID,
                                                                       publicKey: OfficialReaderCertificates.issuerPublicKey, issuerCA: true)]
                                            // Provisioned as NFC_UD_STANDARD_SIXTEEN_GROUPIDENTIFIER_ONE_AC's precondition says.
                                            + OfficialReaderGroups.trustedReaders,
                                        accessDocuments: [access], revocationDocuments: [revocation], versions: versions, faults: faults,
                                        mailbox: try Mailbox([UInt8](repeating: 7, count: 0x12C)))
        profile.apply(to: &c)
        return CredentialSession(configuration: c)
    }

    func run(_ session: CredentialSession) -> ConformanceReport {
        let subject = CredentialUnderTest(open: { (InMemoryLink(session), {}) }, identity: identity)
        var profile = CredentialProfile.discover(subject, issuerKeys: [issuer.publicBytes])
        profile.readerCertificates = true
        profile.sixteenReaderGroups = true
        return ConformanceReport(direction: "credential", transport: "memory", results: CredentialCatalogue.all.map { $0.evaluate(subject, profile) })
    }

    /// Failed checks that mirror official cases, and failed advisories, apart.
    func failures(_ r: ConformanceReport) -> (official: Set<String>, advisory: Set<String>) {
        let failed = r.results.filter { $0.status == .fail }
        return (Set(failed.filter { !$0.advisory }.map(\.id)), Set(failed.filter(\.advisory).map(\.id)))
    }

    func testLockBenchsPhonePassesEveryCheck() throws {
        let r = run(try phone())
        XCTAssertEqual(failures(r).official, [], r.lines().joined(separator: "\n"))
        XCTAssertEqual(failures(r).advisory, [])
        XCTAssertTrue(r.allPassed(strict: true))
        // The official step-up cases ran (the issuer key was given) and passed.
        for id in ["stepup.ad", "stepup.basic", "stepup.ad-rd", "stepup.rd"] {
            XCTAssertEqual(r.results.first { $0.id == id }?.status, .pass, id)
        }
    }

    /// Without the issuer's key the official step-up cases cannot verify signatures: not applicable.
    func testTheStepUpCasesNeedTheIssuerKey() throws {
        let session = try phone()
        let subject = CredentialUnderTest(open: { (InMemoryLink(session), {}) }, identity: identity)
        let profile = CredentialProfile.discover(subject)
        let r = CredentialCatalogue.all.first { $0.id == "stepup.ad" }!.evaluate(subject, profile)
        XCTAssertEqual(r.status, .notApplicable)
        XCTAssertTrue(r.reason.contains("--issuer"), r.reason)
    }

    /// The official phone case checks a document's signature under the configured issuer key
    /// itself: a document naming its issuer by certificate alone (no kid) passes it, and one
    /// another issuer signed does not, certificate or not.
    func testACertifiedDocumentIsCheckedUnderTheIssuerKeyItself() throws {
        let ca = TestFixtures.key(0x2C)
        for (signer, expected) in [(issuer, CheckStatus.pass), (TestFixtures.key(0x2E), .fail)] {
            let key = P256.Signing.PrivateKey()
            let certificate = try IssuerCertificate.issue(subjectPublicKey: signer.publicBytes, caKey: ca,
                                                          notBefore: TestFixtures.monday.addingTimeInterval(-86_400), notAfter: TestFixtures.monday.addingTimeInterval(86_400))
            let access = try AccessDocument.issue(access: try AccessData(id: Array("crt".utf8), readers: [try ReaderRule(groupID: identity.groupID)]),
                                                  credentialPublicKey: key.publicBytes,
                                                  validity: .init(signed: TestFixtures.monday, validFrom: TestFixtures.monday, validUntil: TestFixtures.monday.addingTimeInterval(3600)),
                                                  issuerKey: signer, issuerCertificate: certificate, includeKeyID: false).encoded()
            let c = CredentialConfiguration(signingKey: key, trustedReaders: [TrustedReader(groupID: identity.groupID, publicKey: identity.publicKey)],
                                            accessDocuments: [access], mailbox: try Mailbox([UInt8](repeating: 7, count: 0x12C)))
            let session = CredentialSession(configuration: c)
            let subject = CredentialUnderTest(open: { (InMemoryLink(session), {}) }, identity: identity)
            let profile = CredentialProfile.discover(subject, issuerKeys: [issuer.publicBytes])
            let r = CredentialCatalogue.all.first { $0.id == "stepup.ad" }!.evaluate(subject, profile)
            XCTAssertEqual(r.status, expected, r.reason)
        }
    }

    /// Without `--reader-certificates` (the phone was not provisioned as the prompt says) the
    /// certificate cases are not applicable, and say what to provision.
    func testTheCertificateCasesNeedTheProvisioning() throws {
        let session = try phone()
        let subject = CredentialUnderTest(open: { (InMemoryLink(session), {}) }, identity: identity)
        let profile = CredentialProfile.discover(subject)
        for check in CredentialCatalogue.all where check.id.hasPrefix("cert.") {
            let r = check.evaluate(subject, profile)
            XCTAssertEqual(r.status, .notApplicable, check.id)
            XCTAssertTrue(r.reason.lowercased().contains("00113344667799aa00113344667799aa") && r.reason.contains("--reader-certificates"), r.reason)
        }
    }

    /// A phone trusting another key for the official group refuses every certificate: the positive
    /// cases fail, the negative ones still see their refusal.
    func testAPhoneTrustingAnotherKeyForTheGroupFailsThePositiveCertificateCases() throws {
        var c = try phone().configuration
        c.trustedReaders[1].publicKey = TestFixtures.key(0x3A).publicBytes
        let r = run(CredentialSession(configuration: c))
        XCTAssertEqual(failures(r).official, ["cert.auth1", "cert.auth1-chained", "cert.load-cert", "cert.load-cert-chained"],
                       r.lines().joined(separator: "\n"))
    }

    /// NFC_UD_STANDARD_SIXTEEN_GROUPIDENTIFIER_ONE_AC: the official reader keys are the public
    /// halves the file lists; a phone missing one of the fourteen groups the case runs fails it,
    /// naming the group; without `--sixteen-reader-groups` it is not applicable, saying what to provision.
    func testTheSixteenGroupsCaseNeedsEveryGroupTheCaseRuns() throws {
        for i in 0..<16 {
            XCTAssertEqual(OfficialReaderGroups.identity(i).publicKey, OfficialReaderGroups.publicKeys[i], "group \(i)")
        }
        XCTAssertEqual(OfficialReaderGroups.groupIDs[2].hex.uppercased(), "00113344667799AA00113344667799AD")
        var c = try phone().configuration
        c.trustedReaders.removeAll { $0.groupID == OfficialReaderGroups.groupIDs[9] }
        let r = run(CredentialSession(configuration: c))
        XCTAssertEqual(failures(r).official, ["standard.sixteen-groups"], r.lines().joined(separator: "\n"))
        let reason = r.results.first { $0.id == "standard.sixteen-groups" }!.reason
        XCTAssertTrue(reason.contains("00113344667799AA00113344667799BE"), reason)
        let session = try phone()
        let subject = CredentialUnderTest(open: { (InMemoryLink(session), {}) }, identity: identity)
        let unprovisioned = CredentialCatalogue.all.first { $0.id == "standard.sixteen-groups" }!.evaluate(subject, CredentialProfile.discover(subject))
        XCTAssertEqual(unprovisioned.status, .notApplicable)
        XCTAssertTrue(unprovisioned.reason.contains("--sixteen-reader-groups"), unprovisioned.reason)
    }

    /// A phone whose documents another issuer signed fails the official step-up cases.
    func testADocumentOfAnotherIssuerFailsTheStepUpCases() throws {
        let session = try phone()
        let subject = CredentialUnderTest(open: { (InMemoryLink(session), {}) }, identity: identity)
        let profile = CredentialProfile.discover(subject, issuerKeys: [TestFixtures.key(0x2E).publicBytes])
        let r = CredentialCatalogue.all.first { $0.id == "stepup.ad" }!.evaluate(subject, profile)
        XCTAssertEqual(r.status, .fail)
        XCTAssertTrue(r.reason.contains("Document signature is invalid"), r.reason)
    }

    /// The public reference device as observed: every check mirroring an official case passes;
    /// LockBench's own 6A88 rule fails as an advisory and leaves the exit status alone.
    func testTheReferenceProfilePassesEveryOfficialCheck() throws {
        let r = run(try phone(profile: .reference))
        XCTAssertEqual(failures(r).official, [], r.lines().joined(separator: "\n"))
        XCTAssertEqual(failures(r).advisory, ["auth0.unsupported-version.6a88"])
        XCTAssertTrue(r.allPassed)
        XCTAssertFalse(r.allPassed(strict: true))
        let line = r.lines().first { $0.contains("auth0.unsupported-version.6a88") }!
        XCTAssertTrue(line.hasPrefix("warn"), line)
        XCTAssertTrue(r.summary.contains("1 advisory failed"), r.summary)
    }

    /// One device per knob: exactly the checks mirroring the official cases the fault breaks.
    func testEachKnobFailsExactlyTheOfficialCasesItBreaks() throws {
        let closingExactly: Set<String> = ["auth0.extra-tag", "auth1.extra-tag", "auth1.standard", "fast.cached-key", "exchange.status",
                                           "mailbox.read", "auth0.response-chaining", "exchange.extra-tag", "mailbox.write-request",
                                           "stepup.ad", "stepup.basic", "stepup.ad-rd", "stepup.rd",
                                           "cert.auth1", "cert.auth1-chained", "cert.load-cert", "cert.load-cert-chained",
                                           "mailbox.extended-length", "standard.sixteen-groups"]
        let expected: [(CredentialFaults, Set<String>)] = [
            (.legacyExchangeStatus, closingExactly),
            (.ignoreP1P2, ["auth0.wrong-p1p2", "auth1.wrong-p1p2"]),
            (.ignoreLe, ["auth0.response-chaining"]),
            (.commitAtomicWrites, ["mailbox.write-request"]),
            (.skipReaderCheck, ["auth1.bad-reader-signature"]),
            (.wrongSignature, ["auth1.standard"]),
            (.replayEphemeralKey, ["fast.consecutive-decoys"]),
            (.skipCertificateCheck, ["cert.neg.load-cert-signature", "cert.neg.load-cert-format"]),
            (.shortAPDUsOnly, ["mailbox.extended-length"]),
            // The official reader skips a tag it does not list (tlv.py verifySequence), in AUTH0 and AUTH1 answers alike.
            (.auth0ExtraTag, []),
            (.auth1ExtraTag, []),
            (.auth1WrongSignatureTag, ["auth1.standard"]),
            (.fciOtherAID, ["select.fci"]),
            (.corruptEnvelope, ["stepup.ad", "stepup.basic", "stepup.ad-rd", "stepup.rd"]),
            // Only the case that requires both documents misses the access document.
            (.emptyDeviceResponse, ["stepup.ad-rd"]),
            (.acceptUnlistedVersion, ["auth0.unsupported-version"]),
            // BLE-only knobs: over NFC and the socket the phone behaves.
            (.refuseSelectOnBLE, []),
            (.noRKERequest, []),
        ]
        for (fault, checks) in expected {
            XCTAssertEqual(failures(run(try phone(faults: fault))).official, checks, "fault \(fault)")
        }
        // Every knob has a row, here or in the test below.
        let calibrated = expected.map(\.0) + Self.transactionBreaking.map(\.0)
        for (name, fault) in CredentialFaults.names {
            XCTAssertTrue(calibrated.contains(fault), "--fault \(name) has no calibration row")
        }
    }

    /// Knobs that break every transaction at AUTH0 or AUTH1 (and strip-versions, which needs two
    /// versions to strip one). The official verdict of every case that needs a working AUTH1 is a
    /// failure. LockBench fails `auth1.standard` (or `auth0.standard`) and the cases without a
    /// discovery gate; the gated ones are not applicable, naming the failed discovery — never a pass.
    static let transactionBreaking: [(CredentialFaults, String)] = [
        (.corruptCiphertext, "auth1.standard"), (.stripVersions, "auth1.standard"),
        (.malformedAuth0, "auth0.standard"), (.auth0WrongTag, "auth0.standard"),
    ]

    func testAKnobBreakingEveryTransactionPassesNoCaseThatNeedsIt() throws {
        // Cases that end before a usable AUTH1 answer: they pass on such a phone, as officially.
        let beforeAuth1: Set<String> = ["select.fci", "auth0.chaining-not-completed", "auth0.unsupported-version", "auth0.wrong-p1p2",
                                        "auth0.standard", "auth1.bad-reader-signature", "auth1.chaining-not-completed", "auth1.wrong-p1p2",
                                        "auth1.wrong-signature-length", "fast.consecutive-decoys"]
        for (fault, named) in Self.transactionBreaking {
            let r = run(try phone(faults: fault, versions: fault == .stripVersions ? [ProtocolVersion.v1_0, 0x0101] : [ProtocolVersion.v1_0]))
            XCTAssertTrue(failures(r).official.contains(named), "fault \(fault): \(named) must fail")
            for result in r.results where !result.advisory {
                switch result.status {
                case .pass:
                    XCTAssertTrue(beforeAuth1.contains(result.id), "fault \(fault): \(result.id) passed")
                case .notApplicable:
                    XCTAssertTrue(result.reason.contains("did not complete AUTH1"), "fault \(fault): \(result.id): \(result.reason)")
                default:
                    break
                }
            }
        }
    }

    /// A phone listing only a version LockBench does not speak fails `select.fci` and nothing else:
    /// every other check is not applicable, with the reason.
    func testNoCommonVersionFailsOnlySelectFCI() throws {
        let r = run(try phone(versions: [0x0A00]))
        XCTAssertEqual(failures(r).official, ["select.fci"])
        XCTAssertEqual(failures(r).advisory, [])
        let others = r.results.filter { $0.id != "select.fci" }
        XCTAssertTrue(others.allSatisfy { $0.status == .notApplicable && $0.reason.contains("no version LockBench speaks") })
    }

    /// Every check that names an official case names one of the official test plan's cases.
    func testEveryOfficialNameIsInTheOfficialPlan() {
        for check in CredentialCatalogue.all + [] {
            guard let name = check.officialCase else {
                XCTAssertTrue(check.advisory, "\(check.id) names no official case: it must be an advisory")
                continue
            }
            XCTAssertNotNil(OfficialTestPlan.case(named: name), "\(check.id): \(name) is not in OfficialTestPlan")
        }
    }
}
