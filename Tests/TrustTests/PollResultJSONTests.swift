import Foundation
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
}
