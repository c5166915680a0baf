import Foundation
import Synchronization
import TrustModel

/// Mobile wake-up: applications (namespaces) each with a data tree, read rules, and
/// subscriptions — the 3-tuple (application, path, device id) covering every child node. A write
/// under a subscribed path sends the device an FCM data message through the relay; a
/// subscription that expires, loses read access, outgrows the limit, or whose application is
/// disabled or deleted is revoked with a `t="revoke"` message.
public final class WakeUpService: Sendable {
    private struct State {
        var namespaces: [String: Namespace] = [:]
    }
    private let state = Mutex(State())

    public struct Key: Hashable, Sendable { public var app: String; public var path: WakeUpPath; public var device: String }
    public struct Subscription: Sendable, Equatable {
        public var key: Key
        public var mode: WakeUpMode
        public var token: String?
        public var expires: Date
    }
    struct Namespace {
        var enabled = true
        var data: WakeUpValue?
        /// Bytes the data holds, kept as writes change it (counted on the written node, so a
        /// write costs its own size, never the tree's).
        var dataBytes = 0
        /// Auth token ("" = no token) → paths it may read (the node and everything under it).
        var readers: [String: [WakeUpPath]] = ["": [WakeUpPath(segments: [])]]
        var subscriptions: [Key: Subscription] = [:]
    }

    public let relay: PushRelay
    public var clock: any TrustClock { relay.clock }
    /// How long a subscription lives unless repeated ("Expiration time is configured through
    /// wake-up settings").
    public let lifetime: TimeInterval
    /// A node whose compact JSON is larger than this can no longer be subscribed (`too_big`).
    public let maxNodeBytes: Int
    /// Subscriptions across all applications, at most.
    public let maxSubscriptions: Int

    /// The data one application may hold, and all of them together: a writer cannot grow the
    /// relay's memory without bound (`storage_full`, HTTP 507).
    public let maxAppDataBytes: Int
    public let maxTotalDataBytes: Int

    public init(relay: PushRelay, lifetime: TimeInterval = 30 * 86400, maxNodeBytes: Int = 1 << 20, maxSubscriptions: Int = 1_000_000,
                maxAppDataBytes: Int = 16 << 20, maxTotalDataBytes: Int = 64 << 20) {
        self.relay = relay; self.lifetime = lifetime; self.maxNodeBytes = maxNodeBytes; self.maxSubscriptions = maxSubscriptions
        self.maxAppDataBytes = maxAppDataBytes; self.maxTotalDataBytes = maxTotalDataBytes
    }

    private func locked<T, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T { try state.withLock { (s: inout State) throws(E) -> T in try body(&s) } }

    // MARK: applications (the console's part)

