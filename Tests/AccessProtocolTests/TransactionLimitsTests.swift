import ByteCore
import Codecs
import Dispatch
import Foundation
import Synchronization
import LockBenchTestSupport
import OfflineUnlock
import XCTest
@testable import AccessProtocol

/// A peer that never finishes: answers every command with `61 00` (more data follows) plus
/// `payload` bytes, optionally slowly. It gives up after `patience` answers (6F 00) so a reader
/// without bounds ends too — with a count that shows it had none.
final class EndlessPeer: APDUResponder {
    let payload: [UInt8]
    let delay: TimeInterval
    let patience: Int
    private let count = Atomic(0)
    var answered: Int { count.load(ordering: .relaxed) }
    init(payload: [UInt8] = [], delay: TimeInterval = 0, patience: Int = 20_000) {
        self.payload = payload; self.delay = delay; self.patience = patience
    }
    func respond(to command: [UInt8]) -> [UInt8] {
        let answered = count.add(1, ordering: .relaxed).newValue
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        return answered >= patience ? [0x6F, 0x00] : payload + [0x61, 0x00]
    }
    func reset() {}
}

/// Issue 9 §1.2: a transaction is bounded by commands, response parts, bytes and time, and ends
/// with `transaction_limit` at the first bound it reaches.
final class TransactionLimitsTests: XCTestCase {
    func reader(_ limits: TransactionLimits = TransactionLimits()) -> LockReader {
        let r = LockReader(configuration: Fixture.readerConfiguration(), decider: Fixture.engine())
        r.limits = limits
        return r
    }

    func testAPeerAnswering6100ForeverIsCutOffByDefault() {
        let peer = EndlessPeer()
        let started = Date()
        let outcome = reader().runTransaction(over: InMemoryLink(peer), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .transport(.transactionLimit), "\(outcome.decision)")
        XCTAssertLessThanOrEqual(peer.answered, TransactionLimits().maxResponseParts + 1)
        XCTAssertLessThanOrEqual(outcome.transcript.count, 2 * (TransactionLimits().maxResponseParts + 2))
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        guard let detail = outcome.refusal?.detail else { return XCTFail() }
        XCTAssertTrue(detail.contains("response parts"), detail)
    }

    func testTheCommandBound() {
        var limits = TransactionLimits()
        limits.maxCommands = 10
        limits.maxResponseParts = 4000
        let peer = EndlessPeer()
        let outcome = reader(limits).runTransaction(over: InMemoryLink(peer), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .transport(.transactionLimit))
        XCTAssertEqual(peer.answered, 10)
        XCTAssertEqual(outcome.timings.commands, 10)
    }

    func testTheByteBound() {
        var limits = TransactionLimits()
        limits.maxCommands = 4000; limits.maxResponseParts = 4000; limits.maxBytes = 4096
        let peer = EndlessPeer(payload: [UInt8](repeating: 0xAB, count: 250))
        let outcome = reader(limits).runTransaction(over: InMemoryLink(peer), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .transport(.transactionLimit))
        guard let detail = outcome.refusal?.detail else { return XCTFail() }
        XCTAssertTrue(detail.contains("bytes received"), detail)
        XCTAssertLessThanOrEqual(peer.answered * 252, 4096 + 252)
    }

    func testTheTimeBound() {
        var limits = TransactionLimits()
        limits.maxCommands = 4000; limits.maxResponseParts = 4000; limits.maxDuration = 1
        let peer = EndlessPeer(delay: 0.1, patience: 200)
        let started = Date()
        let outcome = reader(limits).runTransaction(over: InMemoryLink(peer), at: Fixture.time)
        XCTAssertEqual(outcome.reason, .transport(.transactionLimit), "\(outcome.decision)")
        guard let detail = outcome.refusal?.detail else { return XCTFail() }
        XCTAssertTrue(detail.contains("elapsed"), detail)
        XCTAssertLessThan(Date().timeIntervalSince(started), 8, "ends at the bound, not when the peer gives up (20 s)")
    }

    func testARealTransactionIsWellInsideTheDefaults() {
        let outcome = reader().runTransaction(over: InMemoryLink(Fixture.credential()), at: Fixture.time)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertLessThan(outcome.timings.commands, TransactionLimits().maxCommands / 4)
    }

    func testLimitsInTheConfigurationAreBounded() throws {
        let decoded = try JSONDecoder().decode(TransactionLimits.self, from: Data(#"{"maxCommands":100,"maxDuration":"2s"}"#.utf8))
        XCTAssertEqual(decoded.maxCommands, 100)
        XCTAssertEqual(decoded.maxDuration, 2)
        XCTAssertEqual(decoded.maxBytes, TransactionLimits().maxBytes)
        for bad in [#"{"maxCommands":0}"#, #"{"maxBytes":-1}"#, #"{"maxDuration":"inf"}"#, #"{"maxDuration":"1h"}"#, #"{"maxResponseParts":99999999}"#] {
            XCTAssertThrowsError(try JSONDecoder().decode(TransactionLimits.self, from: Data(bad.utf8)), bad)
        }
    }
}
