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
}
