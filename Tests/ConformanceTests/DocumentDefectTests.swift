import Codecs
import Conformance
import Crypto
import LockBenchTestSupport
import OfflineUnlock
import XCTest

/// Each document the official step-up reader cases hand a lock carries exactly its defect: the
/// engine grants the valid one and refuses each other one for the reason its case names.
final class DocumentDefectTests: XCTestCase {
    func testTheEngineRefusesEachDefectForItsReason() throws {
        let issuer = TestFixtures.key(0x31), credential = TestFixtures.key(0x32), issuerCA = TestFixtures.key(0x33)
        let now = TestFixtures.monday
        var policy = LockPolicy()
        policy.maxDocumentLifetime = 14 * 86_400  // the official cases issue 14-day documents
        let core = DecisionCore(reader: ReaderIdentity(groupID: TestFixtures.groupID, subID: TestFixtures.subID), policy: policy,
                                trust: try TrustStore(issuerPublicKeys: [issuer.publicBytes], issuerCAPublicKeys: [issuerCA.publicBytes]))
        let expected: [DocumentDefect: DenyReason?] = [
            .none: nil, .documentDocType: .malformedInput, .deviceKeyMismatch: .documentKeyMismatch, .notYetValid: .notYetValid,
            .expired: .expired, .badSignature: .untrustedIssuer, .msoDocType: .malformedInput, .noKeyID: .untrustedIssuer,
            .accessDataVersion: .unsupportedVersion, .digestMismatch: .digestMismatch, .criticalAccessExtension: .unsupportedVersion,
            .unknownReaderRule: .wrongReader, .issuerCertificate: nil, .issuerCertificateAndKeyID: nil,
            .issuerCertificateExpired: .untrustedIssuer, .issuerCertificateWrongCA: .untrustedIssuer,
            .issuerCertificateTimeMismatch: .untrustedIssuer, .issuerCertificateEmptyKey: .untrustedIssuer,
            .revocationDataVersion: .unsupportedVersion, .scheduleAllowInside: nil, .scheduleAllowOutside: .outsideSchedule,
            .scheduleDenyInside: .outsideSchedule, .noRuleForAction: .wrongReader,
            // A lock whose time is verified grants them (their refusal needs one without: below).
            .timeVerificationRequired: nil, .scheduleTimeVerificationRequired: nil,
        ]
        // The words of each new refusal name exactly its defect.
        let details: [DocumentDefect: String] = [
            .accessDataVersion: "access data version 42", .digestMismatch: "digest of element \"access\" (digestID 0) differs from the MSO",
            .criticalAccessExtension: "access extension 1 (version 1, critical) is critical and not understood",
            .unknownReaderRule: "names reader rule ids 0xF118; this reader defines no reader rules",
            .issuerCertificateExpired: "outside the issuer certificate's validity 2020-01-01T00:00:00Z–2020-01-01T01:00:00Z",
            .issuerCertificateWrongCA: "is not signed by an issuer CA the lock trusts",
            .issuerCertificateTimeMismatch: "the MSO was signed at 2026-02-16T09:00:00Z, outside the issuer certificate's validity 2026-03-02T09:00:00Z",
            .issuerCertificateEmptyKey: "subjectPublicKey holds 0 byte(s)",
            .revocationDataVersion: "revocation document: revocation data version 42",
            .scheduleAllowOutside: "outside its allow schedules 0", .scheduleDenyInside: "deny schedule 0",
            .noRuleForAction: "grants its action, an unsecure (capability bits 1–4)",
        ]
        XCTAssertEqual(Set(expected.keys), Set(DocumentDefect.allCases))
        for defect in DocumentDefect.allCases {
            let document = try defect.mint(credentialKey: credential.publicBytes, readerGroup: TestFixtures.groupID, issuer: issuer,
                                           issuerCA: issuerCA, now: now)
            var state = EngineState(clock: TrustedClock(trustedAt: now))
            let decision = core.decide(Presentation(credentialPublicKey: credential.publicBytes, transactionID: [UInt8](repeating: 1, count: 16),
                                                    interface: .nfc, protocolVersion: 0x0100, fast: false,
                                                    accessDocuments: defect.isRevocation ? [] : [document],
                                                    revocationDocuments: defect.isRevocation ? [document] : []),
                                       state: &state, at: now)
            XCTAssertEqual(decision.denyReason, expected[defect]!, "\(defect): \(decision)")
            if let words = details[defect], case .deny(_, let detail) = decision {
                XCTAssertTrue(detail.contains(words), "\(defect): \(detail)")
            }
        }
    }

