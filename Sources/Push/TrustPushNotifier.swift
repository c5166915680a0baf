import Foundation
import Synchronization
import Logging
import Metrics
import TrustModel

/// The trust service's side of push (Tapkey: "Tapkey will notify clients when Mobile Keys have
/// been created, changed, or revoked"): device → registered push tokens, and for each affected
/// device of a `TrustChange` a background data push naming why it should poll. The push is a
/// hint: the poll it triggers is what changes the phone.
public final class TrustPushNotifier: Sendable {
    private struct State {
        var tokens: [String: [String]] = [:]
    }
    private let state = Mutex(State())

    /// The data key a LockBench trust push carries (Tapkey's `TapkeyPushNotificationIdentifier`):
    /// a phone hands every push to its trust SDK, which handles only these.
    public static let identifier = "lockbench-trust"

    public let relay: any PushSending

    /// Where refused pushes are reported (`trust serve`); a push is a hint, so a refusal is logged,
    /// never raised.
    public let logger: Logger?

    /// Where registrations are kept across restarts (`trust serve`: the site's database); nil
    /// keeps them in memory only (scenarios, benchmarks).
    public let storage: (any TrustStorage)?

    public init(relay: any PushSending, logger: Logger? = nil, storage: (any TrustStorage)? = nil) {
        self.relay = relay; self.logger = logger; self.storage = storage
    }

    static let settingPrefix = "push-tokens."

    /// Counts what became of a push for the operator's metrics: `lockbench_trust_pushes_sent_total`,
    /// `lockbench_trust_push_failures_total{reason}` (`PushRefusal.metricReason`).
    static func count(_ failure: PushRefusal?) {
        if let failure { Counter(label: "lockbench_trust_push_failures_total", dimensions: [("reason", failure.metricReason)]).increment() }
        else { Counter(label: "lockbench_trust_pushes_sent_total").increment() }
    }

    /// A push's entry in the device's history: sent, or refused and why (`detail`: what it was for).
    static func event(_ device: String, _ failure: PushRefusal?, _ about: String?) -> DeviceEvent {
        DeviceEvent(seq: 0, device: device, kind: failure == nil ? .pushSent : .pushFailed, at: Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)),
                    reason: failure?.metricReason, detail: about)
    }

    /// Stores pushes' history in the site's database (none kept without one), one write per batch
    /// of pushes; a failure is logged: a push is a hint, and so is its bookkeeping.
    private func record(_ events: [DeviceEvent]) async {
        guard let storage, !events.isEmpty else { return }
        do { try await storage.recordDeviceEvents(events) } catch { logger?.warning("recording \(events.count) push events: \(error)") }
    }

    /// Registers a token and answers only once it is stored (`PUT /v1/push-token`): a restart of
    /// the service does not forget the phone until its next login.
    public func registerDurably(device: String, token: String) async throws {
        register(device: device, token: token)
        try await persist(device)
    }

    /// Reads the registrations stored by earlier runs (at start, before serving).
    @discardableResult
    public func restore() async throws -> Int {
        guard let storage else { return 0 }
        let rows = try await storage.read { tx in try await tx.settings(prefix: Self.settingPrefix, limit: 100_000) }
        var restored = 0
        for (name, value) in rows {
            let device = String(name.dropFirst(Self.settingPrefix.count))
            guard let tokens = try? JSONDecoder().decode([String].self, from: Data(value.utf8)) else { continue }
            for token in tokens.prefix(8) where PushTokenRules.isValid(token) { register(device: device, token: token); restored += 1 }
        }
        return restored
    }

    /// Writes `device`'s tokens as they are now (none: the row goes).
    private func persist(_ device: String) async throws {
        guard let storage else { return }
        let tokens = tokens(of: device)
        let text = String(decoding: try JSONEncoder().encode(tokens), as: UTF8.self)
        try await storage.write { tx in
            if tokens.isEmpty { try await tx.deleteSetting(Self.settingPrefix + device) } else { try await tx.setSetting(Self.settingPrefix + device, text) }
        }
    }

    private func locked<T, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T { try state.withLock { (s: inout State) throws(E) -> T in try body(&s) } }

    /// Registers a token for a device (Tapkey `updateRegistrationToken`); at most 8 per device.
    public func register(device: String, token: String) {
        locked { s in
            var list = s.tokens[device] ?? []
            if !list.contains(token) { list.append(token) }
            s.tokens[device] = Array(list.suffix(8))
        }
    }

    public func unregister(device: String, token: String) { locked { s in s.tokens[device]?.removeAll { $0 == token } } }

    public func tokens(of device: String) -> [String] { locked { s in s.tokens[device] ?? [] } }

    /// The data of a trust push: the identifier, the device, and the poll trigger. Well under
    /// 4096 bytes: device ids are bounded by the service.
    public static func data(device: String, trigger: PollTrigger) -> [String: String] {
        [identifier: "1", "device": device, "trigger": trigger.rawValue]
    }

    /// Queues one push per token of every affected device; a dead token is forgotten. Returns
    /// the number queued.
    @discardableResult
    public func notify(_ change: TrustChange) async -> Int {
        await notify(change.affected.map { ($0.device, $0.trigger) })
    }

    /// Pushes for every change a shared store announces (`TrustChangeFeed`: any instance's,
    /// this one's included) to the tokens registered with this notifier. A phone subscribes through
    /// one instance, so each change reaches each subscribed phone exactly once, whichever instance
    /// made it. Subscribes before returning; runs until the feed ends or the task is cancelled.
    public func follow(_ feed: any TrustChangeFeed) -> Task<Void, Never> {
        let changes = feed.changes()
        return Task { for await change in changes { await self.notify(change) } }
    }

    /// Pushes `data` to every token of each of `devices` (approval requests and answers); returns
    /// the number queued.
    @discardableResult
    public func push(_ data: [String: String], to devices: [String]) async -> Int {
        var queued = 0
        var history = [DeviceEvent]()
        for device in devices {
            for token in tokens(of: device) {
                do {
                    _ = try await relay.send(PushMessage(token: token, data: data))
                    queued += 1
                    Self.count(nil)
                    history.append(Self.event(device, nil, data["type"] ?? data["pushType"]))
                } catch {
                    Self.count(error)
                    history.append(Self.event(device, error, data["type"] ?? data["pushType"]))
                    if case .unregistered = error { unregister(device: device, token: token) }
                    logger?.warning("push to \(device) refused: \(error)")
                }
            }
        }
        await record(history)
        return queued
    }

    /// The same for a list of (device, why it should poll).
    @discardableResult
    public func notify(_ affected: [(device: String, trigger: PollTrigger)]) async -> Int {
        var queued = 0
        var history = [DeviceEvent]()
        for a in affected {
            for token in tokens(of: a.device) {
                do {
                    _ = try await relay.send(PushMessage(token: token, data: Self.data(device: a.device, trigger: a.trigger),
                                                     collapseID: "trust-\(a.device)".utf8.count <= PushRules.maxCollapseIDBytes ? "trust-\(a.device)" : nil))
                    queued += 1
                    Self.count(nil)
                    history.append(Self.event(a.device, nil, a.trigger.rawValue))
                } catch {
                    Self.count(error)
                    history.append(Self.event(a.device, error, a.trigger.rawValue))
                    if case .unregistered = error {
                        unregister(device: a.device, token: token)
                        do { try await persist(a.device) } catch { logger?.warning("forgetting a dead push token of \(a.device): \(error)") }
                    }
                    logger?.warning("push to \(a.device) refused: \(error)")
                }
            }
        }
        await record(history)
        return queued
    }
}
