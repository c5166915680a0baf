import AccessProtocol
import ByteCore
import Foundation
import Lock
import LockRuntime
import VirtualPN532
import XCTest

/// A provisioned lock running through `LockRunner` on a virtual PN532 that the real libnfc drives
/// over a pty (or on another reader of the registry, e.g. PC/SC): taps phones on it and collects
/// every event, outcome and audit entry.
final class RunningLock {
    let directory: URL
    let provisioning: LockProvisioning
    let service: LockService
    let runner: LockRunner
    /// Every event and outcome so far, for the test's thread to wait on.
    private let seen: Monitor<(events: [LockEvent], outcomes: [TransactionOutcome])>
    private var uidCounter: UInt8 = 0

    init(_ test: XCTestCase, link: String? = nil, clock: String = "system", nfc: LockRunner.NFCSource? = nil) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("lockruntime-tests-\(UUID().uuidString.prefix(8))")
        provisioning = try LockProvisioning(directory: directory, clock: clock)
        service = try LockService(configuration: provisioning.configuration)
        let seen = Monitor<(events: [LockEvent], outcomes: [TransactionOutcome])>(([], []))
        self.seen = seen
        runner = LockRunner(service: service, nfc: nfc ?? .virtual(link: link), ble: nil) { event in seen.withLock { $0.events.append(event) } }
        let runner = self.runner
        runner.onOutcome = { outcome in seen.withLock { $0.outcomes.append(outcome) } }
        test.addTeardownBlock { [directory] in
            runner.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    var reader: VirtualReader { runner.virtualReader! }
    var events: [LockEvent] { seen.withLock { $0.events } }
    var outcomes: [TransactionOutcome] { seen.withLock { $0.outcomes } }

    /// Waits until `done` holds for the events and outcomes so far (checked under the lock).
    func wait(_ what: String, timeout: TimeInterval = 10,
              until done: (_ events: [LockEvent], _ outcomes: [TransactionOutcome]) -> Bool) throws {
        try seen.wait(until: Date().addingTimeInterval(timeout), for: { done($0.events, $0.outcomes) }) { s, ready in
            if !ready { throw Timeout(what: what, events: s.events.suffix(8).map(\.line)) }
        }
    }

    func waitForMessage(_ text: String, count: Int = 1, timeout: TimeInterval = 10) throws {
        try wait("\(count)× event '\(text)'", timeout: timeout) { events, _ in
            events.filter { $0.message.contains(text) }.count >= count
        }
    }

    /// Places `card` in the field, waits for the lock's decision, takes the card out and waits
    /// until the loop has seen it leave (so the next tap is a fresh arrival).
    @discardableResult
    func tap(_ card: APDUResponder, on reader: VirtualReader? = nil) throws -> TransactionOutcome {
        let reader = reader ?? self.reader
        let before = outcomes.count
        let removedBefore = events.filter { $0.radioEvent == .cardRemoved }.count
        uidCounter &+= 1
        try reader.insert(card, uid: [0x04, 0x4C, 0x52, 0x54, 0x00, 0x00, uidCounter])
        try wait("a decision") { _, outcomes in outcomes.count > before }
        let outcome = outcomes[before]
        reader.remove()
        try wait("the card leaving") { events, _ in events.filter { $0.radioEvent == .cardRemoved }.count > removedBefore }
        return outcome
    }

    func start() throws -> RunningLock {
        try runner.start()
        try waitForMessage("opened")
        return self
    }

    /// The audit log as the lock wrote it, its MAC chain verified.
    func audit() throws -> [AuditEntry] {
        let (entries, damage) = try AuditLog.verify(directory: service.configuration.stateDirectoryPath)
        XCTAssertNil(damage, "audit chain damaged")
        return entries
    }

    struct Timeout: Error, CustomStringConvertible {
        var what: String
        var events: [String]
        var description: String { "timed out waiting for \(what); last events: \(events.joined(separator: " | "))" }
    }
}

