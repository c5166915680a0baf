@testable import AccessProtocol
import ByteCore
import Codecs
import Foundation
import OfflineUnlock
import XCTest

/// The `91` / `92` fields read tolerantly: they only ever make the lock ask for documents.
final class SignedTimestampsTests: XCTestCase {
    let t = RFC3339.parse("2026-03-02T09:00:00Z")!

    func testAbsentOrZerosSayNothing() {
        XCTAssertNil(SignedTimestamps.time(nil))
        XCTAssertNil(SignedTimestamps.time(Auth1ResponsePlaintext.zeroTimestamp))
    }

    func testATimeIsRead() {
        XCTAssertEqual(SignedTimestamps.time(Array("2026-03-02T09:00:00Z".utf8)), t)
        XCTAssertEqual(SignedTimestamps.time(SignedTimestamps.field(t)), t)
    }

    func testSomethingThatIsNotATimeCountsAsNewer() {
        for field in [Array("2026-13-02T09:00:00Z".utf8), Array("not a time at all!!!".utf8), [UInt8](repeating: 0xFF, count: 20),
                      Array("2026-03-02T09:00:00+".utf8)] {
            XCTAssertEqual(SignedTimestamps.time(field), .distantFuture, Hex.encode(field))
        }
    }

    func testFromTheAuth1AnswerAndTheCryptogram() {
        let answer = Auth1ResponsePlaintext(identity: .keySlot([UInt8](repeating: 1, count: 8)), signature: [UInt8](repeating: 2, count: 64),
                                            signaling: [], credentialTimestamp: nil, revocationTimestamp: SignedTimestamps.field(t))
        XCTAssertEqual(SignedTimestamps(answer), SignedTimestamps(credential: nil, revocation: t))
        let plain = Auth1ResponsePlaintext.cryptogramPlaintext(signaling: [], credentialTimestamp: SignedTimestamps.field(t), revocationTimestamp: nil)
        XCTAssertEqual(SignedTimestamps(cryptogramPlaintext: plain), SignedTimestamps(credential: t, revocation: nil))
        XCTAssertEqual(SignedTimestamps(cryptogramPlaintext: [0x5E, 0x05]), .none, "a plaintext that does not parse says nothing")
    }
}