    /// The lock states the official cases assume, set up as LockBench's lock is: after a power
    /// loss the key-7 documents are refused (`time_not_verified`) and the same document without
    /// key 7 restores the clock; a lock set without schedule support refuses the schedule case's
    /// document (`schedules_not_supported`) and grants a document without schedules.
    func testTheLockStatesTheConfigurationCasesAssume() throws {
        let issuer = TestFixtures.key(0x31), credential = TestFixtures.key(0x32)
        let now = TestFixtures.monday
        func decide(_ defect: DocumentDefect, policy: LockPolicy, clock: inout TrustedClock) throws -> Decision {
            let core = DecisionCore(reader: ReaderIdentity(groupID: TestFixtures.groupID, subID: TestFixtures.subID), policy: policy,
                                    trust: try TrustStore(issuerPublicKeys: [issuer.publicBytes]))
            var state = EngineState(clock: clock)
            let document = try defect.mint(credentialKey: credential.publicBytes, readerGroup: TestFixtures.groupID, issuer: issuer, now: now)
            XCTAssertEqual(try IssuedDocument(parsing: document).timeVerificationRequired, defect.requiresTimeVerification, "\(defect)")
            let decision = core.decide(Presentation(credentialPublicKey: credential.publicBytes, transactionID: Primitives.randomBytes(16),
                                                    interface: .nfc, protocolVersion: 0x0100, fast: false, accessDocuments: [document]),
                                       state: &state, at: now)
            clock = state.clock
            return decision
        }
        var policy = LockPolicy()
        policy.maxDocumentLifetime = 14 * 86_400
        for defect in [DocumentDefect.timeVerificationRequired, .scheduleTimeVerificationRequired] {
            var clock = TrustedClock(highWaterMark: now.addingTimeInterval(-3600), trusted: false)
            XCTAssertEqual(try decide(defect, policy: policy, clock: &clock).denyReason, .timeNotVerified, "\(defect)")
            XCTAssertFalse(clock.trusted, "\(defect) restored the clock")
        }
        var clock = TrustedClock(highWaterMark: now.addingTimeInterval(-3600), trusted: false)
        XCTAssertTrue(try decide(.none, policy: policy, clock: &clock).isGrant)
        XCTAssertTrue(clock.trusted, "a document without key 7 is evidence of time, as before")

        var noSchedules = policy
        noSchedules.supportsSchedules = false
        var trusted = TrustedClock(trustedAt: now)
        XCTAssertEqual(try decide(.scheduleAllowInside, policy: noSchedules, clock: &trusted).denyReason, .schedulesNotSupported)
        XCTAssertTrue(try decide(.none, policy: noSchedules, clock: &trusted).isGrant)
        XCTAssertTrue(try decide(.scheduleAllowInside, policy: policy, clock: &trusted).isGrant)
    }

    /// The digest defect keeps a valid issuer signature: only the digest can refuse it.
    func testTheDigestDefectIsSignedByTheIssuer() throws {
        let issuer = TestFixtures.key(0x31), credential = TestFixtures.key(0x32)
        let bytes = try DocumentDefect.digestMismatch.mint(credentialKey: credential.publicBytes, readerGroup: TestFixtures.groupID,
                                                            issuer: issuer, now: TestFixtures.monday)
        let doc = try IssuedDocument(parsing: bytes)
        XCTAssertNoThrow(try doc.issuerAuth.verify(publicKey: issuer.publicBytes))
        XCTAssertEqual(doc.valueDigests[0], (0..<32).map { UInt8($0) })
    }

    /// The certificate documents carry what their cases do: the certificate alone (no kid) but
    /// for …_KEY_ID, the case's own key or bytes where the case fixes them, and need the CA's key
    /// exactly when the CA signs.
    func testTheCertificateDefectsCarryTheirCasesCertificate() throws {
        let issuer = TestFixtures.key(0x31), credential = TestFixtures.key(0x32), issuerCA = TestFixtures.key(0x33)
        for defect in DocumentDefect.allCases where defect.rawValue.hasPrefix("issuerCertificate") {
            let bytes = try defect.mint(credentialKey: credential.publicBytes, readerGroup: TestFixtures.groupID, issuer: issuer, issuerCA: issuerCA, now: TestFixtures.monday)
            let doc = try IssuedDocument(parsing: bytes)
            let chain = try doc.issuerAuth.x5chain()
            XCTAssertEqual(chain.count, 1, "\(defect)")
            XCTAssertEqual(doc.issuerAuth.kid != nil, defect == .issuerCertificateAndKeyID, "\(defect)")
            XCTAssertNoThrow(try doc.issuerAuth.verify(publicKey: issuer.publicBytes), "\(defect): signed by the issuer")
            if defect == .issuerCertificateEmptyKey {
                XCTAssertEqual(chain[0], DocumentDefect.emptyKeyCertificate)
            } else {
                let certificate = try IssuerCertificate(parsing: chain[0])
                XCTAssertEqual(certificate.publicKey, issuer.publicBytes)
                XCTAssertEqual(certificate.isSigned(by: issuerCA.publicBytes), defect != .issuerCertificateWrongCA, "\(defect)")
            }
            if defect.needsIssuerCA {
                XCTAssertThrowsError(try defect.mint(credentialKey: credential.publicBytes, readerGroup: TestFixtures.groupID, issuer: issuer, now: TestFixtures.monday))
            }
        }
    }
}
