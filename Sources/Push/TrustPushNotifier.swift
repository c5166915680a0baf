import Foundation
import Synchronization
import Logging
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

    public init(relay: any PushSending, logger: Logger? = nil) { self.relay = relay; self.logger = logger }

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

    /// The same for a list of (device, why it should poll).
    @discardableResult
    public func notify(_ affected: [(device: String, trigger: PollTrigger)]) async -> Int {
        var queued = 0
        for a in affected {
            for token in tokens(of: a.device) {
                do {
                    _ = try await relay.send(PushMessage(token: token, data: Self.data(device: a.device, trigger: a.trigger),
                                                     collapseID: "trust-\(a.device)".utf8.count <= PushRules.maxCollapseIDBytes ? "trust-\(a.device)" : nil))
                    queued += 1
                } catch {
                    if case .unregistered = error { unregister(device: a.device, token: token) }
                    logger?.warning("push to \(a.device) refused: \(error)")
                }
            }
        }
        return queued
    }
}
