import ByteCore
import Codecs
import Crypto
import Foundation
@testable import OfflineUnlock
import XCTest

final class AccessDocumentTests: XCTestCase {
    let f = Fixture()

    func testIssueEncodeDecodeVerify() throws {
        let schedule = try WeeklySchedule(parsing: "mon-fri 08:00-18:00")
        let rules = [try ReaderRule(groupID: f.reader.groupID), try ReaderRule(groupID: Array(repeating: 7, count: 16), subID: Array(repeating: 8, count: 16))]
        let bytes = f.accessDocument(id: Array("door-42".utf8), readers: rules, schedules: [schedule])
        let doc = try AccessDocument(parsing: bytes)
        XCTAssertEqual(doc.credentialPublicKey, f.credentialKey)
        XCTAssertEqual(doc.access.readers, rules)
        XCTAssertEqual(doc.access.schedules, [schedule])
        XCTAssertEqual(doc.id, Array("door-42".utf8))
        XCTAssertEqual(doc.validity.validFrom, Fixture.t0.addingTimeInterval(-3600))
        XCTAssertEqual(try doc.document.verify(trust: f.trust()), f.issuerPoint)
        XCTAssertEqual(doc.document.issuerKeyID, CoseSign1.keyIdentifier(issuerPublicKey: f.issuerPoint))
        // Deterministic: re-encoding the parsed document gives the same bytes.
        XCTAssertEqual(doc.encoded(), bytes)
        XCTAssertNoThrow(try CBOR(parsing: bytes, options: .strict))
    }

    func testWireShapeFollowsAliroFacts() throws {
        let root = try CBOR(parsing: f.accessDocument())
        XCTAssertEqual(root["5"], "aliro-a")
        let items = root["1"]?["1"]?["aliro-a"]?.arrayValue
        XCTAssertEqual(items?.count, 1)
        XCTAssertEqual(items?.first?.tagValue?.tag, 24)
        let item = try items![0].embeddedItem()
        XCTAssertEqual(item[3], "access")
        XCTAssertEqual(item[2]?.bytesValue?.count, 16)
        let auth = try CoseSign1(cbor: root["1"]!["2"]!)
        XCTAssertEqual(auth.protectedBytes.hex, "a10126")
        let mso = try CBOR(parsing: auth.payload).embeddedItem()
        XCTAssertEqual(mso["1"], "1.0")
        XCTAssertEqual(mso["2"], "SHA-256")
        XCTAssertEqual(mso["5"], "aliro-a")
        XCTAssertEqual(mso["6"]?["1"]?.tagValue?.tag, 0)
        XCTAssertEqual(try CoseKey(cbor: mso["4"]!["1"]!).publicKey, f.credentialKey)
        XCTAssertEqual(mso["3"]?["aliro-a"]?[0]?.bytesValue, Primitives.sha256(items![0].encoded()))
    }

    func testVerificationFailures() throws {
        // Unknown issuer.
        let foreign = f.accessDocument(by: f.otherIssuer)
        XCTAssertThrowsDocument(.untrustedIssuer, try AccessDocument(parsing: foreign).document.verify(trust: f.trust()))
        // Bad signature with the trusted kid.
        var doc = try AccessDocument(parsing: f.accessDocument())
        doc.document.issuerAuth.signature[5] ^= 1
        XCTAssertThrowsDocument(.badIssuerSignature, try doc.document.verify(trust: f.trust()))
        // An item changed after signing.
        var tampered = try AccessDocument(parsing: f.accessDocument())
        let other = try AccessDocument(parsing: f.accessDocument(id: [9]))
        tampered.document.items = other.document.items
        XCTAssertThrowsDocument(.digestMismatch, try tampered.document.verify(trust: f.trust()))
        XCTAssertThrowsDocument(.digestMismatch, try AccessDocument(parsing: tampered.encoded()).document.verify(trust: f.trust()))
    }

