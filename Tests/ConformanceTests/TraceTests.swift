import AccessProtocol
import ByteCore
import Codecs
@testable import Conformance
import LockBenchTestSupport
import XCTest

/// `lockbench trace`'s decoder on the protocol's own test vectors (docs/protocol.md §16), and the
/// transcript reader on hostile input.
final class TraceTests: XCTestCase {
    /// The lines of one `### … transaction` section of the vectors.
    func vectorSection(_ title: String) throws -> [String] {
        let doc = try String(contentsOf: Repository.url("docs/protocol.md"), encoding: .utf8)
        let start = try XCTUnwrap(doc.range(of: "### \(title)"))
        let rest = doc[start.upperBound...]
        let end = rest.range(of: "\n### ")?.lowerBound ?? rest.range(of: "<!-- vectors:end -->")!.lowerBound
        return rest[..<end].split(separator: "\n").map(String.init)
    }

    func value(_ lines: [String], _ name: String) throws -> String {
        let line = try XCTUnwrap(lines.first { $0.hasPrefix(name + " = ") }, name)
        return String(line.dropFirst(name.count + 3))
    }

    func inputs() throws -> [String] {
        let doc = try String(contentsOf: Repository.url("docs/protocol.md"), encoding: .utf8)
        return doc.split(separator: "\n").map(String.init)
    }

    /// The vector's APDU lines (`C LABEL hex`), plus the reader key and an ephemeral secret.
    func transcript(_ title: String, secret: String?) throws -> (Transcript, [String]) {
        let lines = try vectorSection(title)
        let all = try inputs()
        var text = "@reader-key \(try value(all, "reader.group_id")) \(try value(all, "reader.public_key"))\n@session 1\n"
        if let secret { text += "@secret 1 ephemeral-private \(try value(lines, secret))\n" }
        text += lines.filter { $0.hasPrefix("C ") || $0.hasPrefix("R ") }.joined(separator: "\n")
        return (try Transcript(parsing: text), lines)
    }

    func testTheStepUpVectorOpensWithTheReaderEphemeralKey() throws {
        let (t, lines) = try transcript("Step-up transaction", secret: "reader_ephemeral.private_key")
        XCTAssertEqual(t.sessions.count, 1)
        XCTAssertEqual(t.sessions[0].entries.count, 12)
        let out = TraceDecoder().render(t)
        let plaintext = try value(lines, "auth1.response_plaintext (device counter 1)")
        // The decoded AUTH1 plaintext names the exact key and signature of the vector.
        XCTAssertTrue(out.contains("5A credential public key: \(plaintext.dropFirst(4).prefix(130))"), out)
        XCTAssertTrue(out.contains("device signature verifies with 5A"))
        XCTAssertTrue(out.contains("decrypted (step-up channel, reader counter 1) DeviceRequest:"))
        XCTAssertTrue(out.contains("response chain complete: 457 bytes"), out)
        XCTAssertTrue(out.contains("decrypted (step-up channel, device counter 1) DeviceResponse:"))
        XCTAssertTrue(out.contains("SW 61C9 201 bytes remaining (GET RESPONSE)"), out)
        // The closing EXCHANGE after a step-up runs on the step-up channel (§10).
        XCTAssertTrue(out.contains("decrypted (step-up channel, reader counter 2):"), out)
        XCTAssertTrue(out.contains("97 reader status: 0101 (unsecured (opened))"))
    }

    func testTheDeviceEphemeralKeyOpensTheSameTranscript() throws {
        let (t, _) = try transcript("Standard transaction", secret: "device_ephemeral.private_key")
        let out = TraceDecoder().render(t)
        XCTAssertTrue(out.contains("keys derived from the recorded device ephemeral key"), out)
        XCTAssertTrue(out.contains("decrypted (expedited channel, device counter 2): 00020000"), out)
    }

