import AccessProtocol
import ByteCore
import Foundation
import LockRuntime
import SocketTransport
import XCTest

/// The socket transport under the same reader loop as the radios: `LockRunner` connects to a
/// credential listening on loopback (`SocketCredentialServer`), one connection per tap.
final class SocketReaderTests: XCTestCase {
    func testTheLockTapsACredentialOnTCPThroughTheReaderLoop() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lockruntime-socket-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let provisioning = try LockProvisioning(directory: directory)
        let phone = try provisioning.phone(id: "dave")
        let server = try SocketCredentialServer(port: 0, framing: .length)
        defer { server.close() }
        let served = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? server.serve(phone.session, limit: 2)
            served.signal()
        }
        let service = try LockService(configuration: provisioning.configuration)
        let seen = Monitor<(outcomes: [TransactionOutcome], events: [LockEvent])>(([], []))
        let runner = LockRunner(service: service, nfc: nil, ble: nil,
                                socket: .init(host: "127.0.0.1", port: server.port, framing: .length, rearmDelay: 0.2)) { event in
            seen.withLock { $0.events.append(event) }
        }
        runner.onOutcome = { outcome in seen.withLock { $0.outcomes.append(outcome) } }
        try runner.start()
        seen.wait(until: Date().addingTimeInterval(20), for: { $0.outcomes.count >= 2 }, then: { _, _ in })
        XCTAssertEqual(served.wait(timeout: .now() + 10), .success, "the credential served two connections")
        runner.stop()
        let (outcomes, events) = seen.withLock { $0 }
        XCTAssertEqual(outcomes.count, 2, events.map(\.line).joined(separator: "\n"))
        XCTAssertTrue(outcomes.allSatisfy(\.granted), "\(outcomes.map(\.decision))")
        XCTAssertEqual(outcomes.map(\.interface), [.socket, .socket])
        XCTAssertTrue(outcomes[1].fast, "the second tap reuses what the first taught the lock")
        XCTAssertTrue(events.contains { $0.radio == "socket" && $0.message.contains("reader loop on tcp:127.0.0.1:\(server.port)") },
                      events.map(\.line).joined(separator: "\n"))
        XCTAssertTrue(events.contains { $0.radio == "socket" && $0.message.hasPrefix("card removed: 127.0.0.1:") })
    }
}
