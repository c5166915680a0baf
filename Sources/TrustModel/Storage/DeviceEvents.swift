import ByteCore
import Codecs
import Foundation

/// One entry of a device's history (issue 22 §3, "why did this phone lose its key"): what the
/// service did to the device's keys, why (the administrative change), and what became of the
/// pushes, polls and refreshes it made for it. Stored as settings rows `device-event/DEVICE/SEQ`
/// (both backends, no schema change), at most `retained` per device: the oldest go first.
public struct DeviceEvent: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// A key's first document, or one re-issued after its grant changed or was deleted earlier.
        case keyIssued = "key-issued"
        /// A key's document re-issued (past its expected update, or its grant's revision moved).
        case keyRefreshed = "key-refreshed"
        /// A key deleted from the phone at its next poll (its grant revoked, its credential suspended…).
        case keyDeleted = "key-deleted"
        // The administrative changes that affect the device (`PollTrigger`'s words).
        case grantIssued = "grant-issued"
        case grantModified = "grant-modified"
        case grantRevoked = "grant-revoked"
        case lockGrantsRevoked = "lock-grants-revoked"
        case credentialChanged = "credential-changed"
        /// A push queued at the relay, or refused (`reason`: `PushRefusal.metricReason`).
        case pushSent = "push-sent"
        case pushFailed = "push-failed"
        /// A poll refused (`reason`: the login revoked or expired).
        case pollFailed = "poll-failed"
        /// A refresh-token rotation refused (`reason`: the OAuth error, `detail` its description).
        case refreshFailed = "refresh-failed"

        public init?(trigger: PollTrigger) { self.init(rawValue: trigger.rawValue) }
    }

    /// Orders a device's events: a key's own change sequence, or a new one from the same counter.
    public var seq: Int64
    public var device: String
    public var kind: Kind
    /// RFC 3339, whole seconds.
    public var at: String
    public var key: String?
    public var grant: String?
    public var iteration: Int?
    public var reason: String?
    public var detail: String?

    public init(seq: Int64, device: String, kind: Kind, at: Date, key: String? = nil, grant: String? = nil, iteration: Int? = nil,
                reason: String? = nil, detail: String? = nil) {
        self.seq = seq; self.device = device; self.kind = kind; self.at = RFC3339.format(at)
        self.key = key; self.grant = grant; self.iteration = iteration
        // Bounded whatever the caller passes (an error's description, a reason from a relay).
        self.reason = reason.map { String($0.prefix(64)) }; self.detail = detail.map { String($0.prefix(256)) }
    }

    /// Events kept per device; a device's newest `retained` survive.
    public static let retained = 64
    static let prefix = "device-event/"

    /// The settings-row prefix of `device`'s events. Device ids never contain "/" (`checkName`), so
    /// no device's prefix is another's.
    public static func rowPrefix(device: String) -> String { prefix + device + "/" }

    /// The settings-row name: the sequence zero-padded, so name order is sequence order.
    public var rowName: String {
        let digits = String(max(0, seq))
        return Self.rowPrefix(device: device) + String(repeating: "0", count: max(0, 19 - digits.count)) + digits
    }

    /// The stored row: the members `Codable` names, absent ones left out, written member by member
    /// (`JSONWriter`): every poll that re-issues a key writes one inside the one serialized write
    /// transaction, where `JSONEncoder` was 1.7 % of a key refresh's server CPU. Read back with
    /// `init(parsing:)` (`JSONDecoder`), as rows `JSONEncoder` wrote before are.
    public func encoded() -> String {
        var w = JSONWriter(capacity: 160)
        w.beginObject()
        w.key("seq"); w.integer(seq)
        w.key("device"); w.string(device)
        w.key("kind"); w.string(kind.rawValue)
        w.key("at"); w.string(at)
        if let key { w.key("key"); w.string(key) }
        if let grant { w.key("grant"); w.string(grant) }
        if let iteration { w.key("iteration"); w.integer(iteration) }
        if let reason { w.key("reason"); w.string(reason) }
        if let detail { w.key("detail"); w.string(detail) }
        w.endObject()
        return String(decoding: w.bytes, as: UTF8.self)
    }

    public init(parsing text: String) throws { self = try JSONDecoder().decode(Self.self, from: Data(text.utf8)) }

    /// The events of a key change: tombstones are deletions, the first iteration an issue.
    public static func of(_ keys: [KeyRecord], at: Date) -> [DeviceEvent] {
        keys.map { k in
            DeviceEvent(seq: k.sequence, device: k.device, kind: k.document == nil ? .keyDeleted : k.iteration <= 1 ? .keyIssued : .keyRefreshed,
                        at: at, key: k.id, grant: k.grant, iteration: k.document == nil ? nil : k.iteration)
        }
    }
}

extension TrustTransaction {
    /// The default: one row at a time, then each device trimmed to its newest `keep`. Backends
    /// override it with one insert and one delete for a whole batch (the poll path writes here).
    public func appendDeviceEventsOneByOne(_ events: [DeviceEvent], keep: Int) async throws {
        for e in events { try await setSetting(e.rowName, e.encoded()) }
        for device in Set(events.map(\.device)) {
            let rows = try await settings(prefix: DeviceEvent.rowPrefix(device: device), limit: keep + events.count + 1)
            for row in rows.prefix(max(0, rows.count - keep)) { try await deleteSetting(row.name) }
        }
    }

    /// Events whose `seq` is 0 get new sequence numbers (one reservation for all of them).
    public func numbered(_ events: [DeviceEvent]) async throws -> [DeviceEvent] {
        let missing = events.filter { $0.seq == 0 }.count
        guard missing > 0 else { return events }
        var next = try await reserveSequences(missing)
        return events.map { e in
            guard e.seq == 0 else { return e }
            var e = e; e.seq = next; next += 1; return e
        }
    }

    /// A device's events, oldest first.
    public func deviceEvents(device: String) async throws -> [DeviceEvent] {
        try await settings(prefix: DeviceEvent.rowPrefix(device: device), limit: DeviceEvent.retained * 2).compactMap { try? DeviceEvent(parsing: $0.value) }
    }
}

extension TrustStorage {
    /// Records `events` in a write of their own (pushes and refusals happen outside any change);
    /// events of devices that do not exist are dropped, so no caller can grow the site with names.
    public func recordDeviceEvents(_ events: [DeviceEvent]) async throws {
        guard !events.isEmpty else { return }
        try await write { tx in
            var known = [DeviceEvent]()
            for e in events where try await tx.device(e.device) != nil { known.append(e) }
            guard !known.isEmpty else { return }
            try await tx.appendDeviceEvents(try await tx.numbered(known), keep: DeviceEvent.retained)
        }
    }
}
