import ByteCore
import Codecs
import Foundation
import Synchronization
import TrustModel

/// What the app on a device is doing, as far as pushes go (iOS: a force-quit app is not woken by
/// background pushes until the user opens it again).
public enum PushAppState: String, Sendable, CaseIterable { case foreground, background, forceQuit = "force-quit" }

/// A device as the relay reaches it: whether it has network now, what its app is doing, and how
/// a message is handed over. `deliver` answers whether the app handled it (Tapkey
/// `receivedPushNotification` → handled or not).
public struct PushDevice: Sendable {
    public var isReachable: @Sendable () -> Bool
    public var appState: @Sendable () -> PushAppState
    public var deliver: @Sendable (_ token: String, _ data: [String: String]) async -> Bool
    /// Why a message whose data is this many bytes (compact JSON) may not be queued for the device
    /// now (its inbox is full), or nil.
    public var admit: @Sendable (_ bytes: Int) -> PushRefusal?
    public init(isReachable: @escaping @Sendable () -> Bool = { true }, appState: @escaping @Sendable () -> PushAppState = { .background },
                admit: @escaping @Sendable (_ bytes: Int) -> PushRefusal? = { _ in nil },
                deliver: @escaping @Sendable (_ token: String, _ data: [String: String]) async -> Bool) {
        self.isReachable = isReachable; self.appState = appState; self.admit = admit; self.deliver = deliver
    }
}

/// Fault injection: what a real push service does to messages on a bad day.
public struct PushFaults: Sendable, Equatable {
    /// Percent of accepted messages silently lost (0…100).
    public var dropPercent: Int = 0
    /// Every message arrives this much later.
    public var delay: TimeInterval = 0
    /// Background pushes delivered per hour to an app in the background; beyond this they are
    /// discarded (iOS budgets background pushes). nil: no budget.
    public var backgroundPerHour: Int?
    public init() {}
}

/// What became of one message, as the relay's log says it.
public struct PushRecord: Sendable, Equatable, CustomStringConvertible {
    public enum Fate: String, Sendable, CaseIterable {
        case queued, delivered, handled, notHandled = "not-handled", dropped, stored, expired
        case discarded // the app was force-quit
        case throttled // over the background budget
        case collapsed // replaced by a newer message with the same collapse id
    }
    public var id: String
    public var at: Date
    public var token: String
    public var fate: Fate
    public var data: [String: String]
    public var description: String {
        "\(RFC3339.format(at)) \(id) \(fate.rawValue) token=\(token.prefix(16)) \(PushRules.compactJSON(data).prefix(200))"
    }
}

/// The relay between backends (the trust service, a wake-up service, a customer's own) and the
/// devices: the rules APNs and FCM publish (`PushRules`), storage for unreachable devices with
/// the time to live and collapse ids, dead tokens, and fault injection. Time comes from the
/// shared clock; delayed and stored messages go out on `deliverDue()`.
public final class PushRelay: Sendable {
    private struct State {
        var devices: [String: PushDevice] = [:]
        var dead: [String: Date] = [:]
        var pending: [Pending] = []
        var backgroundDeliveries: [String: [Date]] = [:]
        var _faults = PushFaults()
        var _log: [PushRecord] = []
        var rng: SplitMix64
        var counter = 0
    }
    private let state: Mutex<State>

    public let clock: any TrustClock

    struct Pending { var id: String; var message: PushMessage; var due: Date; var expires: Date; var stored = false }

    /// `seed` makes fault injection repeatable (the same drops in every run of a scenario).
    public init(clock: any TrustClock = SystemClock(), seed: UInt64 = 0x10CB_E7C4) {
        self.clock = clock; state = Mutex(State(rng: SplitMix64(seed: seed)))
    }

    private func locked<T, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T { try state.withLock { (s: inout State) throws(E) -> T in try body(&s) } }

    public var faults: PushFaults {
        get { locked { s in s._faults } }
        set { locked { s in s._faults = newValue } }
    }

    /// The newest records last; at most 100,000 kept.
    public var log: [PushRecord] { locked { s in s._log } }

    // MARK: tokens

    /// Registers a device under a token (a token already dead stays dead: tokens are not reused).
    public func register(token: String, device: PushDevice) throws(PushRefusal) {
        let probe = PushMessage(token: token, data: [:])
        if let r = PushRules.check(probe), case .badDeviceToken = r { throw r }
        try locked { (s: inout State) throws(PushRefusal) in
            if let since = s.dead[token] { throw .unregistered(since: since) }
            s.devices[token] = device
        }
    }

    /// The token is dead from now on: APNs answers 410, FCM 404 UNREGISTERED; stored messages go.
    public func unregister(token: String) {
        let now = clock.now()
        locked { s in
            s.devices[token] = nil
            s.dead[token] = now
            s.pending.removeAll { $0.message.token == token }
        }
    }

    public func isRegistered(_ token: String) -> Bool { locked { s in s.devices[token] != nil } }

    // MARK: sending

