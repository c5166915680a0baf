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
        XCTAssertEqual(results["mailbox.extended-length"]?.status, .pass, results["mailbox.extended-length"]?.reason ?? "")
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

    /// NFC_UD_EXCHANGE_WITH_EXTENDED_LENGTH byte for byte: the read of 0x113 bytes answers 297
    /// bytes (2 + 275 + 4 plaintext, 16 tag): 256 of them with 61 29, then the extended GET RESPONSE
    /// `00 C0 00 00 00 01 13` gets the last 41 with 9000.
    func testTheExtendedLengthReadIsFollowedWithAnExtendedGetResponse() throws {
        let mailbox = try Mailbox([UInt8](repeating: 7, count: 0x12C))
        let recorder = TranscriptRecorder(recordSecrets: false)
        let r = run(phone(tweak: { $0.mailbox = mailbox }), recorder: recorder)["mailbox.extended-length"]!
        XCTAssertEqual(r.status, .pass, r.reason)
        XCTAssertEqual(r.officialCase, "NFC_UD_EXCHANGE_WITH_EXTENDED_LENGTH")
        let session = try XCTUnwrap(recorder.snapshot.sessions.first { $0.attributes["check"] == "mailbox.extended-length" })
        let entries = session.entries
        let i = try XCTUnwrap(entries.firstIndex { $0.direction == .command && $0.bytes == [0x00, 0xC0, 0x00, 0x00, 0x00, 0x01, 0x13] })
        XCTAssertEqual(entries[i - 1].bytes.count, 258)
        XCTAssertEqual(Array(entries[i - 1].bytes.suffix(2)), [0x61, 0x29])
        XCTAssertEqual(entries[i + 1].bytes.count, 43)
        XCTAssertEqual(Array(entries[i + 1].bytes.suffix(2)), [0x90, 0x00])
        // The EXCHANGE itself stays short: 80 C9 00 00, Lc 1 byte, Le 00.
        let exchange = entries[i - 2].bytes
        XCTAssertEqual(Array(exchange.prefix(5)), [0x80, 0xC9, 0x00, 0x00, UInt8(exchange.count - 6)])
        XCTAssertEqual(exchange.last, 0x00)

        // A phone that refuses extended lengths (6700) fails it, and names the status.
        let short = run(phone(faults: .shortAPDUsOnly, tweak: { $0.mailbox = mailbox }))["mailbox.extended-length"]!
        XCTAssertEqual(short.status, .fail)
        XCTAssertEqual(short.actual, "6700", short.reason)
        // A mailbox shorter than 0x113 bytes answers the read 00 02 6A 80: the case fails.
        let small = run(phone(tweak: { $0.mailbox = try? Mailbox([UInt8](repeating: 7, count: 0x100)) }))["mailbox.extended-length"]!
        XCTAssertEqual(small.status, .fail)
        XCTAssertTrue(small.reason.contains("error status at end of payload"), small.reason)
        // No mailbox (5E bit 4 clear): not applicable, saying why.
        let none = run(phone())["mailbox.extended-length"]!
        XCTAssertEqual(none.status, .notApplicable)
        XCTAssertTrue(none.reason.contains("0x113"), none.reason)
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
