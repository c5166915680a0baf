import Foundation

/// Approval records through the storage seam's settings table (`setting`/`setSetting`), so every
/// backend that implements the seam — SQLite here, PostgreSQL next — keeps them in the same
/// atomic, durable transaction as everything else without a schema change of its own. Requests
/// are few and short-lived: one JSON row per request, per approver a bounded index of the ids
/// still pending, and a row per stored request named by the time it settles, from which
/// `TrustService.purgeApprovals` deletes them `ApprovalRules.retention` later.
extension TrustTransaction {
    package func approval(_ id: String) async throws -> ApprovalRecord? {
        guard let text = try await setting("approval." + id) else { return nil }
        do { return try JSONDecoder().decode(ApprovalRecord.self, from: Data(text.utf8)) } catch {
            throw TrustError(.invalidRequest, "approval \(id) is stored damaged: \(error)")
        }
    }

    package func putApproval(_ r: ApprovalRecord) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try await setSetting("approval." + r.id, String(decoding: try encoder.encode(r), as: UTF8.self))
    }

    /// Ids of the requests addressed to `user` that were pending when last written.
    package func pendingApprovalIDs(approver user: String) async throws -> [String] {
        guard let text = try await setting("approvals-pending." + user) else { return [] }
        return (try? JSONDecoder().decode([String].self, from: Data(text.utf8))) ?? []
    }

    package func setPendingApprovalIDs(_ ids: [String], approver user: String) async throws {
        try await setSetting("approvals-pending." + user, String(decoding: try JSONEncoder().encode(ids), as: UTF8.self))
    }

    /// The settle index: one row per stored request, named by the time it settles (its expiry
    /// until it is answered) so that the oldest come first in a prefix read. Adding, moving or
    /// deleting an entry touches one row, whatever the number stored.
    static var settlesPrefix: String { "approval-settles." }

    package static func settlesKey(_ r: ApprovalRecord) -> String {
        let seconds = max(0, min(Int64(r.settledAt.timeIntervalSince1970.rounded(.down)), 999_999_999_999))
        return settlesPrefix + String(repeating: "0", count: 12 - String(seconds).count) + String(seconds) + "." + r.id
    }

    /// Files `r` under the time it settles (moving it when an answer changed that time).
    package func indexApproval(_ r: ApprovalRecord, was old: ApprovalRecord?) async throws {
        let key = Self.settlesKey(r)
        if let old, Self.settlesKey(old) != key { try await deleteSetting(Self.settlesKey(old)) }
        try await setSetting(key, "")
    }

    /// The oldest entries of the settle index: (request id, when it settles), at most `limit`.
    package func oldestSettled(limit: Int) async throws -> [(key: String, id: String, settles: Double)] {
        try await settings(prefix: Self.settlesPrefix, limit: limit).compactMap { entry in
            let rest = entry.name.dropFirst(Self.settlesPrefix.count)
            guard let dot = rest.firstIndex(of: "."), let seconds = Double(rest[..<dot]) else { return nil }
            return (entry.name, String(rest[rest.index(after: dot)...]), seconds)
        }
    }

    /// The index of sites written before the per-row index: one JSON row of every stored request.
    package func legacyApprovalIndex() async throws -> [(id: String, settles: Double)]? {
        guard let text = try await setting("approvals-index") else { return nil }
        let entries = (try? JSONDecoder().decode([LegacyIndexEntry].self, from: Data(text.utf8))) ?? []
        return entries.map { ($0.id, $0.settles) }
    }

    package func deleteApproval(_ id: String) async throws { try await deleteSetting("approval." + id) }
}

/// An entry of the one-row approval index sites wrote before the per-row index.
private struct LegacyIndexEntry: Decodable {
    var id: String
    var settles: Double
}
