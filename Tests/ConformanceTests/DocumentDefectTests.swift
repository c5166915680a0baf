import Conformance
import Crypto
import LockBenchTestSupport
import OfflineUnlock
import XCTest

/// Each document the official step-up reader cases hand a lock carries exactly its defect: the
/// engine grants the valid one and refuses each other one for the reason its case names.
final class DocumentDefectTests: XCTestCase {
    func testTheEngineRefusesEachDefectForItsReason() throws {
        let issuer = TestFixtures.key(0x31), credential = TestFixtures.key(0x32)
        let now = TestFixtures.monday
        var policy = LockPolicy()
        policy.maxDocumentLifetime = 14 * 86_400  // the official cases issue 14-day documents
        let core = DecisionCore(reader: ReaderIdentity(groupID: TestFixtures.groupID, subID: TestFixtures.subID), policy: policy,
                                trust: try TrustStore(issuerPublicKeys: [issuer.publicBytes]))
        let expected: [DocumentDefect: DenyReason?] = [
            .none: nil, .documentDocType: .malformedInput, .deviceKeyMismatch: .documentKeyMismatch, .notYetValid: .notYetValid,
            .expired: .expired, .badSignature: .untrustedIssuer, .msoDocType: .malformedInput, .noKeyID: .untrustedIssuer,
            .accessDataVersion: .unsupportedVersion, .digestMismatch: .digestMismatch, .criticalAccessExtension: .unsupportedVersion,
            .unknownReaderRule: .wrongReader,
        ]
        // The words of each new refusal name exactly its defect.
        let details: [DocumentDefect: String] = [
            .accessDataVersion: "access data version 42", .digestMismatch: "digest of element \"access\" (digestID 0) differs from the MSO",
            .criticalAccessExtension: "access extension 1 (version 1, critical) is critical and not understood",
            .unknownReaderRule: "names reader rule ids 0xF118; this reader defines no reader rules",
        ]
        XCTAssertEqual(Set(expected.keys), Set(DocumentDefect.allCases))
        for defect in DocumentDefect.allCases {
            let document = try defect.mint(credentialKey: credential.publicBytes, readerGroup: TestFixtures.groupID, issuer: issuer, now: now)
            var state = EngineState(clock: TrustedClock(trustedAt: now))
            let decision = core.decide(Presentation(credentialPublicKey: credential.publicBytes, transactionID: [UInt8](repeating: 1, count: 16),
                                                    interface: .nfc, protocolVersion: 0x0100, fast: false, accessDocuments: [document]),
                                       state: &state, at: now)
            XCTAssertEqual(decision.denyReason, expected[defect]!, "\(defect): \(decision)")
            if let words = details[defect], case .deny(_, let detail) = decision {
                XCTAssertTrue(detail.contains(words), "\(defect): \(detail)")
            }
        }
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
}
