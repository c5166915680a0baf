import BLE
import ReaderSeam
import Foundation
import XCTest

extension XCTestCase {
    /// The Swift lock on `spec` under the reader loop (several phones at once), started and
    /// advertising, logging as "lock"; stopped at teardown. `transaction` returns true to grant.
    func startLock(on spec: String, configure: (inout BLELock.Configuration) -> Void = { _ in },
                   onEvent: ((BLELockEvent) -> Void)? = nil, transaction: @escaping @Sendable (BLEReaderSession) -> Bool = EchoFlow.lockTransaction(),
                   file: StaticString = #filePath, line: UInt = #line) throws -> BLELock {
        var config = BLELock.Configuration(transport: try TransportSpec(parsing: spec))
        config.log = TestLog("lock").logger
        configure(&config)
        let lock = try BLELock(configuration: config)
        lock.onEvent = onEvent
        lock.start()
        let loop = ReaderLoop(reader: lock, configuration: .init(maxConcurrent: 4), granted: { $0 }, transaction: transaction)
        loop.start()
        addTeardownBlock { loop.stop(); lock.stop() }
        XCTAssertTrue(lock.waitUntilAdvertising(timeout: 10), file: file, line: line)
        return lock
    }

    /// The Swift phone on `spec`, started, logging as "phone"; stopped at teardown.
    func startPhone(on spec: String, configure: (inout BLEPhone.Configuration) -> Void = { _ in }) throws -> BLEPhone {
        var config = BLEPhone.Configuration(transport: try TransportSpec(parsing: spec))
        config.log = TestLog("phone").logger
        configure(&config)
        let phone = try BLEPhone(configuration: config)
        try phone.start()
        addTeardownBlock { phone.stop() }
        return phone
    }
}

/// Collects log lines (printed when LOCKBENCH_BLE_LOG is set).
final class TestLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    let prefix: String
    init(_ prefix: String) { self.prefix = prefix }
    var logger: @Sendable (String) -> Void {
        { [self] line in
            lock.withLock { lines.append(line) }
            if ProcessInfo.processInfo.environment["LOCKBENCH_BLE_LOG"] != nil { FileHandle.standardError.write(Data("[\(prefix)] \(line)\n".utf8)) }
        }
    }
    var all: [String] { lock.withLock { lines } }
}