    public static func checkApp(_ app: String) throws(WakeUpError) {
        guard !app.isEmpty, app.utf8.count <= WakeUpRules.maxAppBytes,
              app.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) && $0.isASCII || $0 == "-" || $0 == "_" }) else {
            throw WakeUpError(.badRequest, "an application name is 1…\(WakeUpRules.maxAppBytes) ASCII letters, digits, - or _")
        }
    }

    /// Creates an application with wake-up enabled and everything readable without a token.
    public func createApplication(_ app: String) throws(WakeUpError) {
        try Self.checkApp(app)
        locked { s in if s.namespaces[app] == nil { s.namespaces[app] = Namespace() } }
    }

    /// Who may read what: `token` ("" = no token) may read `paths` and below (replaces its rules).
    /// Subscriptions that can no longer read are revoked (`permission_denied`).
    public func setReadRule(_ app: String, token: String, paths: [WakeUpPath]) async throws(WakeUpError) {
        try locked { (s: inout State) throws(WakeUpError) in
            guard s.namespaces[app] != nil else { throw WakeUpError(.namespaceDoesNotExist, "no application \"\(app)\"") }
            s.namespaces[app]!.readers[token] = paths.isEmpty ? nil : paths
        }
        await revoke(app) { ns, s in Self.mayRead(ns, token: s.token, s.key.path) ? nil : .permissionDenied }
    }

    /// "Mobile wake-up feature has just been disabled" → every subscription revoked (`disabled`).
    public func setEnabled(_ app: String, _ enabled: Bool) async throws(WakeUpError) {
        try locked { (s: inout State) throws(WakeUpError) in
            guard s.namespaces[app] != nil else { throw WakeUpError(.namespaceDoesNotExist, "no application \"\(app)\"") }
            s.namespaces[app]!.enabled = enabled
        }
        if !enabled { await revoke(app) { _, _ in .disabled } }
    }

    /// "The application database has just been deleted" → revoked (`namespace_does_not_exist`).
    public func deleteApplication(_ app: String) async {
        await revoke(app) { _, _ in .namespaceDoesNotExist }
        _ = locked { s in s.namespaces.removeValue(forKey: app) }
    }

    // MARK: the REST requests

    /// `PUT /.wakeup/<path>?id=&token=&mode=`: registers, or refreshes (same 3-tuple: the mode and
    /// token are replaced and the lifetime starts again). Throws the REST refusal.
    @discardableResult
    public func subscribe(app: String, path: WakeUpPath, device: String, token: String?, mode: WakeUpMode) throws(WakeUpError) -> Subscription {
        guard !device.isEmpty, device.utf8.count <= PushRules.maxTokenBytes else { throw WakeUpError(.badRequest, "id (the FCM device id) is missing or longer than \(PushRules.maxTokenBytes) bytes") }
        let now = clock.now()
        return try locked { (s: inout State) throws(WakeUpError) -> Subscription in
            guard let ns = s.namespaces[app] else { throw WakeUpError(.namespaceDoesNotExist, "no application \"\(app)\"") }
            guard ns.enabled else { throw WakeUpError(.disabled, "mobile wake-up is disabled for \(app)") }
            guard Self.mayRead(ns, token: token, path) else { throw WakeUpError(.permissionDenied, "the read rules do not let \(token == nil ? "an unauthenticated request" : "this token") read \(path)") }
            let size = ns.data?.child(at: path.segments[...])?.encoded().utf8.count ?? 0
            guard size <= maxNodeBytes else { throw WakeUpError(.tooBig, "the data at \(path) is \(size) bytes; at most \(maxNodeBytes) can be subscribed") }
            let key = Key(app: app, path: path, device: device)
            if ns.subscriptions[key] == nil && s.namespaces.values.reduce(0, { $0 + $1.subscriptions.count }) >= maxSubscriptions {
                throw WakeUpError(.tooBig, "the service holds \(maxSubscriptions) subscriptions already")
            }
            let sub = Subscription(key: key, mode: mode, token: token, expires: now.addingTimeInterval(lifetime))
            s.namespaces[app]!.subscriptions[key] = sub
            return sub
        }
    }

    /// `DELETE /.wakeup/<path>?id=&token=`: removes the 3-tuple (absent: nothing to do, still 204);
    /// the token must be the one it was subscribed with.
    public func unsubscribe(app: String, path: WakeUpPath, device: String, token: String?) throws(WakeUpError) {
        try locked { (s: inout State) throws(WakeUpError) in
            guard let ns = s.namespaces[app] else { throw WakeUpError(.namespaceDoesNotExist, "no application \"\(app)\"") }
            let key = Key(app: app, path: path, device: device)
            guard let sub = ns.subscriptions[key] else { return }
            guard sub.token == token else { throw WakeUpError(.permissionDenied, "the token is not the one the subscription was made with") }
            s.namespaces[app]!.subscriptions[key] = nil
        }
    }

    /// Device id refresh, as the tutorial orders it: subscribe the new id to every path the old
    /// one had, then unsubscribe the old.
    public func refreshDevice(app: String, from old: String, to new: String) throws(WakeUpError) {
        let mine = locked { s in s.namespaces[app]?.subscriptions.values.filter { $0.key.device == old } ?? [] }
        for s in mine { try subscribe(app: app, path: s.key.path, device: new, token: s.token, mode: s.mode) }
        for s in mine { try unsubscribe(app: app, path: s.key.path, device: old, token: s.token) }
    }

    /// The explicit read the phone makes when a message came without its data.
    public func read(app: String, path: WakeUpPath, token: String?) throws(WakeUpError) -> WakeUpValue? {
        try locked { (s: inout State) throws(WakeUpError) -> WakeUpValue? in
            guard let ns = s.namespaces[app] else { throw WakeUpError(.namespaceDoesNotExist, "no application \"\(app)\"") }
            guard Self.mayRead(ns, token: token, path) else { throw WakeUpError(.permissionDenied, "the read rules do not allow \(path)") }
            return ns.data?.child(at: path.segments[...])
        }
    }

    public func subscriptions(app: String) -> [Subscription] {
        locked { s in s.namespaces[app]?.subscriptions.values.sorted { ($0.key.path.description, $0.key.device) < ($1.key.path.description, $1.key.device) } ?? [] }
    }

    // MARK: data changes → wake-up messages

    /// Writes `value` (nil removes) at `path`; every subscription on that path, above it, or below
    /// it whose node changed gets its message (by mode); one whose node is now too big is revoked.
    public func write(app: String, path: WakeUpPath, value: WakeUpValue?) async throws(WakeUpError) {
        var out = [(String, [String: String])]()
        try locked { (s: inout State) throws(WakeUpError) in
            guard var ns = s.namespaces[app] else { throw WakeUpError(.namespaceDoesNotExist, "no application \"\(app)\"") }
            let old = ns.data
            // The change in size is the written node's: its new encoding (and its path) against the old.
            let replaced = old?.child(at: path.segments[...])
            let delta = (value.map { $0.encoded().utf8.count + path.description.utf8.count } ?? 0)
                - (replaced.map { $0.encoded().utf8.count + path.description.utf8.count } ?? 0)
            if delta > 0 {
                let total = s.namespaces.values.reduce(0) { $0 + $1.dataBytes }
                guard ns.dataBytes + delta <= maxAppDataBytes else {
                    throw WakeUpError(.storageFull, "\(app) holds \(ns.dataBytes) bytes of data; this write would take it past \(maxAppDataBytes)")
                }
                guard total + delta <= maxTotalDataBytes else {
                    throw WakeUpError(.storageFull, "the relay holds \(total) bytes of data; this write would take it past \(maxTotalDataBytes)")
                }
            }
            ns.dataBytes = max(0, ns.dataBytes + delta)
            ns.data = (ns.data ?? .object([:])).setting(value, at: path.segments[...])
            for s in ns.subscriptions.values where ns.enabled && (path.isWithin(s.key.path) || s.key.path.isWithin(path)) {
                let before = old?.child(at: s.key.path.segments[...]), after = ns.data?.child(at: s.key.path.segments[...])
                guard before != after else { continue }
                let sp = s.key.path.description
                if (after?.encoded().utf8.count ?? 0) > maxNodeBytes {
                    ns.subscriptions[s.key] = nil
                    out.append((s.key.device, WakeUpPayload.revoke(app: app, sp: sp, reason: .tooBig)))
                    continue
                }
                switch s.mode {
                case .noData: out.append((s.key.device, WakeUpPayload.noData(app: app, sp: sp)))
                case .value: out.append((s.key.device, WakeUpPayload.value(app: app, sp: sp, node: after)))
                case .childEvent: out.append((s.key.device, WakeUpPayload.childEvent(app: app, sp: sp, old: before, new: after)))
                }
            }
            s.namespaces[app] = ns
        }
        await send(out)
    }

    /// Revokes every subscription whose time has come (`expired`).
    public func expire() async {
        let now = clock.now()
        for app in locked({ s in Array(s.namespaces.keys) }) {
            await revoke(app) { _, s in s.expires <= now ? .expired : nil }
        }
    }

    /// The earliest expiry (for a virtual clock to stop there).
    public var nextExpiry: Date? { locked { s in s.namespaces.values.flatMap { $0.subscriptions.values.map(\.expires) }.min() } }

    // MARK: helpers

    static func mayRead(_ ns: Namespace, token: String?, _ path: WakeUpPath) -> Bool {
        (ns.readers[token ?? ""] ?? []).contains { path.isWithin($0) }
    }

    private func revoke(_ app: String, _ why: (Namespace, Subscription) -> WakeUpRevocation?) async {
        let out = locked { (s: inout State)  -> [(String, [String: String])] in
            guard var ns = s.namespaces[app] else { return [] }
            var out = [(String, [String: String])]()
            for s in ns.subscriptions.values {
                guard let reason = why(ns, s) else { continue }
                ns.subscriptions[s.key] = nil
                out.append((s.key.device, WakeUpPayload.revoke(app: app, sp: s.key.path.description, reason: reason)))
            }
            s.namespaces[app] = ns
            return out
        }
        await send(out)
    }

    /// Wake-up messages are FCM data messages; a device the relay no longer knows loses its subscriptions.
    private func send(_ messages: [(String, [String: String])]) async {
        for (device, data) in messages {
            do {
                try await relay.send(PushMessage(token: device, data: data, background: true, service: .fcm))
            } catch {
                guard case .unregistered = error else { continue }
                locked { s in for (app, ns) in s.namespaces { s.namespaces[app]!.subscriptions = ns.subscriptions.filter { $0.key.device != device } } }
            }
        }
    }
}
