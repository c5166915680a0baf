import Crypto
import Foundation
import OfflineUnlock
@testable import TrustModel
@testable import TrustCore
@testable import TrustSQLite
@testable import TrustPostgres
@testable import TrustBackends
@testable import TrustHTTP
import XCTest

/// The poll's answer is written member by member (`PollResult.json`): byte for byte what
/// `JSONEncoder` with sorted keys writes, except that `/` is not escaped as `\/` (JSON lets
/// either be), so every phone reads it as it did.
final class PollResultJSONTests: XCTestCase {
    func testThePollAnswerIsWhatJSONEncoderWrites() throws {
        let key = PollResult.Key(id: "g1/p\"1", grant: "g1", document: "omF/b+==", iteration: 7,
                                 validUntil: "2026-03-02T18:00:00Z", expectedUpdate: "2026-03-02T16:00:00Z")
        let answers = [
            PollResult(cursor: "42", keys: [key, key], deleted: ["g0/p1", "g\\2"], revocation: .init(serial: UInt64.max, document: "oQ==")),
            PollResult(cursor: "0", keys: [], deleted: [], revocation: nil),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for answer in answers {
            XCTAssertEqual(String(decoding: answer.json(), as: UTF8.self), String(decoding: try encoder.encode(answer), as: UTF8.self))
            XCTAssertEqual(try JSONDecoder().decode(PollResult.self, from: Data(answer.json())), answer)
        }
    }

    /// The poll path reads a grant's readers and schedules without a JSON decoder when they are
    /// plain (`StoredList.plainList`): the same lists as the decoder for every shape, and nothing
    /// it would refuse or read otherwise.
    func testStoredListsReadWithoutTheDecoderAreTheDecodersLists() throws {
        for list in [[], ["a"], [""], ["abcd:01", "ef01"], ["mon-fri 08:00-18:00", "sat 10:00-12:00"], ["é\u{301}", "日本"],
                     ["a\"b"], ["a\\b", "c"], ["a/b"], ["\u{1}"], ["a\",\"b"]] {
            let text = StoredList.encode(list)
            XCTAssertEqual(try StoredList.decode(text), list, text)
        }
        XCTAssertEqual(StoredList.plainList(#"["ab","c"]"#), ["ab", "c"])
        XCTAssertEqual(StoredList.plainList(#"[""]"#), [""])
        for text in [#"["a", "b"]"#, #"["a\"b"]"#, #"["a"b"]"#, #"["a"#, #"["]"#, #"{"a":1}"#, "[\"a\u{1}\"]"] {
            XCTAssertNil(StoredList.plainList(text), text)
        }
        XCTAssertThrowsError(try StoredList.decode(#"["a"b"]"#))
    }

    /// A re-issue reads only the signed time of the document it replaces (`TrustService.signedTime`):
    /// the same date the full parse gives, for a document signed ahead of the clock too.
    func testTheSignedTimeOfAnIssuedDocumentIsTheFullParsesSignedTime() throws {
        let issuer = P256.Signing.PrivateKey(), credential = P256.Signing.PrivateKey()
        let now = Date(timeIntervalSince1970: 1_772_438_400)
        for signed in [now, now.addingTimeInterval(17)] {
            let validity = IssuedDocument.Validity(signed: signed, validFrom: now, validUntil: now.addingTimeInterval(86400),
                                                   expectedUpdate: now.addingTimeInterval(3600))
            let access = try AccessData(id: [1, 2, 3, 4, 5, 6, 7, 8], readers: [try ReaderRule(parsing: "00112233445566778899aabbccddeeff")], schedules: [])
            let doc = try AccessDocument.issue(access: access, credentialPublicKey: Array(credential.publicKey.x963Representation),
                                               validity: validity, issuerKey: issuer).encoded()
            XCTAssertEqual(IssuedDocument.signedTime(of: doc), signed)
            XCTAssertEqual(IssuedDocument.signedTime(of: doc), try AccessDocument(parsing: doc).validity.signed)
        }
        XCTAssertNil(IssuedDocument.signedTime(of: [0xA0]), "not a document: no signed time")
    }

    /// A re-issue signs strictly after the document it replaces, whether this instance signed that
    /// document (its signed time remembered, `TrustService.signedTimes`) or another instance did
    /// (read from the bytes): each iteration of one grant on one device, in one second, one
    /// second later than the one before, as the full parse of the stored bytes says.
    func testAReIssueSignsAfterTheDocumentItReplacesRememberedOrParsed() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        _ = try await f.login("p1", user: "u1")
        _ = try await f.service.addGrant(id: "g1", user: "u1", readers: [f.group])
        guard let d = try await f.storage.read({ try await $0.device("p1") }), let g = try await f.service.grants(user: "u1").first else {
            return XCTFail("no device or grant")
        }
        let other = try await f.sibling()
        defer { Task { try? await other.storage.close() } }
        let now = f.service.now()
        func signed(_ k: KeyRecord) throws -> Date { try AccessDocument(parsing: k.document ?? []).validity.signed }
        let k1 = try f.service.issue(grant: g, device: d, old: nil, now: now)
        XCTAssertEqual(try signed(k1), now)
        XCTAssertEqual(f.service.signedTimes.withLock { $0[.init(k1.document!)] }, now, "the issuer remembers what it signed")
        let k2 = try f.service.issue(grant: g, device: d, old: k1, now: now)          // remembered
        XCTAssertEqual(try signed(k2), now.addingTimeInterval(1))
        XCTAssertNil(f.service.signedTimes.withLock { $0[.init(k1.document!)] }, "a replaced document is forgotten")
        let k3 = try other.issue(grant: g, device: d, old: k2, now: now)              // another instance: parsed
        XCTAssertEqual(try signed(k3), now.addingTimeInterval(2))
        let k4 = try f.service.issue(grant: g, device: d, old: k3, now: now)          // signed elsewhere: parsed here
        XCTAssertEqual(try signed(k4), now.addingTimeInterval(3))
        // k2 again (as a poll that lost its compare-and-swap re-plans): this instance signed it and
        // still holds its time (another instance's re-issue does not touch this one's memory).
        let again = try f.service.issue(grant: g, device: d, old: k2, now: now)
        XCTAssertEqual(try signed(again), now.addingTimeInterval(2))
        XCTAssertNil(f.service.signedTimes.withLock { $0[.init(k2.document!)] })
        let once = try f.service.issue(grant: g, device: d, old: k2, now: now)        // now forgotten: parsed, same time
        XCTAssertEqual(try signed(once), now.addingTimeInterval(2))
        XCTAssertEqual(IssuedDocument.signedTime(of: k4.document!), f.service.signedTimes.withLock { $0[.init(k4.document!)] })
    }
}
