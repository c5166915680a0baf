import Foundation
import Synchronization
import Push
import TrustModel

/// A phone's push side: its registration token, what its app is doing, and the handler every
/// push goes through (Tapkey `receivedPushNotification`: returns whether the trust SDK handled it;
/// other SDKs' pushes are ignored and reported as not handled). A trust push makes the phone poll
/// (the push is a hint, the poll is the truth); a wake-up message is recorded, and one that came
/// without its data (`TooBig`, `OnlyKeys`) makes the phone read the node explicitly.
public final class PhonePush: Sendable {
    private struct State {
        var _token: String
        var _history: [String] = []
        var _state: PushAppState = .background
        var generation = 0
    }
    private let state: Mutex<State>

    public let phone: VirtualPhone
    public let relay: PushRelay
    public let notifier: TrustPushNotifier
    /// The explicit read after a message without its data (the wake-up service's GET).
    public var readExplicitly: (@Sendable (_ app: String, _ sp: String) async -> String?)? {
        get { hooks.withLock { $0.readExplicitly } }
        set { hooks.withLock { $0.readExplicitly = newValue } }
    }
    /// Called with (old, new) when the token rotates, after the new one is registered and before
    /// the old one is dropped (wake-up: subscribe the new id, then unsubscribe the old).
    public var onTokenRotation: (@Sendable (_ old: String, _ new: String) async -> Void)? {
        get { hooks.withLock { $0.onTokenRotation } }
        set { hooks.withLock { $0.onTokenRotation = newValue } }
    }
    private struct Hooks {
        var readExplicitly: (@Sendable (_ app: String, _ sp: String) async -> String?)?
        var onTokenRotation: (@Sendable (_ old: String, _ new: String) async -> Void)?
    }
    private let hooks: Mutex<Hooks>

    public init(phone: VirtualPhone, relay: PushRelay, notifier: TrustPushNotifier) throws(PushRefusal) {
        self.phone = phone; self.relay = relay; self.notifier = notifier
        let token = Self.token(for: phone.id, generation: 0)
        state = Mutex(State(_token: token, _history: [token]))
        hooks = Mutex(Hooks())
        try relay.register(token: token, device: device())
        notifier.register(device: phone.id, token: token)
    }

    private func locked<T, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T { try state.withLock { (s: inout State) throws(E) -> T in try body(&s) } }

    public var token: String { locked { s in s._token } }
    /// Every token this phone has had, oldest first (at most 64).
    public var tokenHistory: [String] { locked { s in s._history } }
    public var appState: PushAppState { locked { s in s._state } }

    static func token(for device: String, generation: Int) -> String {
        let safe = String(device.unicodeScalars.filter { $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }.map(Character.init).prefix(64))
        return "\(safe)-\(generation)-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
    }

    func device() -> PushDevice {
        PushDevice(isReachable: { [weak phone = self.phone] in phone?.isOnline ?? false },
                   appState: { [weak self] in self?.appState ?? .forceQuit },
                   deliver: { [weak self] _, data in await self?.receive(data) ?? false })
    }

    /// The user swiped the app away: background pushes no longer wake it.
    public func forceQuit() {
        locked { s in s._state = .forceQuit }
        phone.record(.forceQuit)
    }

    /// The user opened the app (foreground) or left it (background).
    public func setState(_ state: PushAppState) { locked { s in s._state = state } }

    /// Token rotation (FCM `onTokenRefresh`, Tapkey `updateRegistrationToken`): the new token is
    /// registered with the relay and the trust service before the old one is dropped, so no push
    /// falls between the two.
    @discardableResult
    public func rotateToken() async throws(PushRefusal) -> String {
        let (old, new) = locked { (s: inout State)  -> (String, String) in
            s.generation += 1
            return (s._token, Self.token(for: phone.id, generation: s.generation))
        }
        try relay.register(token: new, device: device())
        notifier.register(device: phone.id, token: new)
        locked { s in s._token = new; s._history = Array((s._history + [new]).suffix(64)) }
        await onTokenRotation?(old, new)
        notifier.unregister(device: phone.id, token: old)
        relay.unregister(token: old)
        phone.record(.tokenRotated, nil, "\(old.prefix(24))… → \(new.prefix(24))…")
        return new
    }

    /// Every push the app receives goes here; true = the trust SDK handled it.
    public func receive(_ data: [String: String]) async -> Bool {
        if data[ApprovalPush.identifier] != nil { return await receiveApproval(data) }
        if data[TrustPushNotifier.identifier] != nil {
            let trigger = data["trigger"].flatMap(PollTrigger.init(rawValue:)) ?? .manual
            phone.record(.push, trigger, "trust")
            if phone.options.pollOnTriggers && phone.isLoggedIn { await phone.poll(trigger: trigger) }
            return true
        }
        if let t = data["t"], let app = data["app"], let sp = data["sp"] {
            if t == "revoke" {
                phone.record(.wakeUpRevoked, nil, "\(data["r"] ?? "?") \(app)\(sp)")
                return true
            }
            let status = data["s"] ?? "OK"
            phone.record(.wakeUp, nil, "\(t) \(status) \(app)\(sp)")
            if status == "TooBig" || status == "OnlyKeys", let read = readExplicitly {
                let value = await read(app, sp)
                phone.record(.wakeUpRead, nil, "\(app)\(sp): \(value?.utf8.count ?? 0) bytes")
            }
            return true
        }
        phone.record(.pushNotHandled, nil, PushRulesPreview.preview(data))
        return false
    }
}

enum PushRulesPreview {
    static func preview(_ data: [String: String]) -> String { String(PushRules.compactJSON(data).prefix(120)) }
}
