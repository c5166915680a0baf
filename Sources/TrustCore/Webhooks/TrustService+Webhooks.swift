import Codecs
import Foundation
import TrustModel

/// Webhooks (issue 22 §3, Seam's shape): a subscriber URL receives every administrative change as
/// signed events, in order, at least once. An event is written in the same transaction as the
/// change it reports (`announced`), so none is lost to a crash or a restart; each subscriber has a
/// durable cursor (the last event it acknowledged with a 2xx), and `WebhookDispatcher` delivers from
/// there. Everything is settings rows: both backends, no schema change.
extension TrustService {
    public struct Webhook: Codable, Sendable, Equatable {
        public var id: String
        public var url: String
        /// The HMAC-SHA256 key of `LockBench-Signature` (shown once at creation, kept to sign).
        public var secret: String
    }

    /// One event as the subscriber receives it.
    public struct WebhookEvent: Codable, Sendable, Equatable {
        public var id: String
        public var seq: Int64
        /// The change: grant-issued, grant-modified, grant-revoked, lock-grants-revoked, credential-changed
        /// (administrative); device-enrolled, approval-requested, approval-answered, key-refresh-failed.
        public var type: String
        public var device: String
        public var at: String
        /// approval-*: the request's id.
        public var approval: String?
        /// approval-answered: approved or denied (and why); key-refresh-failed: the OAuth error, or
        /// login-revoked for a refused poll.
        public var reason: String?
    }

    /// An event to record (`seq`, `id` and `at` are given when stored).
    struct WebhookItem: Sendable {
        var type: String
        var device: String
        var approval: String? = nil
        var reason: String? = nil
    }

    static let webhookPrefix = "webhook."
    static let webhookEventPrefix = "webhook-event."
    static let webhookCursorPrefix = "webhook-cursor."
    static let webhookSequence = "webhook-sequence"
    static let webhookLeasePrefix = "webhook-lease."
    /// Events kept for a subscriber that does not acknowledge; beyond this the oldest go.
    public static let maxStoredWebhookEvents = 10_000