    func testMalformedDocuments() {
        XCTAssertThrowsDocument(.malformed, try AccessDocument(parsing: [0xA0]))
        XCTAssertThrowsDocument(.malformed, try AccessDocument(parsing: [0xFF]))
        XCTAssertThrowsDocument(.malformed, try AccessDocument(parsing: CBOR.map(["5": "aliro-a"]).encoded()))
        XCTAssertThrowsDocument(.wrongDocType, try AccessDocument(parsing: f.revocationDocument(order: 1, entries: [])))
        let bytes = f.accessDocument()
        for cut in stride(from: 0, to: bytes.count, by: 7) {
            XCTAssertThrowsError(try AccessDocument(parsing: Array(bytes[0..<cut])))
        }
    }

    func testDocumentsFromOtherEncodersAreRead() throws {
        // Integer spellings of the numbered keys and non-sorted maps are accepted.
        let doc = try AccessDocument(parsing: f.accessDocument())
        let root = try CBOR(parsing: doc.encoded())
        var m = root.mapValue!
        m[5] = m["5"]; m["5"] = nil
        XCTAssertEqual(try AccessDocument(parsing: CBOR.map(m).encoded()).access, doc.access)
    }

    func testAccessDataLimits() {
        XCTAssertThrowsDocument(.malformed, try AccessData(id: [], readers: [try ReaderRule(groupID: f.reader.groupID)]))
        XCTAssertThrowsDocument(.malformed, try AccessData(id: Array(repeating: 1, count: 17), readers: [try ReaderRule(groupID: f.reader.groupID)]))
        XCTAssertThrowsDocument(.malformed, try AccessData(id: [1], readers: []))
        XCTAssertThrowsDocument(.malformed, try ReaderRule(groupID: [1, 2]))
        XCTAssertThrowsDocument(.unsupportedVersion, try AccessData(cbor: [0: 2, 1: .bytes([1]), 2: []]))
        // Key 6 that is not a map of lists of readable extensions counts as one critical extension.
        XCTAssertThrowsDocument(.unsupportedVersion, try AccessData(cbor: [0: 1, 1: .bytes([1]), 2: [[0: .bytes(f.reader.groupID)]], 6: 7]))
        // An empty key 6 names no extension: nothing to refuse.
        XCTAssertEqual(try AccessData(cbor: [0: 1, 1: .bytes([1]), 2: [[0: .bytes(f.reader.groupID)]], 6: [:]]).extensions, [])
        XCTAssertThrowsDocument(.unsupportedVersion, try AccessData(cbor: [0: 1, 1: .bytes([1]), 2: [[0: .bytes(f.reader.groupID)]], 6: [1: [[0: 1]]]]))
    }

    /// AccessData key 6: a critical access extension LockBench does not understand refuses the
    /// document; a non-critical one is skipped (kept as read). Key 4 reader rule ids round-trip.
    func testAccessExtensionsAndReaderRuleIDs() throws {
        let rule = try ReaderRule(groupID: f.reader.groupID)
        let skipped = AccessExtension(id: 7, version: 2, critical: false, data: .text("hint"))
        let data = try AccessData(id: [1], readers: [rule], readerRuleIDs: [0xF118], extensions: [skipped])
        let read = try AccessData(cbor: data.cbor)
        XCTAssertEqual(read, data)
        XCTAssertEqual(read.readerRuleIDs, [0xF118])
        let critical = try AccessData(id: [1], readers: [rule], extensions: [skipped, AccessExtension(id: 1, version: 1, critical: true)])
        XCTAssertThrowsDocument(.unsupportedVersion, try AccessData(cbor: critical.cbor))
        do { _ = try AccessData(cbor: critical.cbor) } catch {
            XCTAssertTrue("\(error)".contains("access extension 1 (version 1, critical) is critical and not understood"), "\(error)")
        }
        XCTAssertThrowsDocument(.malformed, try AccessData(cbor: [0: 1, 1: .bytes([1]), 2: [[0: .bytes(f.reader.groupID)]], 4: [.text("F118")]]))
    }
}

final class RevocationDocumentTests: XCTestCase {
    let f = Fixture()

