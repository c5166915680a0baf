import AccessProtocol
import ByteCore
import Codecs
import Conformance
import Crypto
import LockBenchTestSupport
import XCTest

/// The phone-direction catalogue against LockBench's own credential, in process over the APDU
/// seam: every check passes against the real credential, and each injected fault is caught by the
/// check that names it and by no other.
final class CredentialCatalogueTests: XCTestCase {
    let readerKey = P256.Signing.PrivateKey()
    lazy var identity = ReaderSigningIdentity(signingKey: readerKey, groupID: [UInt8](repeating: 0xA1, count: 16), subID: [UInt8](repeating: 0xB1, count: 16))

    func phone(faults: CredentialFaults = [], tweak: (inout CredentialConfiguration) -> Void = { _ in }) -> CredentialSession {
        var c = CredentialConfiguration(signingKey: P256.Signing.PrivateKey(),
                                        trustedReaders: [TrustedReader(groupID: identity.groupID, publicKey: identity.publicKey)],
                                        accessDocuments: [Self.fakeDocument], faults: faults)
        tweak(&c)
        return CredentialSession(configuration: c)
    }

    /// A Document CBOR with docType "aliro-a", long enough (600 bytes) that ENVELOPE answers chain.
    static let fakeDocument: [UInt8] = CBOR.map([
        "1": .map(["1": .map(["aliro-a": .array([.bytes([UInt8](repeating: 0x42, count: 600))])])]),
        "5": .text(DocType.access),
    ]).encoded()

    func run(_ session: CredentialSession, recorder: TranscriptRecorder? = nil) -> [String: CheckResult] {
        let subject = CredentialUnderTest(open: { (InMemoryLink(session), {}) }, identity: identity, recorder: recorder)
        let profile = CredentialProfile.discover(subject)
        return Dictionary(uniqueKeysWithValues: CredentialCatalogue.all.map { ($0.id, $0.evaluate(subject, profile)) })
    }

    func failures(_ r: [String: CheckResult]) -> Set<String> { Set(r.filter { $0.value.status == .fail }.keys) }

    func testEveryCheckPassesAgainstLockBenchsCredential() throws {
        // The official mailbox cases read and write up to offset 0x4C (the tool's phone has 0x12C bytes).
        let mailbox = try Mailbox([UInt8](repeating: 7, count: 0x12C))
        let results = run(phone(tweak: { $0.mailbox = mailbox }))
        XCTAssertEqual(failures(results), [], results.values.filter { $0.status == .fail }.map { "\($0.id): \($0.reason)" }.joined(separator: "\n"))
        XCTAssertEqual(results["stepup.response-chaining"]?.status, .pass, results["stepup.response-chaining"]?.reason ?? "")
        XCTAssertEqual(results["mailbox.write"]?.status, .pass)
        XCTAssertEqual(results["exchange.extended-length"]?.status, .notApplicable)
    }

    func testStepUpSelectRequiredIsCheckedBothWays() {
        let results = run(phone(tweak: { $0.stepUpSelect = .required }))
        XCTAssertEqual(failures(results), [])
        XCTAssertTrue(results["stepup.without-select"]!.reason.contains("bit 2 set"), results["stepup.without-select"]!.reason)
    }

    func testEachFaultFailsOnlyItsCheck() {
        let cases: [(CredentialFaults, String)] = [
            (.skipReaderCheck, "auth1.bad-reader-signature"),
            (.wrongSignature, "auth1.standard"),
        ]
        for (fault, check) in cases {
            XCTAssertEqual(failures(run(phone(faults: fault))), [check], "fault \(fault)")
        }
        // A replayed ephemeral key fails the official case that compares two answers, and the advisory.
        XCTAssertEqual(failures(run(phone(faults: .replayEphemeralKey))), ["auth0.fresh-ephemeral", "fast.consecutive-decoys"])
    }

    func testAFailureNamesTheExpectedAndActualBytes() {
        let r = run(phone(faults: .skipReaderCheck))["auth1.bad-reader-signature"]!
        XCTAssertEqual(r.expected, "6982")
        XCTAssertEqual(r.actual, "9000")
        XCTAssertEqual(r.firstDifference, 0)
        XCTAssertEqual(r.officialCase, "NFC_UD_NEG_AUTH1_WRONG_READER_SIGNATURE")
        let line = ConformanceReport(direction: "credential", transport: "memory", results: [r]).lines()[0]
        XCTAssertTrue(line.hasPrefix("FAIL  auth1.bad-reader-signature  [NFC_UD_NEG_AUTH1_WRONG_READER_SIGNATURE §6]"), line)
        XCTAssertTrue(line.contains("first difference at byte 0: expected 6982 got 9000"), line)
    }

    func testAnUnreachablePhoneFailsEveryCheckWithTheReason() {
        let subject = CredentialUnderTest(open: { throw ProtocolError(.transport, "connection refused") }, identity: identity)
        let profile = CredentialProfile.discover(subject)
        XCTAssertTrue(profile.problem?.contains("could not reach the phone") ?? false)
        let r = CredentialCatalogue.all[0].evaluate(subject, profile)
        XCTAssertEqual(r.status, .fail)
        XCTAssertTrue(r.reason.contains("connection refused"), r.reason)
    }

    func testJUnitHasOneTestcasePerCheckAndEscapes() {
        let results = [
            CheckResult(id: "a", officialCase: "x_1", section: "§1", title: "", verdict: .pass("ok"), seconds: 0.01),
            CheckResult(id: "b", officialCase: nil, section: "§2", title: "", verdict: .fail("bad <tag> & \"quote\"", expected: [1], actual: [2]), seconds: 0),
            CheckResult(id: "c", officialCase: nil, section: "§3", title: "", verdict: .notApplicable("no mailbox"), seconds: 0),
        ]
        let x = ConformanceReport(direction: "reader", transport: "t", results: results).junit()
        XCTAssertTrue(x.contains("tests=\"3\" failures=\"1\" skipped=\"1\""), x)
        XCTAssertTrue(x.contains("<testcase classname=\"conformance.reader\" name=\"a (x_1)\""))
        XCTAssertTrue(x.contains("bad &lt;tag&gt; &amp; &quot;quote&quot;"), x)
        XCTAssertTrue(x.contains("<skipped message=\"no mailbox\"/>"))
        XCTAssertFalse(ConformanceReport(direction: "reader", transport: "t", results: results).allPassed)
    }

    func testTheTranscriptOfARunDecodesWithItsSecrets() throws {
        let recorder = TranscriptRecorder(recordSecrets: true)
        _ = run(phone(), recorder: recorder)
        let t = recorder.snapshot
        let text = t.encoded { s in TraceDecoder().decode(s, in: t) }
        let back = try Transcript(parsing: text)
        XCTAssertEqual(back.sessions.count, t.sessions.count)
        XCTAssertEqual(back.sessions.map(\.entries), t.sessions.map(\.entries))
        XCTAssertEqual(back.readerKeys, t.readerKeys)
        let rendered = TraceDecoder().render(back)
        XCTAssertTrue(rendered.contains("device signature verifies with 5A"))
        XCTAssertTrue(rendered.contains("FAST cryptogram opens with the Kpersistent"))
        // Without --transcript-secrets nothing secret is written and nothing opens.
        let quiet = TranscriptRecorder(recordSecrets: false)
        _ = run(phone(), recorder: quiet)
        XCTAssertTrue(quiet.snapshot.sessions.allSatisfy { $0.secrets.isEmpty && $0.persistentKeys.isEmpty })
        XCTAssertFalse(TraceDecoder().render(quiet.snapshot).contains("decrypted"))
    }
}
