import ByteCore
import Foundation
import XCTest
import NFC
import ReaderSeam
import VirtualPN532

/// The lock's reader loop over libnfc (`ReaderLoop` + `LibNFCReader`) through the real libnfc
/// against the virtual PN532 with a test card.
final class NFCLockLoopTests: XCTestCase {
    /// Collects events and lets a test wait for one.
    final class Recorder: Sendable {
        private let seen = Monitor<(events: [String], kinds: [String])>(([], []))
        var events: [String] { seen.withLock { $0.events } }
        var kinds: [String] { seen.withLock { $0.kinds } }

        func record(_ event: ReaderEvent<String>) {
            let (description, kind) = (event.description, Self.kind(event))
            seen.withLock { $0.events.append(description); $0.kinds.append(kind) }
        }

        static func kind(_ e: ReaderEvent<String>) -> String {
            switch e {
            case .started: return "started"
            case .readerOpened: return "opened"
            case .cardArrived: return "arrived"
            case .cardIgnored: return "ignored"
            case .transactionCompleted: return "completed"
            case .transactionFailed: return "failed"
            case .cardRemoved: return "removed"
            case .readerLost: return "lost"
            case .notice: return "notice"
            case .stopped: return "stopped"
            }
        }

        func count(_ kind: String) -> Int { kinds.filter { $0 == kind }.count }

        @discardableResult
        func wait(for kind: String, count: Int = 1, timeout: TimeInterval = 10, file: StaticString = #filePath, line: UInt = #line) -> Bool {
            let (ready, events) = seen.wait(until: Date().addingTimeInterval(timeout), for: { $0.kinds.filter({ $0 == kind }).count >= count }) {
                ($1, $0.events)
            }
            if !ready { XCTFail("no \(count)× \(kind) in \(timeout) s; events: \(events)", file: file, line: line) }
            return ready
        }
    }

    /// The reader loop over libnfc at `connstring`, running `transaction` with each card's link and target.
    static func loop(_ connstring: String, ecpPolling: Bool = false, reopenDelay: TimeInterval = 0.1,
                     transaction: @escaping @Sendable (APDUTransceiver, TargetInfo) throws -> String = transaction) -> ReaderLoop<LibNFCReader, String> {
        ReaderLoop(reader: LibNFCReader(connstring: connstring, ecpPolling: ecpPolling), configuration: .init(reopenDelay: reopenDelay)) {
            card in try transaction(card.link, card.target)
        }
    }

    /// A transaction as the engine's reader session would run one: SELECT, then one echo.
    static func transaction(_ link: APDUTransceiver, _ target: TargetInfo) throws -> String {
        guard try link.transceive(LibNFCBindingTests.select) == [0x90, 0x00] else { return "select refused" }
        let echo = try link.transceive([0x80, 0xEE, 0x00, 0x00, 0x02] + target.uid.prefix(2))
        return "granted \(echo.hex)"
    }

    func testTapTransactRemoveRearm() throws {
        let reader = try VirtualReader()
        defer { reader.stop() }
        let recorder = Recorder()
        let loop = Self.loop(reader.connstring)
        loop.onEvent = recorder.record
        loop.start()
        recorder.wait(for: "opened")
        XCTAssertTrue(recorder.events[0].contains("ECP polling off"), recorder.events[0])
        for round in 1...3 {
            try reader.insert(TestCard())
            recorder.wait(for: "completed", count: round)
            reader.remove()
            recorder.wait(for: "removed", count: round)
        }
        loop.stop()
        XCTAssertEqual(recorder.kinds.last, "stopped")
        XCTAssertEqual(recorder.count("completed"), 3)
        XCTAssertTrue(recorder.events.contains { $0.contains("granted 04a29000") }, "\(recorder.events)")
        XCTAssertTrue(reader.rawFrames.allSatisfy { $0 == [0xB2] }, "ECP off: only presence checks go raw")
    }

    func testOneTransactionPerTapWhileTheCardStays() throws {
        let reader = try VirtualReader(card: TestCard())
        defer { reader.stop() }
        let recorder = Recorder()
        let loop = Self.loop(reader.connstring)
        loop.onEvent = recorder.record
        loop.start()
        recorder.wait(for: "completed")
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(recorder.count("completed"), 1, "a card left in the field is served once")
        loop.stop()
    }

