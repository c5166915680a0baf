import ByteCore
import Codecs
import Crypto
import Foundation
@testable import OfflineUnlock
import XCTest

/// Issue 9 §1.6: dates and durations are range-checked where they are parsed. A tag-1 date of NaN
/// used to never expire (it also skipped the maximum lifetime); 1e300 trapped the lock.
final class DateRangeTests: XCTestCase {
    let f = Fixture()

    /// An access document signed by the fixture issuer whose MSO validityInfo is `validity` as given
    /// (any CBOR: the issuer signs whatever it is handed).
    func document(validity: CBOR) -> [UInt8] {
        let docType = IssuedDocument.DocType.access
        let data = try! AccessData(id: [0xD0, 0x01], readers: [try! ReaderRule(groupID: f.reader.groupID)])
        let item: CBOR = [1: 0, 2: .bytes(Array(repeating: 7, count: 16)), 3: .text(AccessDocument.elementIdentifier), 4: data.cbor]
        let tagged = CBOR.embedded(item)
        let mso: CBOR = ["1": "1.0", "2": "SHA-256", "3": [.text(docType): [0: .bytes(Primitives.sha256(tagged.encoded()))]],
                         "4": ["1": try! CoseKey(publicKey: f.credentialKey).cbor], "5": .text(docType), "6": validity, "7": true]
        let auth = CoseSign1.sign(payload: CBOR.embedded(mso).encoded(), key: f.issuer,
                                  kid: CoseSign1.keyIdentifier(issuerPublicKey: f.issuerPoint))
        let doc: CBOR = ["1": ["1": [.text(docType): [tagged]], "2": auth.cbor], "5": .text(docType)]
        return doc.encoded()
    }

    func validity(until: CBOR) -> CBOR {
        ["1": .dateTime(Fixture.t0.addingTimeInterval(-3600)), "2": .dateTime(Fixture.t0.addingTimeInterval(-3600)), "3": until]
    }

    func testEpochDatesOutOfRangeAreMalformed() {
        for bad: CBOR in [.float(.nan), .float(.infinity), .float(-.infinity), .float(1e300), .float(-1e300),
                          .unsigned(UInt64.max), .negative(UInt64.max)] {
            let bytes = document(validity: validity(until: .tagged(CBOR.Tag.epochDateTime, bad)))
            XCTAssertThrowsDocument(.malformed, try AccessDocument(parsing: bytes))
            var state = EngineState(clock: TrustedClock(trustedAt: Fixture.t0))
            let d = f.core().decide(f.presentation(access: [bytes]), state: &state, at: Fixture.t0)
            XCTAssertEqual(d.denyReason, .malformedInput, "\(bad.diagnostic): \(d)")
        }
    }

    func testEpochDatesInRangeAreRead() throws {
        let until = Fixture.t0.addingTimeInterval(3600)
        let bytes = document(validity: validity(until: .epoch(until)))
        XCTAssertEqual(try AccessDocument(parsing: bytes).validity.validUntil, until)
        var state = EngineState(clock: TrustedClock(trustedAt: Fixture.t0))
        XCTAssertTrue(f.core().decide(f.presentation(access: [bytes]), state: &state, at: Fixture.t0).isGrant)
        // Years 0000 and 9999 are the edges.
        XCTAssertNotNil(CBOR.tagged(CBOR.Tag.epochDateTime, .float(RFC3339.latest.timeIntervalSince1970)).dateValue)
        XCTAssertNil(CBOR.tagged(CBOR.Tag.epochDateTime, .float(RFC3339.latest.timeIntervalSince1970 + 1)).dateValue)
        XCTAssertNil(RFC3339.parse("0000-01-01T00:00:00+01:00"))
    }

    func testFormattingNeverTraps() {
        XCTAssertEqual(RFC3339.format(Date(timeIntervalSince1970: 1e300)), "invalid-time(1e+300)")
        XCTAssertTrue(RFC3339.format(Date(timeIntervalSince1970: .nan)).hasPrefix("invalid-time"))
        XCTAssertEqual(DurationText.format(.infinity), "invalid-duration(inf)")
        XCTAssertEqual(DurationText.format(-90), "-1m30s")
        XCTAssertFalse((try! WeeklySchedule(parsing: "daily 00:00-24:00")).contains(Date(timeIntervalSince1970: 1e300), utcOffsetMinutes: Int.max))
    }

    func testDurationsRefuseNonFiniteAndHuge() {
        for bad in ["inf", "infinity", "nan", "1e300", "1e3", "-5m", "0x10", "+5", "1e300s", "99999999999999999999d", ".s", "1..5s", "5m3", "", " "] {
            XCTAssertNil(DurationText.parse(bad), bad)
        }
        XCTAssertEqual(DurationText.parse("36525d"), DurationText.maximum)
        XCTAssertNil(DurationText.parse("36526d"))
        XCTAssertEqual(DurationText.parse("1.5h"), 5400)
        XCTAssertThrowsError(try DurationText.parse("2h", within: LockPolicy.Bounds.relockTime, what: "relockTime")) {
            XCTAssertEqual("\($0)", "relockTime \"2h\" is out of range: it must lie between 0s and 1h")
        }
    }
}