    func testIssueDecodeVerify() throws {
        let e1 = try RevocationEntry(publicKeyHash: RevocationEntry.hash(credentialPublicKey: f.credentialKey), expiry: Fixture.t0.addingTimeInterval(86_400))
        let e2 = try RevocationEntry(documentID: [0xD0, 0x01], expiry: Fixture.t0.addingTimeInterval(86_400))
        let bytes = f.revocationDocument(order: 7, entries: [e1, e2])
        let doc = try RevocationDocument(parsing: bytes)
        XCTAssertEqual(doc.revocation.changeMode, .overwrite)
        XCTAssertEqual(doc.revocation.entries, [e1, e2])
        XCTAssertEqual(doc.issued, Fixture.t0.addingTimeInterval(-60 + 7))
        XCTAssertNil(doc.document.deviceKey)
        XCTAssertNoThrow(try doc.document.verify(trust: f.trust()))
        XCTAssertTrue(e1.revokes(credentialPublicKey: f.credentialKey, documentID: [1]))
        XCTAssertTrue(e2.revokes(credentialPublicKey: f.credentialKey, documentID: [0xD0, 0x01]))
        XCTAssertFalse(e2.revokes(credentialPublicKey: f.credentialKey, documentID: [0xD0]))
        XCTAssertThrowsDocument(.malformed, try RevocationEntry(expiry: Fixture.t0))
        // JSON form for `show`.
        let json = try JSONEncoder().encode(e2)
        XCTAssertEqual(try JSONDecoder().decode(RevocationEntry.self, from: json), e2)
    }
}

final class ScheduleTests: XCTestCase {
    func testParseAndFormat() throws {
        XCTAssertEqual(try WeeklySchedule(parsing: "mon-fri 08:00-18:00").days, 0x1F)
        XCTAssertEqual(try WeeklySchedule(parsing: "mon-fri 08:00-18:00").description, "weekdays 08:00-18:00")
        XCTAssertEqual(try WeeklySchedule(parsing: "sat,sun 10:00-14:30").description, "weekends 10:00-14:30")
        XCTAssertEqual(try WeeklySchedule(parsing: "mon,wed-thu 00:00-24:00").description, "mon,wed,thu 00:00-24:00")
        XCTAssertEqual(try WeeklySchedule(parsing: "daily 06:00-07:00").days, 0x7F)
        for bad in ["mon-fri", "xyz 08:00-09:00", "mon 09:00-08:00", "mon 08:00-25:00", "fri-mon 08:00-09:00"] {
            XCTAssertThrowsError(try WeeklySchedule(parsing: bad), bad)
        }
    }

    func testContainsUsesOffsetAndWeekday() throws {
        let s = try WeeklySchedule(parsing: "mon-fri 08:00-18:00")
        let monday0900 = Fixture.t0
        XCTAssertTrue(s.contains(monday0900, utcOffsetMinutes: 0))
        XCTAssertFalse(s.contains(monday0900, utcOffsetMinutes: 600))          // 19:00 local
        XCTAssertFalse(s.contains(monday0900, utcOffsetMinutes: -120))         // 07:00 local
        XCTAssertFalse(s.contains(monday0900.addingTimeInterval(-2 * 86_400), utcOffsetMinutes: 0)) // Saturday
        XCTAssertFalse(s.contains(RFC3339.parse("2026-03-02T18:00:00Z")!, utcOffsetMinutes: 0))     // end exclusive
        XCTAssertTrue(s.contains(RFC3339.parse("2026-03-02T08:00:00Z")!, utcOffsetMinutes: 0))
    }

    func testDurationsAndVersions() {
        XCTAssertEqual(DurationText.parse("8h"), 28_800)
        XCTAssertEqual(DurationText.parse("1h30m"), 5400)
        XCTAssertEqual(DurationText.parse("90"), 90)
        XCTAssertNil(DurationText.parse("8x"))
        XCTAssertNil(DurationText.parse("h"))
        XCTAssertEqual(DurationText.format(90_061), "1d1h1m1s")
        XCTAssertEqual(ProtocolVersionText.parse("1.0"), 0x0100)
        XCTAssertEqual(ProtocolVersionText.format(0x0009), "0.9")
    }
}

func XCTAssertThrowsDocument<T>(_ code: DocumentError.Code, _ expression: @autoclosure () throws -> T,
                                file: StaticString = #filePath, line: UInt = #line) {
    do {
        _ = try expression()
        XCTFail("expected \(code.rawValue), got a value", file: file, line: line)
    } catch let error as DocumentError {
        XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
    } catch {
        XCTFail("expected DocumentError \(code.rawValue), got \(error)", file: file, line: line)
    }
}