    /// Accepts a message (or refuses it with the service's reason), applies the faults, and hands
    /// over whatever is due now. The answer is the message id (APNs `apns-id`, FCM `name`).
    @discardableResult
    public func send(_ message: PushMessage) async throws(PushRefusal) -> String {
        if let r = PushRules.check(message) { throw r }
        let now = clock.now()
        let size = PushRules.compactJSON(message.data).utf8.count
        let id = try locked { (s: inout State) throws(PushRefusal) -> String in
            if let since = s.dead[message.token] { throw .unregistered(since: since) }
            guard let device = s.devices[message.token] else { throw .badDeviceToken }
            if let full = device.admit(size) { throw full }
            s.counter += 1
            let id = String(format: "%08X-0000-4000-8000-%012lX", UInt32(truncatingIfNeeded: s.rng.next()), s.counter)
            Self.append(PushRecord(id: id, at: now, token: message.token, fate: .queued, data: message.data), to: &s)
            if s._faults.dropPercent > 0 && Int(s.rng.next() % 100) < s._faults.dropPercent {
                Self.append(PushRecord(id: id, at: now, token: message.token, fate: .dropped, data: message.data), to: &s)
                return id
            }
            if let c = message.collapseID {
                for p in s.pending where p.message.token == message.token && p.message.collapseID == c {
                    Self.append(PushRecord(id: p.id, at: now, token: p.message.token, fate: .collapsed, data: p.message.data), to: &s)
                }
                s.pending.removeAll { $0.message.token == message.token && $0.message.collapseID == c }
            }
            let due = now.addingTimeInterval(s._faults.delay)
            s.pending.append(Pending(id: id, message: message, due: due, expires: due.addingTimeInterval(message.timeToLive)))
            // Bounded storage per token: the oldest goes first.
            if s.pending.count > PushRules.maxStoredPerToken,
               case let mine = s.pending.filter({ $0.message.token == message.token }), mine.count > PushRules.maxStoredPerToken, let oldest = mine.first {
                s.pending.removeAll { $0.id == oldest.id }
                Self.append(PushRecord(id: oldest.id, at: now, token: oldest.message.token, fate: .expired, data: oldest.message.data), to: &s)
            }
            return id
        }
        await deliverDue()
        return id
    }

    /// Delivers every message that is due to a reachable device, expires the ones past their time
    /// to live (a TTL-0 message to an unreachable device is never stored), and keeps the rest.
    public func deliverDue() async {
        let now = clock.now()
        let out = locked { (s: inout State)  -> [(Pending, PushDevice)] in
            var out = [(Pending, PushDevice)]()
            var keep = [Pending]()
            for var p in s.pending {
                guard p.due <= now else { keep.append(p); continue }
                guard let device = s.devices[p.message.token] else { continue }
                // TTL 0: now or never (judged by reachability, not by the clock that moved on).
                if p.message.timeToLive == 0 ? !device.isReachable() : now > p.expires {
                    Self.append(PushRecord(id: p.id, at: now, token: p.message.token, fate: .expired, data: p.message.data), to: &s)
                    continue
                }
                guard device.isReachable() else {
                    if !p.stored {
                        p.stored = true
                        Self.append(PushRecord(id: p.id, at: now, token: p.message.token, fate: .stored, data: p.message.data), to: &s)
                    }
                    keep.append(p)
                    continue
                }
                let state = device.appState()
                if p.message.background && state == .forceQuit {
                    Self.append(PushRecord(id: p.id, at: now, token: p.message.token, fate: .discarded, data: p.message.data), to: &s)
                    continue
                }
                if p.message.background && state == .background, let budget = s._faults.backgroundPerHour {
                    var recent = (s.backgroundDeliveries[p.message.token] ?? []).filter { now.timeIntervalSince($0) < 3600 }
                    if recent.count >= budget {
                        s.backgroundDeliveries[p.message.token] = recent
                        Self.append(PushRecord(id: p.id, at: now, token: p.message.token, fate: .throttled, data: p.message.data), to: &s)
                        continue
                    }
                    recent.append(now)
                    s.backgroundDeliveries[p.message.token] = recent
                }
                Self.append(PushRecord(id: p.id, at: now, token: p.message.token, fate: .delivered, data: p.message.data), to: &s)
                out.append((p, device))
            }
            s.pending = keep
            return out
        }
        for (p, device) in out {
            let handled = await device.deliver(p.message.token, p.message.data)
            locked { s in Self.append(PushRecord(id: p.id, at: clock.now(), token: p.message.token, fate: handled ? .handled : .notHandled, data: p.message.data), to: &s) }
        }
    }

    /// When the next delayed message falls due (for a virtual clock to stop there).
    public var nextDue: Date? { locked { s in s.pending.filter { $0.due > clock.now() }.map(\.due).min() } }

    /// Messages waiting (delayed, or stored for an unreachable device).
    public var pendingCount: Int { locked { s in s.pending.count } }

    private static func append(_ r: PushRecord, to s: inout State) {
        s._log.append(r)
        if s._log.count > 100_000 { s._log.removeFirst(s._log.count - 100_000) }
    }
}

