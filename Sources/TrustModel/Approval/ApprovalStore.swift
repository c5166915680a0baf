import Foundation

/// Approval records through the storage seam's settings table (`setting`/`setSetting`), so every
/// backend that implements the seam — SQLite here, PostgreSQL next — keeps them in the same
/// atomic, durable transaction as everything else without a schema change of its own. Requests
/// are few and short-lived: one JSON row per request, per approver a bounded index of the ids
/// still pending, and one index of every stored request by the time it settles, from which
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

    /// Every stored request with the time it settles (its expiry until it is answered), oldest first.
    package func approvalIndex() async throws -> [ApprovalIndexEntry] {
        guard let text = try await setting("approvals-index") else { return [] }
        do { return try JSONDecoder().decode([ApprovalIndexEntry].self, from: Data(text.utf8)) } catch {
            throw TrustError(.invalidRequest, "the approval index is stored damaged: \(error)")
        }
    }

    package func setApprovalIndex(_ entries: [ApprovalIndexEntry]) async throws {
        try await setSetting("approvals-index", String(decoding: try JSONEncoder().encode(entries), as: UTF8.self))
    }

    package func deleteApproval(_ id: String) async throws { try await deleteSetting("approval." + id) }
}

/// One stored request in the approval index: its id and when it settles (seconds since 1970).
package struct ApprovalIndexEntry: Codable, Sendable, Equatable {
    package var id: String
    package var settles: Double

    package init(id: String, settles: Double) {
        self.id = id
        self.settles = settles
    }
}
