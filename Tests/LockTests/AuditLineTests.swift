import AccessProtocol
import ByteCore
import Foundation
@testable import Lock
import OfflineUnlock
import XCTest

/// The audit line is written member by member (`AuditEntry.jsonBody`, not `JSONEncoder`): what
/// it writes must read back through the `Codable` conformances as exactly what was written.
final class AuditLineTests: XCTestCase {
    let when = Date(timeIntervalSinceReferenceDate: 817_313_882.168_362_1)

    func entry(_ state: StateDelta?) -> AuditEntry {
        var e = AuditEntry(seq: 41, time: when, credential: "d001", transport: .nfc,
                           decision: .deny(Refusal(.engine(.expired), detail: "line\none \"quoted\" \\ é")), transaction: Array(repeating: 0x5A, count: 16))
        e.state = state
        return e
    }

    func everyMember() -> StateDelta {
        var d = StateDelta()
        d.trustedClock = TrustedClock(highWaterMark: when, trusted: true)
        d.revocationLists = ["kid1": IssuerRevocationList(issued: when, entries: [])]
        d.revocationListsRemoved = ["kid0", "kid2"]
        d.documents = ["04ab": Data([1, 2, 3, 0xFF]), "04cd": Data()]
        d.documentsRemoved = ["04ef"]
        d.transactions = ["5a5a", "6b6b"]
        d.transactionWindow = ["7c7c"]
        d.versions = ["04ab": 0x0100, "04cd": 0xFFFF]
        d.accessIterations = ["kid1": 9, "kid2": Int.max, "": -3]
        d.bolt = .unsecured(relockAt: when.addingTimeInterval(5))
        d.clock = .running(offset: -3600.25)
        d.reader = [ReaderLearning(deviceEphemeralKey: [4, 1], credentialPublicKey: [4, 2], persistentKey: [9], usedFast: true),
                    ReaderLearning(deviceEphemeralKey: nil, credentialPublicKey: nil, persistentKey: nil, usedFast: false)]
        var forget = ReaderLearning(deviceEphemeralKey: nil, credentialPublicKey: [4, 3], persistentKey: nil, usedFast: false)
        forget.forgetsPersistentKey = true
        d.reader?.append(forget)
        return d
    }

    func testEveryMemberOfTheStateReadsBackAsWritten() throws {
        let written = entry(everyMember())
        let body = try written.jsonBody()
        XCTAssertEqual(try JSONDecoder().decode(AuditEntry.self, from: Data(body)), written)
        // And as `JSONEncoder` would have written it.
        let foundation = try JSONEncoder().encode(written)
        XCTAssertEqual(try JSONDecoder().decode(AuditEntry.self, from: foundation), try JSONDecoder().decode(AuditEntry.self, from: Data(body)))
    }

    func testEachBoltStateAndClockModeAndAnEmptyTrustedClockReadBack() throws {
        for bolt in [LockStateMachine.State.secured, .jammed, .unsecured(relockAt: when)] {
            for clock in [VirtualClock.Mode.frozen(when), .running(offset: 0)] {
                var d = StateDelta()
                d.bolt = bolt
                d.clock = clock
                d.trustedClock = TrustedClock(highWaterMark: nil, trusted: false)
                let e = entry(d)
                XCTAssertEqual(try JSONDecoder().decode(AuditEntry.self, from: Data(try e.jsonBody())), e, "\(bolt) \(clock)")
            }
        }
    }

    func testKeysAreSortedAndAnEntryWithoutNumbersIsByteForByteWhatJSONEncoderWrites() throws {
        var d = StateDelta()
        d.transactions = ["5a5a"]
        d.documentsRemoved = ["04ef"]
        d.reader = [ReaderLearning(deviceEphemeralKey: [4, 1], credentialPublicKey: [4, 2], persistentKey: nil, usedFast: false)]
        for e in [entry(nil), entry(d), AuditEntry(seq: 3, time: when, event: AuditEntry.lockResetEvent, detail: "by the operator")] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            XCTAssertEqual(String(decoding: try e.jsonBody(), as: UTF8.self), String(decoding: try encoder.encode(e), as: UTF8.self))
        }
    }

    func testAnUnwritableNumberIsALockErrorNotATrap() {
        var d = StateDelta()
        d.bolt = .unsecured(relockAt: Date(timeIntervalSinceReferenceDate: .nan))
        XCTAssertThrowsError(try AuditLog.line(for: entry(d), previousMAC: Array(repeating: 0, count: 32), key: Array(repeating: 1, count: 32))) {
            XCTAssertEqual(($0 as? LockError)?.code, .invalidInput)
        }
    }
}
