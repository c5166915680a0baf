import AccessProtocol
import BLE
import ByteCore
import Foundation
import Synchronization
import LockRuntime
import PhoneRadios
import PhoneSeam
import TrustPhone

/// Taps over a real radio: each lock runs its real `LockRunner` (the loop `lock run` uses), and
/// the phone comes through its `PhoneRadio` from the registry (`PhoneRadioSpec`) — a virtual
/// PN532 on a pty that the lock's real libnfc opens, a card in pcscd's virtual reader (vpicc →
/// vpcd) that the lock reads through pcsc-lite, or a BLE central on one of two Bumble virtual
/// controllers. The outcome is the one the runner reports; the runner's typed radio
/// events (`LockEvent.RadioEvent`), not its log text, say when the lock saw the phone leave.
public final class RadioTap: TapTransport, @unchecked Sendable {
    public enum Radio: String, Sendable, CaseIterable { case pn532, vpicc, ble }
    public let radio: Radio
    public var name: String { radio.rawValue }
    public var interface: RadioInterface { radio == .ble ? .ble : .nfc }
    private var runners: [ObjectIdentifier: Running] = [:]
    private var controllers: VirtualControllers?
    private let lock = NSLock()
    /// How long one tap may take before it is an environment failure.
    public var timeout: TimeInterval = 30

    final class Running: @unchecked Sendable {
        let runner: LockRunner
        let phoneRadio: any PhoneRadio
        let condition = NSCondition()
        var outcomes: [TransactionOutcome] = []
        var removals = 0
        var opened = false
        init(_ runner: LockRunner, _ phoneRadio: any PhoneRadio) { self.runner = runner; self.phoneRadio = phoneRadio }
    }

    public init(_ radio: Radio) { self.radio = radio }

    public struct RadioError: Error, CustomStringConvertible { public var description: String }

    /// The lock's runner and the phone's radio for `service`, started on first use.
    private func running(_ service: LockService) throws -> Running {
        lock.lock(); defer { lock.unlock() }
        if let r = runners[ObjectIdentifier(service)] { return r }
        let phoneSpec: PhoneRadioSpec
        var bleSpec: String?
        switch radio {
        case .pn532:
            phoneSpec = .pn532(link: nil)
        case .vpicc:
            guard runners.isEmpty else { throw RadioError(description: "PC/SC scenarios take one lock (one vpcd reader)") }
            phoneSpec = .vpicc(host: "127.0.0.1", port: PhoneRadioSpec.vpcdPort)
        case .ble:
            if controllers == nil {
                do { controllers = try VirtualControllers.bumble() } catch {
                    throw RadioError(description: "cannot start Bumble's virtual controllers (pip install bumble): \(error.reason)")
                }
            }
            guard runners.isEmpty else { throw RadioError(description: "BLE scenarios take one lock (one Bumble link)") }
            bleSpec = controllers!.spec(0)
            phoneSpec = .ble(transport: controllers!.spec(1))
        }
        let phoneRadio: any PhoneRadio
        do { phoneRadio = try phoneSpec.radio() } catch { throw RadioError(description: "the phone's radio \(phoneSpec): \(error)") }
        let box = RunningBox()
        // The lock's reader that reaches this phone radio.
        let nfc: LockRunner.NFCSource? = switch phoneRadio {
        case let pn532 as VirtualPN532PhoneRadio: .connstring(pn532.address)
        case let vpicc as VirtualICCPhoneRadio: .pcsc(reader: vpicc.readerName)
        default: nil
        }
        let runner = LockRunner(service: service, nfc: nfc, ble: bleSpec) { event in
            guard let r = box.running.withLock({ $0 }) else { return }
            r.condition.lock()
            if event.radioEvent == .cardRemoved { r.removals += 1 }
            if event.radioEvent == .readerOpened || event.radioEvent == .advertising { r.opened = true }
            r.condition.broadcast(); r.condition.unlock()
        }
        runner.startGrace = { _ in 5 }
        let r = Running(runner, phoneRadio)
        box.running.withLock { $0 = r }
        runner.onOutcome = { outcome in
            r.condition.lock(); r.outcomes.append(outcome); r.condition.broadcast(); r.condition.unlock()
        }
        do { try runner.start() } catch { phoneRadio.close(); throw error }
        runners[ObjectIdentifier(service)] = r
        return r
    }

    public func tap(_ phone: PhoneResponder, on service: LockService) throws -> TransactionOutcome {
        let r = try running(service)
        r.condition.lock()
        let before = r.outcomes.count, removedBefore = r.removals
        r.condition.unlock()
        guard r.phoneRadio.waitForLock(timeout: timeout) else {
            throw RadioError(description: "the lock did not open \(r.phoneRadio.address) within \(Int(timeout)) s")
        }
        do { _ = try r.phoneRadio.present(phone, timeout: timeout) } catch {
            throw RadioError(description: "\(radio == .ble ? "BLE transaction" : "the phone's radio"): \(error)")
        }
        let outcomes = try wait(r, "a decision over \(r.phoneRadio.spec)") { $0.outcomes.count > before }
        if radio != .ble { _ = try? wait(r, "the card leaving the field") { $0.removals > removedBefore } }
        return outcomes[before]
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
        for r in all { r.runner.stop(); r.phoneRadio.close() }
        controllers?.stop()
        controllers = nil
    }
}

/// The running lock, set once it exists; read by the lock's event callback.
private final class RunningBox: Sendable { let running = Mutex<RadioTap.Running?>(nil) }
