import ByteCore
import Codecs
import Foundation
import SocketTransport
import XCTest
@testable import AccessProtocol

final class SocketTransportTests: XCTestCase {
    // MARK: Decoder, fed one byte at a time, in batches and whole

    func testLengthFramingAnySplit() throws {
        let apdus: [[UInt8]] = [[0x00, 0xA4, 0x04, 0x00, 0x00], [UInt8](repeating: 7, count: 261), [0x90, 0x00]]
        let stream = apdus.flatMap { APDUStreamDecoder.frame($0, .length) }
        for batch in [1, 2, 3, 7, 100, stream.count] {
            var d = APDUStreamDecoder(framing: .length, kind: .command)
            var out: [[UInt8]] = []
            var i = 0
            while i < stream.count {
                out += try d.frames(after: stream[i..<min(i + batch, stream.count)])
                i += batch
            }
            XCTAssertEqual(out, apdus, "batch \(batch)")
        }
        var d = APDUStreamDecoder(framing: .length, kind: .response)
        d.feed([0xFF, 0xFF])
        XCTAssertThrowsError(try d.next())
    }

    func testRawFramingWaitsForShortReadsOfACommand() throws {
        let auth0 = [UInt8](repeating: 0x80, count: 4) + [10] + [UInt8](repeating: 1, count: 10) + [0x00]
        var d = APDUStreamDecoder(framing: .raw, kind: .command)
        for b in auth0.prefix(auth0.count - 1) {
            d.feed([b])
            if d.buffered >= 4 && d.buffered < 15 && d.buffered != 4 && d.buffered != 5 { XCTAssertNil(try d.next()) }
            if d.buffered == 15 { XCTAssertNotNil(try d.next()) }
        }
        var r = APDUStreamDecoder(framing: .raw, kind: .response)
        r.feed([0x90])
        XCTAssertNil(try r.next())
        r.feed([0x00])
        XCTAssertEqual(try r.next(), [0x90, 0x00])
    }

    // MARK: Real sockets on loopback

    private func runOverLoopback(framing: SocketFraming, credential: CredentialSession, lock: LockReader,
                                 transactions: Int = 1) throws -> [TransactionOutcome] {
        let server = try SocketCredentialServer(port: 0, framing: framing)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            try? server.serve(credential, limit: transactions)
            done.signal()
        }
        thread.start()
        var outcomes: [TransactionOutcome] = []
        for _ in 0..<transactions {
            let link = try SocketTransceiver(host: "127.0.0.1", port: server.port, framing: framing)
            outcomes.append(lock.runTransaction(over: link, at: Fixture.time))
            link.close()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        server.close()
        return outcomes
    }

    func testStandardThenFastOverRawSockets() throws {
        let credential = Fixture.credential()
        let lock = LockReader(configuration: Fixture.readerConfiguration(), decider: Fixture.engine())
        let outcomes = try runOverLoopback(framing: .raw, credential: credential, lock: lock, transactions: 2)
        XCTAssertTrue(outcomes[0].granted, "\(outcomes[0].decision)")
        XCTAssertTrue(outcomes[0].stepUp)
        XCTAssertFalse(outcomes[0].fast)
        XCTAssertTrue(outcomes[1].granted)
        XCTAssertTrue(outcomes[1].fast)
        XCTAssertEqual(outcomes[0].interface, .nfc)
    }

    func testStepUpOverLengthFramedSockets() throws {
        let access = Fixture.accessDocument()
        let credential = Fixture.credential(accessDocuments: [access], revocationDocuments: [Fixture.revocationDocument(revoking: Fixture.otherCredentialKey)])
        let decider = RecordingDecider(Fixture.engine())
        let lock = LockReader(configuration: Fixture.readerConfiguration(), decider: decider)
        let outcome = try runOverLoopback(framing: .length, credential: credential, lock: lock)[0]
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertTrue(outcome.stepUp)
        XCTAssertEqual(decider.presentations.last?.accessDocuments, [access])
    }

    func testConnectionRefusedIsATransportError() {
        let listener = try! TCPSocket.listen(port: 0)
        let port = listener.localPort
        listener.close()
        XCTAssertThrowsError(try SocketTransceiver(host: "127.0.0.1", port: port)) {
            XCTAssertEqual(($0 as? SocketError)?.code, .transport)
        }
    }
}
