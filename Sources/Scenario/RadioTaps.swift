import AccessProtocol
import BLE
import ByteCore
import Foundation
import LockRuntime
import TrustPhone
import VirtualPN532

/// Taps over a real radio: each lock runs its real `LockRunner` (the loop `lock run` uses), and
/// the phone enters its field — a virtual PN532 on a pty that the real libnfc drives, or a BLE
/// link between two Bumble virtual controllers. The outcome is the one the runner reports.
public final class RadioTap: TapTransport, @unchecked Sendable {
    public enum Radio: String, Sendable { case pn532, ble }
    public let radio: Radio
    public var name: String { radio.rawValue }
    public var interface: RadioInterface { radio == .ble ? .ble : .nfc }
    private var runners: [ObjectIdentifier: Running] = [:]
    private var controllers: VirtualControllers?
    private let lock = NSLock()
    private var uid: UInt8 = 0
    /// How long one tap may take before it is an environment failure.
    public var timeout: TimeInterval = 30

    final class Running: @unchecked Sendable {
        let runner: LockRunner
        let condition = NSCondition()
        var outcomes: [TransactionOutcome] = []
        var removals = 0
        var opened = false
        init(_ runner: LockRunner) { self.runner = runner }
    }

    public init(_ radio: Radio) { self.radio = radio }

    public struct RadioError: Error, CustomStringConvertible { public var description: String }

    private func running(_ service: LockService) throws -> Running {
        lock.lock(); defer { lock.unlock() }
        if let r = runners[ObjectIdentifier(service)] { return r }
        var bleSpec: String?
        if radio == .ble {
            if controllers == nil {
                do { controllers = try VirtualControllers.bumble() } catch {
                    throw RadioError(description: "cannot start Bumble's virtual controllers (pip install bumble): \(error.reason)")
                }
            }
            guard runners.isEmpty else { throw RadioError(description: "BLE scenarios take one lock (one Bumble link)") }
            bleSpec = controllers!.spec(0)
        }
        let box = RunningBox()
        let runner = LockRunner(service: service, nfc: radio == .pn532 ? .virtual(link: nil) : nil, ble: bleSpec) { event in
            guard let r = box.running else { return }
            r.condition.lock()
            if event.radioEvent == .cardRemoved { r.removals += 1 }
            if event.radioEvent == .readerOpened || event.radioEvent == .advertising { r.opened = true }
            r.condition.broadcast(); r.condition.unlock()
        }
        let r = Running(runner)
        box.running = r
        runner.onOutcome = { outcome in
            r.condition.lock(); r.outcomes.append(outcome); r.condition.broadcast(); r.condition.unlock()
        }
        try runner.start()
        runners[ObjectIdentifier(service)] = r
        return r
    }

    public func tap(_ phone: PhoneResponder, on service: LockService) throws -> TransactionOutcome {
        let r = try running(service)
        r.condition.lock()
        let before = r.outcomes.count, removedBefore = r.removals
        r.condition.unlock()
        switch radio {
        case .pn532:
            guard let reader = r.runner.virtualReader else { throw RadioError(description: "the lock's virtual PN532 did not start") }
            lock.lock(); uid &+= 1; let n = uid; lock.unlock()
            try reader.insert(phone, uid: [0x04, 0x54, 0x52, 0x53, 0x54, 0x00, n])
            defer { reader.remove() }
            let outcome = try wait(r, "a decision over the virtual PN532") { $0.outcomes.count > before }
            reader.remove()
            _ = try? wait(r, "the card leaving the field") { $0.removals > removedBefore }
            return outcome[before]
        case .ble:
            guard let controllers else { throw RadioError(description: "no controllers") }
            let spec: TransportSpec
            do { spec = try TransportSpec(parsing: controllers.spec(1)) } catch { throw RadioError(description: error.reason) }
            let p: BLEPhone
            do {
                p = try BLEPhone(configuration: BLEPhone.Configuration(transport: spec))
                try p.start()
            } catch { throw RadioError(description: "the phone's controller: \(error.reason)") }
            defer { p.stop() }
            do { _ = try p.unlock(with: phone) } catch { throw RadioError(description: "BLE transaction: \(error.reason)") }
            return try wait(r, "a decision over BLE") { $0.outcomes.count > before }[before]
        }
    }

    private func wait(_ r: Running, _ what: String, until done: (Running) -> Bool) throws -> [TransactionOutcome] {
        let deadline = Date().addingTimeInterval(timeout)
        r.condition.lock(); defer { r.condition.unlock() }
        while !done(r) {
            if !r.condition.wait(until: deadline) { throw RadioError(description: "timed out after \(Int(timeout)) s waiting for \(what)") }
        }
        return r.outcomes
    }

    public func close() {
        lock.lock(); let all = runners.values; runners.removeAll(); lock.unlock()
        for r in all { r.runner.stop() }
        controllers?.stop()
        controllers = nil
    }
}

private final class RunningBox: @unchecked Sendable { var running: RadioTap.Running? }