    func testAFastVectorOpensWithKpersistentAlone() throws {
        let (t0, lines) = try transcript("FAST transaction", secret: nil)
        let standard = try vectorSection("Standard transaction")
        var keys = TraceKeys()
        keys.persistentKeys = [Transcript.PersistentKey(credentialKey: Hex.decode(try value(try inputs(), "credential.public_key"))!,
                                                        key: Hex.decode(try value(standard, "kpersistent"))!)]
        let out = TraceDecoder(keys: keys).render(t0)
        XCTAssertTrue(out.contains("FAST cryptogram opens with the Kpersistent"), out)
        XCTAssertTrue(out.contains("decrypted (FAST expedited channel, device counter 1): 00020000"), out)
        // With the reader key (the transcript's @reader-key) but no Kpersistent: named, not opened.
        XCTAssertTrue(TraceDecoder().render(t0).contains("9D: not verifiable without a Kpersistent"))
        // Without the reader key nothing can be said of the cryptogram: not "a decoy".
        let noReaderKey = try Transcript(parsing: lines.filter { $0.hasPrefix("C ") || $0.hasPrefix("R ") }.joined(separator: "\n"))
        let bare = TraceDecoder(keys: keys).render(noReaderKey)
        XCTAssertTrue(bare.contains("9D: not verifiable without the reader key"), bare)
        XCTAssertFalse(bare.contains("decoy"), bare)
    }

    func testAHexDumpSplitsIntoTransactionsAtEachSelect() throws {
        let select = "00a4040009a000000909acce550100"
        let text = """
        > \(select)
        < 9000
        > 80800000 03 410100 00   # an AUTH0, spaces allowed
        < 6985
        > \(select)
        < 6a82
        """
        let t = try Transcript(parsing: text)
        XCTAssertEqual(t.sessions.count, 2)
        XCTAssertEqual(t.sessions[0].entries.count, 4)
        let out = TraceDecoder().render(t)
        XCTAssertTrue(out.contains("SW 6985 conditions of use not satisfied"), out)
        XCTAssertTrue(out.contains("SW 6A82 file or application not found"), out)
    }

    func testHostileTranscriptsAreRefusedWithTheLine() {
        XCTAssertEqual(try? Transcript(parsing: "> zz\n"), nil)
        do { _ = try Transcript(parsing: "# c\n> 00a4\n< nothex\n"); XCTFail() } catch {
            XCTAssertEqual(error.line, 3)
        }
        XCTAssertThrowsError(try Transcript(parsing: "@secret x ephemeral-private 00"))
        XCTAssertThrowsError(try Transcript(parsing: "@secret 1 kpersistent 04 00"))
        XCTAssertThrowsError(try Transcript(parsing: "@reader-key 00 00"))
        XCTAssertThrowsError(try Transcript(parsing: "@session"))
        XCTAssertThrowsError(try Transcript(parsing: "> " + String(repeating: "00", count: Transcript.maxAPDUBytes + 1)))
        // A signaling bitmap of the wrong length is named, not indexed past its end.
        XCTAssertEqual(SessionState.value(TLV(0x5E, [0xFF]), .auth1Plaintext), "ff (not 2 bytes)")
        XCTAssertEqual(SessionState.value(TLV(0x5E, []), .cryptogramPlaintext), " (not 2 bytes)")
        // Truncated or odd APDUs decode to words, never a crash.
        let t = try! Transcript(parsing: "> 80\n< 90\n> 80800000ff01\n< 6f\n")
        let out = TraceDecoder().render(t)
        XCTAssertTrue(out.contains("short APDU") || out.contains("not a command APDU"), out)
        XCTAssertTrue(out.contains("not a response APDU"), out)
    }
}

/// A LOAD CERT and an AUTH1 carrying `90` decode to the certificate's fields; a corrupted one says why not.
final class CertificateTraceTests: XCTestCase {
    func testLoadCertAndAUTH1CertificatesAreDecoded() throws {
        let good = OfficialReaderCertificates.chainingCertificate.compressed()
        let bad = OfficialReaderCertificates.incorrectFormat(OfficialReaderCertificates.certificate)
        var lines = ["@session 1"]
        for part in CommandChainer.split(CommandAPDU(cla: 0x80, ins: Instruction.loadCert, data: good, le: 256)) {
            lines += ["> \(part.bytes.hex)", "< 9000"]
        }
        let auth1 = Auth1Command(flags: 0, signature: [UInt8](repeating: 1, count: 64), certificate: bad).apdu
        for part in CommandChainer.split(auth1) { lines += ["> \(part.bytes.hex)", "< 9000"] }
        let out = TraceDecoder().render(try Transcript(parsing: lines.joined(separator: "\n") + "\n"))
        XCTAssertTrue(out.contains("reader certificate: serial 0104513ad4f33e92f21aa45b0001004b35602245, issuer \"aliro-test-very-longnamed-issuer\""), out)
        XCTAssertTrue(out.contains("valid 240101000000Z–400101000000Z, key 043928f322019d4757"), out)
        XCTAssertTrue(out.contains("reader certificate does not decode: certificate.profile"), out)
    }
}
