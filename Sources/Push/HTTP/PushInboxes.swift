import Crypto
import Foundation
import Synchronization

/// The phones that reach the relay over HTTP (`phone run`): each token has an inbox the phone
/// long-polls; the relay delivers into it. At most 100 messages wait per inbox, 10,000 inboxes,
/// and their data is bounded per inbox and in total (`maxInboxBytes`, `maxTotalBytes`): a push
/// past either is refused when it is sent (APNs 429 TooManyRequests, FCM 429 QUOTA_EXCEEDED),
/// until the phone collects what waits.
///
/// A token is public (anyone who pushes knows it), so an inbox is its opener's: the phone opens it
/// with a secret of its own (`Authorization: Bearer SECRET`), and reading, draining, changing the
/// app state, retiring it and its wake-up subscriptions all need that secret again.
public final class PushInboxes: Sendable {
    private struct State {
        var boxes: [String: [[String: String]]] = [:]
        var states: [String: PushAppState] = [:]
        /// SHA-256 of each inbox's secret.
        var secrets: [String: [UInt8]] = [:]
        /// Bytes of data waiting per inbox, and in all of them.
        var bytes: [String: Int] = [:]
        var totalBytes = 0
    }
    private let state = Mutex(State())

    public let relay: PushRelay
    public let maxInboxBytes: Int
    public let maxTotalBytes: Int

    /// Defaults: 256 KiB per inbox (64 full-size pushes), 64 MiB in all.
    public init(relay: PushRelay, maxInboxBytes: Int = 256 * 1024, maxTotalBytes: Int = 64 << 20) {
        self.relay = relay; self.maxInboxBytes = maxInboxBytes; self.maxTotalBytes = maxTotalBytes
    }

    /// The size a message takes in an inbox: its data as compact JSON.
    static func size(_ data: [String: String]) -> Int { PushRules.compactJSON(data).utf8.count }

    /// Why a message of `bytes` may not join `token`'s inbox now, or nil.
    public func refusal(_ token: String, bytes: Int) -> PushRefusal? {
        locked { s in Self.refusal(token, bytes: bytes, in: s, maxInbox: maxInboxBytes, maxTotal: maxTotalBytes) }
    }

    private static func refusal(_ token: String, bytes: Int, in s: State, maxInbox: Int, maxTotal: Int) -> PushRefusal? {
        let held = s.bytes[token] ?? 0
        if held + bytes > maxInbox {
            return .inboxFull("the inbox of this token holds \(held) bytes not yet collected; \(bytes) more would pass its \(maxInbox)")
        }
        if s.totalBytes + bytes > maxTotal {
            return .inboxFull("the relay's inboxes hold \(s.totalBytes) bytes not yet collected; \(bytes) more would pass their \(maxTotal)")
        }
        return nil
    }

    private func locked<T, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T { try state.withLock { (s: inout State) throws(E) -> T in try body(&s) } }

    /// A phone's inbox secret, as `Authorization: Bearer SECRET` carries it: 16…256 printable bytes.
    public static func isValidSecret(_ secret: String) -> Bool {
        (16...256).contains(secret.utf8.count) && secret.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    static func digest(_ secret: String) -> [UInt8] { Array(SHA256.hash(data: Array(secret.utf8))) }

    /// Whether `secret` is the one `token`'s inbox was opened with (false when there is no such inbox).
    public func owns(_ token: String, secret: String?) -> Bool {
        guard let secret else { return false }
        let d = Self.digest(secret)
        return locked { s in s.secrets[token] == d }
    }

    /// Whether `token` is an inbox of this relay (its wake-up subscriptions then need its secret).
    public func isInbox(_ token: String) -> Bool { locked { s in s.boxes[token] != nil } }

    /// Registers the token with the relay, owned by `secret` (again, with the same secret: only the
    /// app state changes; with another: refused).
    public func open(_ token: String, state: PushAppState = .background, secret: String) throws(PushRefusal) {
        guard Self.isValidSecret(secret) else {
            throw .invalidArgument("open an inbox with Authorization: Bearer SECRET, 16…256 printable bytes of the phone's own")
        }
        let d = Self.digest(secret)
        let known = try locked { (s: inout State) throws(PushRefusal) -> Bool in
            if let held = s.secrets[token], held != d { throw .forbidden("the inbox of this token was opened with another secret") }
            if s.boxes[token] == nil && s.boxes.count >= 10_000 { throw .invalidArgument("the relay holds 10,000 phone inboxes already") }
            let known = s.boxes[token] != nil
            if !known { s.boxes[token] = []; s.secrets[token] = d }
            s.states[token] = state
            return known
        }
        if known { return }
        do {
            try relay.register(token: token, device: PushDevice(appState: { [weak self] in self?.state(token) ?? .background },
                                                                admit: { [weak self] bytes in self?.refusal(token, bytes: bytes) }) { [weak self] token, data in
                self?.put(token, data) ?? false
            })
        } catch {
            locked { s in Self.remove(token, from: &s) }
            throw error
        }
    }

    /// Retires the token; only its owner may. False when `secret` is not the inbox's.
    @discardableResult
    public func close(_ token: String, secret: String?) -> Bool {
        guard owns(token, secret: secret) else { return false }
        locked { s in Self.remove(token, from: &s) }
        relay.unregister(token: token)
        return true
    }

    private static func remove(_ token: String, from s: inout State) {
        s.totalBytes -= s.bytes[token] ?? 0
        s.boxes[token] = nil; s.states[token] = nil; s.secrets[token] = nil; s.bytes[token] = nil
    }

    func state(_ token: String) -> PushAppState { locked { s in s.states[token] ?? .background } }

    /// Bytes waiting in `token`'s inbox, and in all inboxes.
    public func heldBytes(_ token: String) -> (inbox: Int, total: Int) { locked { s in (s.bytes[token] ?? 0, s.totalBytes) } }

    /// Queues a delivered message; false (not handled) when there is no such inbox or it would
    /// pass a bound (a message delayed past the check at sending).
    func put(_ token: String, _ data: [String: String]) -> Bool {
        let size = Self.size(data)
        return locked { s in
            guard s.boxes[token] != nil,
                  Self.refusal(token, bytes: size, in: s, maxInbox: maxInboxBytes, maxTotal: maxTotalBytes) == nil else { return false }
            s.boxes[token]!.append(data)
            s.bytes[token, default: 0] += size; s.totalBytes += size
            if s.boxes[token]!.count > 100 {
                let gone = Self.size(s.boxes[token]!.removeFirst())
                s.bytes[token]! -= gone; s.totalBytes -= gone
            }
            return true
        }
    }

    /// What waits for `token`, waiting up to `wait` seconds for something; nil: no such inbox.
    public func collect(_ token: String, wait: TimeInterval) async -> [[String: String]]? {
        let deadline = Date().addingTimeInterval(wait)
        while true {
            let taken = locked { (s: inout State)  -> [[String: String]]? in
                guard let box = s.boxes[token] else { return nil }
                s.boxes[token] = []
                s.totalBytes -= s.bytes[token] ?? 0; s.bytes[token] = 0
                return box
            }
            guard let taken else { return nil }
            if !taken.isEmpty || Date() >= deadline { return taken }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
    }
}
