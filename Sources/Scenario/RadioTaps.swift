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
public final class RadioTap: TapTransport, Sendable {
    public enum Radio: String, Sendable, CaseIterable { case pn532, vpicc, ble }
    public let radio: Radio
    public var name: String { radio.rawValue }
    public var interface: RadioInterface { radio == .ble ? .ble : .nfc }
    /// How long one tap may take before it is an environment failure.
    public let timeout: TimeInterval

    /// The locks started so far and the BLE controllers they share. `LockRunner` is not Sendable:
    /// it lives only here, started and stopped with the lock held.
    private struct State {
        var runners: [ObjectIdentifier: (runner: LockRunner, running: Running)] = [:]
        var controllers: VirtualControllers?
    }
    private let state = Mutex(State())

    /// What a tap waits on: the phone's radio, and what the lock's runner reported so far.
    final class Running: Sendable {
        struct Seen: Sendable {
            var outcomes: [TransactionOutcome] = []
            var removals = 0
            var opened = false
        }
        let phoneRadio: any PhoneRadio
        /// Written by the runner's callbacks (its reader threads), waited on by `tap`.
        let seen = Monitor(Seen())
        init(_ phoneRadio: any PhoneRadio) { self.phoneRadio = phoneRadio }
    }

    public init(_ radio: Radio, timeout: TimeInterval = 30) { self.radio = radio; self.timeout = timeout }

    public struct RadioError: Error, CustomStringConvertible { public var description: String }

    /// The lock's runner and the phone's radio for `service`, started on first use.
    private func running(_ service: LockService) throws -> Running {
        try state.withLock { state throws -> Running in
            if let r = state.runners[ObjectIdentifier(service)] { return r.running }
            let phoneSpec: PhoneRadioSpec
            var bleSpec: String?
            switch radio {
            case .pn532:
                phoneSpec = .pn532(link: nil)
            case .vpicc:
                guard state.runners.isEmpty else { throw RadioError(description: "PC/SC scenarios take one lock (one vpcd reader)") }
                phoneSpec = .vpicc(host: "127.0.0.1", port: PhoneRadioSpec.vpcdPort)
            case .ble:
                let controllers: VirtualControllers
                if let c = state.controllers { controllers = c } else {
                    do throws(BLEError) { controllers = try VirtualControllers.bumble() } catch {
                        throw RadioError(description: "cannot start Bumble's virtual controllers (pip install bumble): \(error.reason)")
                    }
                    state.controllers = controllers
                }
                guard state.runners.isEmpty else { throw RadioError(description: "BLE scenarios take one lock (one Bumble link)") }
                bleSpec = controllers.spec(0)
                phoneSpec = .ble(transport: controllers.spec(1))
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
                r.seen.withLock { seen in
                    if event.radioEvent == .cardRemoved { seen.removals += 1 }
                    if event.radioEvent == .readerOpened || event.radioEvent == .advertising { seen.opened = true }
                }
            }
            runner.startGrace = { _ in 5 }
            let r = Running(phoneRadio)
            box.running.withLock { $0 = r }
            runner.onOutcome = { outcome in r.seen.withLock { $0.outcomes.append(outcome) } }
            do { try runner.start() } catch { phoneRadio.close(); throw error }
            state.runners[ObjectIdentifier(service)] = (runner, r)
            return r
        }
    }

    public func tap(_ phone: PhoneResponder, on service: LockService) throws -> TransactionOutcome {
        let r = try running(service)
        let (before, removedBefore) = r.seen.withLock { ($0.outcomes.count, $0.removals) }
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

    /// Waits (at most `timeout`) until what the runner reported satisfies `done`; its outcomes then.
    private func wait(_ r: Running, _ what: String, until done: (Running.Seen) -> Bool) throws -> [TransactionOutcome] {
        let outcomes = r.seen.wait(until: Date().addingTimeInterval(timeout), for: done) { seen, ready in ready ? seen.outcomes : nil }
        guard let outcomes else { throw RadioError(description: "timed out after \(Int(timeout)) s waiting for \(what)") }
        return outcomes
    }

    public func close() {
        // The runners stop with the lock held: their callbacks reach only `Running`, never `state`.
        let controllers = state.withLock { state -> VirtualControllers? in
            for (runner, running) in state.runners.values { runner.stop(); running.phoneRadio.close() }
            state.runners.removeAll()
            defer { state.controllers = nil }
            return state.controllers
        }
        controllers?.stop()
    }
}

/// The running lock, set once it exists; read by the lock's event callback.
private final class RunningBox: Sendable { let running = Mutex<RadioTap.Running?>(nil) }