    static func eventKey(_ seq: Int64) -> String {
        let digits = String(seq)
        return webhookEventPrefix + String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    /// Registers a subscriber; answers it with its signing secret.
    public func addWebhook(url: String) async throws -> Webhook {
        guard url.utf8.count <= 2048, let u = URL(string: url), ["http", "https"].contains(u.scheme ?? ""), u.host != nil else {
            throw TrustError(.invalidRequest, "a webhook URL is http(s)://HOST[:PORT]/PATH, at most 2048 bytes")
        }
        let hook = Webhook(id: "wh_" + Base64URL.random(9), url: url, secret: "whsec_" + Base64URL.random(32))
        let text = String(decoding: try JSONEncoder().encode(hook), as: UTF8.self)
        try await storage.write { tx in
            // A new subscriber starts at the next event, not the history.
            let current = Int64(try await tx.setting(Self.webhookSequence) ?? "0") ?? 0
            try await tx.setSetting(Self.webhookPrefix + hook.id, text)
            try await tx.setSetting(Self.webhookCursorPrefix + hook.id, String(current))
        }
        webhookSubscribers.withLock { $0 = true }
        return hook
    }

    public func webhooks() async throws -> [Webhook] {
        try await storage.read { tx in try await Self.webhooks(tx) }
    }

    static func webhooks(_ tx: any TrustTransaction) async throws -> [Webhook] {
        try await tx.settings(prefix: webhookPrefix, limit: 1000).compactMap { try? JSONDecoder().decode(Webhook.self, from: Data($0.value.utf8)) }
    }

    @discardableResult
    public func deleteWebhook(id: String) async throws -> Bool {
        defer { webhookSubscribers.withLock { $0 = nil } }
        return try await storage.write { tx in
            guard id.utf8.count <= 64, try await tx.setting(Self.webhookPrefix + id) != nil else { return false }
            try await tx.deleteSetting(Self.webhookPrefix + id)
            try await tx.deleteSetting(Self.webhookCursorPrefix + id)
            try await tx.deleteSetting(Self.webhookLeasePrefix + id)
            // The last subscriber gone: nobody will read the stored events.
            if try await Self.webhooks(tx).isEmpty {
                for row in try await tx.settings(prefix: Self.webhookEventPrefix, limit: Self.maxStoredWebhookEvents + 64) { try await tx.deleteSetting(row.name) }
            }
            return true
        }
    }

    /// Whether anyone subscribes (`webhookSubscribers`, read once when unknown).
    func hasWebhookSubscribers(_ tx: any TrustTransaction) async throws -> Bool {
        if let known = webhookSubscribers.withLock({ $0 }) { return known }
        let found = try await !tx.settings(prefix: Self.webhookPrefix, limit: 1).isEmpty
        webhookSubscribers.withLock { $0 = found }
        return found
    }

    /// What `WebhookDispatcher` saw on its last pass (a subscriber added by another process).
    public func noteWebhookSubscribers(_ present: Bool) { webhookSubscribers.withLock { $0 = present } }

    /// Writes the events of `change` (one per affected device).
    static func recordWebhookEvents(_ change: TrustChange, at now: Date, tx: any TrustTransaction) async throws {
        try await recordWebhookEvents(change.affected.map { WebhookItem(type: $0.trigger.rawValue, device: $0.device) }, at: now, tx: tx)
    }

    /// Writes `items` as events in `tx` (the change's own transaction) when anyone subscribes.
    func webhook(_ items: [WebhookItem], tx: any TrustTransaction) async throws {
        guard !items.isEmpty, try await hasWebhookSubscribers(tx) else { return }
        try await Self.recordWebhookEvents(items, at: now(), tx: tx)
    }

    static func recordWebhookEvents(_ items: [WebhookItem], at now: Date, tx: any TrustTransaction) async throws {
        guard !items.isEmpty else { return }
        var seq = Int64(try await tx.setting(webhookSequence) ?? "0") ?? 0
        for a in items {
            seq += 1
            let event = WebhookEvent(id: "evt_\(seq)", seq: seq, type: a.type, device: a.device, at: RFC3339.format(now),
                                     approval: a.approval, reason: a.reason.map { String($0.prefix(64)) })
            try await tx.setSetting(eventKey(seq), String(decoding: try JSONEncoder().encode(event), as: UTF8.self))
        }
        try await tx.setSetting(webhookSequence, String(seq))
        // Bounded: the oldest go past the limit (a subscriber gone for good cannot grow the site).
        let stored = try await tx.settings(prefix: webhookEventPrefix, limit: maxStoredWebhookEvents + 64)
        for row in stored.prefix(max(0, stored.count - maxStoredWebhookEvents)) { try await tx.deleteSetting(row.name) }
    }

    /// The next event `hook` has not acknowledged, if any.
    public func nextWebhookEvent(for hook: Webhook) async throws -> WebhookEvent? {
        try await storage.read { tx in
            let cursor = Int64(try await tx.setting(Self.webhookCursorPrefix + hook.id) ?? "0") ?? 0
            for row in try await tx.settings(prefix: Self.webhookEventPrefix, limit: 256) {
                guard let e = try? JSONDecoder().decode(WebhookEvent.self, from: Data(row.value.utf8)) else { continue }
                if e.seq > cursor { return e }
            }
            return nil
        }
    }

    /// The delivery lease of a subscriber (several instances on one database, one ordered stream):
    /// who delivers its events, until when.
    public struct WebhookLease: Codable, Sendable, Equatable {
        public var holder: String
        public var until: Double
    }

    /// Takes or renews `hook`'s delivery lease for `holder` (an instance) for `ttl` seconds, unless
    /// another holder's lease is still running; answers whether `holder` holds it now. Writes are
    /// serialized on every backend (PostgreSQL: the writers' advisory lock), so two instances
    /// never both hold it: only one delivers, so the subscriber sees one stream, in order.
    public func leaseWebhook(_ hook: Webhook, holder: String, ttl: TimeInterval) async throws -> Bool {
        let now = Date().timeIntervalSince1970
        return try await storage.write { tx in
            let row = Self.webhookLeasePrefix + hook.id
            if let text = try await tx.setting(row), let lease = try? JSONDecoder().decode(WebhookLease.self, from: Data(text.utf8)),
               lease.holder != holder, lease.until > now { return false }
            guard try await tx.setting(Self.webhookPrefix + hook.id) != nil else { return false }
            let lease = WebhookLease(holder: holder, until: now + ttl)
            try await tx.setSetting(row, String(decoding: try JSONEncoder().encode(lease), as: UTF8.self))
            return true
        }
    }

    /// Gives up `holder`'s lease of a subscriber (a graceful stop): another instance delivers at
    /// once instead of after the lease runs out.
    public func releaseWebhookLease(hookID: String, holder: String) async throws {
        try await storage.write { tx in
            let row = Self.webhookLeasePrefix + hookID
            guard let text = try await tx.setting(row), let lease = try? JSONDecoder().decode(WebhookLease.self, from: Data(text.utf8)),
                  lease.holder == holder else { return }
            try await tx.deleteSetting(row)
        }
    }

    /// `hook` acknowledged `event`: its cursor moves past it, and events every subscriber has
    /// acknowledged are deleted. With `holder`, only while that instance holds the lease (one that
    /// lost it while posting leaves the cursor to the new holder, which sends the event again).
    public func acknowledgeWebhookEvent(_ event: WebhookEvent, for hook: Webhook, holder: String? = nil) async throws {
        try await storage.write { tx in
            if let holder {
                guard let text = try await tx.setting(Self.webhookLeasePrefix + hook.id),
                      let lease = try? JSONDecoder().decode(WebhookLease.self, from: Data(text.utf8)), lease.holder == holder else { return }
            }
            let cursor = Int64(try await tx.setting(Self.webhookCursorPrefix + hook.id) ?? "0") ?? 0
            guard event.seq > cursor, try await tx.setting(Self.webhookPrefix + hook.id) != nil else { return }
            try await tx.setSetting(Self.webhookCursorPrefix + hook.id, String(event.seq))
            var lowest = event.seq
            for h in try await Self.webhooks(tx) {
                lowest = min(lowest, Int64(try await tx.setting(Self.webhookCursorPrefix + h.id) ?? "0") ?? 0)
            }
            for row in try await tx.settings(prefix: Self.webhookEventPrefix, limit: 256) {
                guard let seq = Int64(row.name.dropFirst(Self.webhookEventPrefix.count)), seq <= lowest else { break }
                try await tx.deleteSetting(row.name)
            }
        }
    }
}