    func testECPAccessFrameBeforeEachPoll() throws {
        let reader = try VirtualReader()
        defer { reader.stop() }
        let recorder = Recorder()
        let loop = Self.loop(reader.connstring, ecpPolling: true)
        loop.onEvent = recorder.record
        loop.start()
        recorder.wait(for: "opened")
        Thread.sleep(forTimeInterval: 0.2)
        try reader.insert(TestCard())
        recorder.wait(for: "completed")
        loop.stop()
        XCTAssertTrue(recorder.events[0].contains("ECP polling on: sending the access frame 6a02c3020002ffff"), recorder.events[0])
        let frames = reader.rawFrames.filter { $0 != [0xB2] }
        XCTAssertGreaterThan(frames.count, 2)
        XCTAssertTrue(frames.allSatisfy { $0 == [0x6A, 0x02, 0xC3, 0x02, 0x00, 0x02, 0xFF, 0xFF] }, "\(frames)")
    }

    func testCardPulledMidTransactionIsReportedAndTheLoopGoesOn() throws {
        let reader = try VirtualReader()
        defer { reader.stop() }
        let recorder = Recorder()
        let loop = Self.loop(reader.connstring) { link, target in
            _ = try link.transceive(LibNFCBindingTests.select)
            _ = try link.transceive([0x80, 0x5E, 0x00, 0x00, 30])  // 300 ms of card work
            return "granted"
        }
        loop.onEvent = recorder.record
        loop.start()
        try reader.insert(TestCard())
        recorder.wait(for: "arrived")
        Thread.sleep(forTimeInterval: 0.1)
        reader.remove()
        recorder.wait(for: "failed")
        recorder.wait(for: "removed")
        XCTAssertTrue(recorder.events.contains { $0.contains("failed") && $0.contains("left the field") }, "\(recorder.events)")
        try reader.insert(TestCard())
        recorder.wait(for: "completed")
        loop.stop()
        XCTAssertEqual(recorder.count("lost"), 0, "a pulled card is not a lost reader")
    }

    func testReaderThatDisappearsIsReopenedWithBackoff() throws {
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-loop-\(UUID().uuidString)").path
        var reader = try VirtualReader(link: link)
        let recorder = Recorder()
        let loop = Self.loop("pn532_uart:\(link)", reopenDelay: 0.05)
        loop.onEvent = recorder.record
        loop.start()
        recorder.wait(for: "opened")
        reader.stop()  // unplugged: the pty and its symlink go away
        recorder.wait(for: "lost", count: 3)
        let lost = recorder.events.filter { $0.contains("reader lost") }
        XCTAssertTrue(lost[0].contains("attempt 1 in 0.1 s") || lost[0].contains("attempt 1 in 0.0 s"), lost[0])
        XCTAssertTrue(lost[2].contains("attempt 3 in 0.2 s"), "the delay doubles: \(lost)")
        reader = try VirtualReader(card: TestCard(), link: link)  // plugged back in
        defer { reader.stop() }
        recorder.wait(for: "opened", count: 2)
        recorder.wait(for: "completed")
        loop.stop()
        XCTAssertEqual(recorder.kinds.last, "stopped")
    }

    func testStopWhileWaitingForAReaderThatNeverComes() throws {
        let recorder = Recorder()
        let loop = Self.loop("pn532_uart:/dev/pts/lockbench-none", reopenDelay: 10)
        loop.onEvent = recorder.record
        loop.start()
        recorder.wait(for: "lost")
        XCTAssertTrue(recorder.events[1].contains("noDevice"), recorder.events[1])
        let started = Date()
        loop.stop()
        XCTAssertLessThan(Date().timeIntervalSince(started), 1, "stop() interrupts the backoff")
        XCTAssertEqual(recorder.kinds.last, "stopped")
    }

    func testECPFrameLayout() {
        XCTAssertEqual(ECPFrame.accessDefault.bytes, [0x6A, 0x02, 0xC3, 0x02, 0x00, 0x02, 0xFF, 0xFF])
        let aliroHome = ECPFrame.access(tci: [0x20, 0x42, 0x20], subtype: 0x04, readerGroupID: [UInt8](repeating: 0xAB, count: 8))
        XCTAssertEqual(Array(aliroHome.bytes.prefix(8)), [0x6A, 0x02, 0xCB, 0x02, 0x04, 0x20, 0x42, 0x20])
        XCTAssertEqual(aliroHome.bytes.count, 16)
    }
}
