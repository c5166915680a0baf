import ByteCore
import Codecs
import Foundation
import TrustModel
import OfflineUnlock

/// Push approval on the service (ForgeRock push authentication, for a remote unlock): requests,
/// the approver's inbox, answers, and the signed unlock command an approval yields.
///
/// The unlock command is an access document the lock already reads (docs/documents.md): signed by
/// the site's issuer key, bound to the requester's credential key, naming only the requested
/// reader, valid from the approval for `ApprovalRules.unlockLifetime`. The lock verifies it with
/// its trusted issuer key in step-up like any key and refuses it once past its `validUntil` (plus
/// the lock's clock leeway) with `expired` — the lock path does not change.
extension TrustService {
    /// A device asks `request.approver` to let it open `request.lock`. The approver must hold an
    /// active grant on that reader (only someone who may open a door can let another in).
    public func requestApproval(_ request: ApprovalRequest, requester: String) async throws -> ApprovalRecord {
        try Self.checkName(request.approver, "approver")
        let rule: ReaderRule
        do { rule = try ReaderRule(parsing: request.lock) } catch {
            throw TrustError(.invalidRequest, "lock \"\(request.lock.prefix(80))\": \(error.reason) (GROUP or GROUP:SUB, hex)")
        }
        let message = request.message ?? "Unlock request from \(requester)"
        guard message.utf8.count <= ApprovalRules.maxMessage else {
            throw TrustError(.invalidRequest, "message is longer than \(ApprovalRules.maxMessage) bytes")
        }
        if let c = request.contextInfo { _ = try ContextInfo(parsing: c) }
        if let p = request.customPayload {
            guard p.utf8.count <= ApprovalRules.maxCustomPayload else {
                throw TrustError(.invalidRequest, "customPayload is longer than \(ApprovalRules.maxCustomPayload) bytes")
            }
            guard (try? JSONSerialization.jsonObject(with: Data(p.utf8))) is [String: Any] else {
                throw TrustError(.invalidRequest, "customPayload is not a JSON object (ForgeRock: \"a JSON string containing the values\")")
            }
        }
        let ttl = TimeInterval(request.ttl ?? Int(ApprovalRules.defaultTTL))
        guard ApprovalRules.ttlRange.contains(ttl) else {
            throw TrustError(.invalidRequest, "ttl \(Int(ttl)) is outside \(Int(ApprovalRules.ttlRange.lowerBound))…\(Int(ApprovalRules.ttlRange.upperBound)) seconds")
        }
        let type = request.pushType ?? .default
        var numbers: [Int]?, challenge: Int?
        if type == .challenge {
            var pool = Array(ApprovalRules.challengeRange)
            var picked = [Int]()
            for _ in 0..<3 { picked.append(pool.remove(at: Int(Self.uniform(UInt64(pool.count))))) }
            numbers = picked
            challenge = picked[Int(Self.uniform(3))]
        }
        let now = now()
        let record = ApprovalRecord(
            id: Hex.encode(Primitives.randomBytes(8)), requester: requester, approver: request.approver, lock: Self.text(of: rule),
            pushType: type, message: message, contextInfo: request.contextInfo, customPayload: request.customPayload,
            numbersChallenge: numbers, challenge: challenge, allowDeviceCredentials: request.allowDeviceCredentials ?? true,
            timeAdded: now, ttl: ttl, status: .pending)
        return try await storage.write { tx in
            _ = try await Self.deviceHoldingKeys(requester, tx: tx)
            guard try await Self.holdsActiveGrant(request.approver, on: rule, tx: tx) else {
                throw TrustError(.forbidden, "\(request.approver) holds no active grant on \(Self.text(of: rule)); only someone who may open it can approve")
            }
            guard try await tx.devices(user: request.approver).contains(where: { $0.credentialState.holdsKeys }) else {
                throw TrustError(.forbidden, "\(request.approver) has no active device to ask")
            }
            var pending = [String](), mine = 0
            for id in try await tx.pendingApprovalIDs(approver: request.approver) {
                if let r = try await tx.approval(id), r.status(at: now) == .pending {
                    pending.append(id)
                    if r.requester == requester { mine += 1 }
                }
            }
            // One device cannot take the approver's whole inbox: others' requests still get in.
            guard mine < ApprovalRules.maxPendingPerRequester else {
                throw TrustError(.tooManyPending, "\(requester) already has \(mine) requests pending with \(request.approver); wait for an answer or for them to expire")
            }
            guard pending.count < ApprovalRules.maxPendingPerApprover else {
                throw TrustError(.tooManyPending, "\(request.approver) already has \(pending.count) pending requests; wait for them to be answered or expire")
            }
            try await tx.putApproval(record)
            try await tx.setPendingApprovalIDs(pending + [record.id], approver: request.approver)
            try await self.indexApproval(record, was: nil, tx: tx, now: now)
            try await self.webhook([WebhookItem(type: "approval-requested", device: requester, approval: record.id)], tx: tx)
            return record
        }
    }

    /// The pending, unexpired requests for the user of `device` (the phone's poll of its inbox).
    public func pendingApprovals(device: String) async throws -> [ApprovalRecord] {
        let now = now()
        return try await storage.read { tx in
            guard let d = try await tx.device(device), d.credentialState.holdsKeys else { return [] }
            var out = [ApprovalRecord]()
            for id in try await tx.pendingApprovalIDs(approver: d.user) {
                if let r = try await tx.approval(id), r.status(at: now) == .pending { out.append(r) }
            }
            return out
        }
    }

    /// One request, as `device` may see it: its requester, or a device of its approver.
    public func approval(id: String, device: String) async throws -> (ApprovalRecord, ApprovalView.Role) {
        let now = now()
        var (r, role) = try await storage.read { tx in try await self.visible(id: id, device: device, tx: tx) }
        r.status = r.status(at: now)
        return (r, role)
    }

    func visible(id: String, device: String, tx: any TrustTransaction) async throws -> (ApprovalRecord, ApprovalView.Role) {
        guard id.utf8.count <= 64, let r = try await tx.approval(id) else { throw TrustError(.notFound, "no approval request \(id.prefix(64))") }
        if r.requester == device { return (r, .requester) }
        guard let d = try await tx.device(device), d.user == r.approver else {
            throw TrustError(.notFound, "no approval request \(id.prefix(64))")
        }
        return (r, .approver)
    }

    /// An approver's device answers. The first answer is final: a second one is refused
    /// (`already_answered`), as is any answer after the TTL (`approval_expired`). A challenge accepted without its number is an error that leaves
    /// the request pending; with a wrong number the request is denied (`wrong_challenge`), so the
    /// number cannot be guessed by retrying. A biometric request must be accepted with
    /// biometrics, or with the device credentials when the request allows them.
    public func answerApproval(id: String, device: String, _ answer: ApprovalAnswer) async throws -> ApprovalRecord {
        let now = now()
        return try await storage.write { tx in
            var (r, role) = try await self.visible(id: id, device: device, tx: tx)
            let before = r
            guard role == .approver, let approver = try await tx.device(device), approver.credentialState.holdsKeys else {
                throw TrustError(.forbidden, "only an active device of \(r.approver) can answer request \(id)")
            }
            switch r.status(at: now) {
            case .pending: break
            case .expired:
                // Nothing is written: expiry is a matter of time (`status(at:)`), not of a write.
                throw TrustError(.approvalExpired, "request \(id) expired at \(RFC3339.format(r.expiresAt)) (ttl \(Int(r.ttl)) s)")
            case let s:
                throw TrustError(.alreadyAnswered, "request \(id) was already answered: \(s.rawValue)")
            }
            r.answeredAt = now
            r.answeredBy = device
            switch answer {
            case .deny:
                r.status = .denied
                r.denyReason = "denied"
            case .accept(let response, let how):
                switch r.pushType {
                case .default: break
                case .challenge:
                    guard let response else {
                        throw TrustError(.challengeResponseRequired, "request \(id) is a challenge: accept with the number shown on the requester's side")
                    }
                    if response != r.challenge {
                        r.status = .denied
                        r.denyReason = "wrong_challenge"
                    }
                case .biometric:
                    guard how == .biometric || (how == .deviceCredentials && r.allowDeviceCredentials) else {
                        throw TrustError(.biometricRequired, "request \(id) needs biometric authentication" + (r.allowDeviceCredentials ? " or the device credentials" : " (device credentials not allowed)"))
                    }
                }
                r.authentication = how
                if r.status == .pending {
                    // An approval grants no more than the approver holds when answering, at that
                    // door: their active grants covering it now, with those grants' schedules
                    // (which the lock enforces at the tap, in its own zone).
                    guard let schedules = try await Self.authority(of: r.approver, over: try ReaderRule(parsing: r.lock), tx: tx) else {
                        throw TrustError(.forbidden, "\(r.approver) no longer holds an active grant on \(r.lock): an approval can give no more than its approver holds")
                    }
                    r.status = .approved
                    try await self.issueUnlock(&r, schedules: schedules, tx: tx, now: now)
                }
            }
            try await tx.putApproval(r)
            try await self.dropPending(r, tx: tx)
            try await self.indexApproval(r, was: before, tx: tx, now: now)
            try await self.webhook([WebhookItem(type: "approval-answered", device: device, approval: r.id,
                                                reason: r.status == .denied ? "denied:" + (r.denyReason ?? "denied") : r.status.rawValue)], tx: tx)
            return r
        }
    }

    /// Records when `r` settles in the approval index, then deletes what was settled more than
    /// `ApprovalRules.retention` ago (at most `purgeBatch` per write). Runs inside every write that
    /// creates or answers a request, so storage holds only the requests of the last retention period
    /// plus those still pending; each write touches a bounded number of rows, however many are stored.
    func indexApproval(_ r: ApprovalRecord, was old: ApprovalRecord?, tx: any TrustTransaction, now: Date) async throws {
        if !legacyApprovalIndexChecked.exchange(true, ordering: .relaxed) { try await Self.migrateLegacyIndex(tx) }
        try await tx.indexApproval(r, was: old)
        _ = try await Self.purge(tx: tx, now: now)
    }

    /// How many requests wait for an answer, site-wide (`lockbench_trust_approvals_pending`): the
    /// entries of the settle index that settle after now (an unanswered request settles when it
    /// expires; an answered one settled when it was answered). Reads at most `limit` index rows.
    public func pendingApprovalCount(limit: Int = 100_000) async throws -> Int {
        let now = now().timeIntervalSince1970
        return try await storage.read { tx in try await tx.oldestSettled(limit: limit).filter { $0.settles > now }.count }
    }

    /// Deletes the requests settled more than `ApprovalRules.retention` before `now`; returns how
    /// many it deleted. `trust serve` calls it on a timer too, so a quiet site is purged as well.
    @discardableResult
    public func purgeApprovals() async throws -> Int {
        let now = now()
        return try await storage.write { tx in
            try await Self.migrateLegacyIndex(tx)
            return try await Self.purge(tx: tx, now: now)
        }
    }

    /// The oldest `purgeBatch` entries of the settle index, deleted with their requests when past
    /// the retention.
    static func purge(tx: any TrustTransaction, now: Date) async throws -> Int {
        let cutoff = now.timeIntervalSince1970 - ApprovalRules.retention
        var deleted = 0, page = 1   // usually nothing is due: one row read tells
        while deleted < ApprovalRules.purgeBatch {
            let entries = try await tx.oldestSettled(limit: min(page, ApprovalRules.purgeBatch - deleted))
            for e in entries {
                guard e.settles <= cutoff else { return deleted }
                try await tx.deleteApproval(e.id)
                try await tx.deleteSetting(e.key)
                deleted += 1
            }
            if entries.count < page { return deleted }
            page = 64
        }
        return deleted
    }

    /// A site written before the per-row index keeps one JSON row of every request: it is moved
    /// into rows once, in the first write that finds it.
    static func migrateLegacyIndex(_ tx: any TrustTransaction) async throws {
        guard let legacy = try await tx.legacyApprovalIndex() else { return }
        for e in legacy {
            if let r = try await tx.approval(e.id) { try await tx.indexApproval(r, was: nil) }
        }
        try await tx.deleteSetting("approvals-index")
    }

    func dropPending(_ r: ApprovalRecord, tx: any TrustTransaction) async throws {
        let ids = try await tx.pendingApprovalIDs(approver: r.approver)
        try await tx.setPendingApprovalIDs(ids.filter { $0 != r.id }, approver: r.approver)
    }

    /// What `user` may open at `rule` now: nil when no active grant covers it; else the schedules
    /// that bound it (empty: at any time, when one covering grant has no schedule).
    static func authority(of user: String, over rule: ReaderRule, tx: any TrustTransaction) async throws -> [String]? {
        let covering = try await tx.grants(user: user).filter { g in g.state == .active && g.readers.contains { covers($0, rule) } }
        if covering.isEmpty { return nil }
        if covering.contains(where: { $0.schedules.isEmpty }) { return [] }
        return Array(Set(covering.flatMap(\.schedules))).sorted()
    }

    /// Signs the unlock command: an access document for the requester's credential, this reader
    /// only, bounded by the approver's schedules there.
    func issueUnlock(_ r: inout ApprovalRecord, schedules: [String], tx: any TrustTransaction, now: Date) async throws {
        guard let d = try await tx.device(r.requester), d.credentialState.holdsKeys else {
            throw TrustError(.forbidden, "the requester \(r.requester) no longer has an active credential")
        }
        let until = now.addingTimeInterval(ApprovalRules.unlockLifetime)
        let access = try AccessData(id: Primitives.randomBytes(8), readers: [try ReaderRule(parsing: r.lock)],
                                    schedules: try schedules.map { try WeeklySchedule(parsing: $0) })
        let doc = try AccessDocument.issue(access: access, credentialPublicKey: d.credentialKey,
                                           validity: .init(signed: now, validFrom: now, validUntil: until), issuerKey: issuerKey,
                                           timeVerificationRequired: settings.timeVerificationRequired ?? false)
        r.unlockDocument = doc.encoded()
        r.unlockValidUntil = until
    }

    /// The device, refused unless its credential holds keys (an enrolled phone that may act).
    static func deviceHoldingKeys(_ device: String, tx: any TrustTransaction) async throws -> DeviceRecord {
        guard let d = try await tx.device(device), d.credentialState.holdsKeys else {
            throw TrustError(.forbidden, "device \(device) has no active credential")
        }
        return d
    }

    /// Whether `user` holds an active grant whose reader rules cover `rule`.
    static func holdsActiveGrant(_ user: String, on rule: ReaderRule, tx: any TrustTransaction) async throws -> Bool {
        try await tx.grants(user: user).contains { g in g.state == .active && g.readers.contains { covers($0, rule) } }
    }

    /// Whether a grant's reader rule covers the requested one (same group; a grant on one sub
    /// covers only that sub).
    static func covers(_ granted: String, _ wanted: ReaderRule) -> Bool {
        guard let g = try? ReaderRule(parsing: granted) else { return false }
        return g.groupID == wanted.groupID && (g.subID == nil || g.subID == wanted.subID)
    }

    static func text(of rule: ReaderRule) -> String {
        Hex.encode(rule.groupID) + (rule.subID.map { ":" + Hex.encode($0) } ?? "")
    }

    /// A uniform integer below `n` from the system's random bytes (no modulo bias).
    static func uniform(_ n: UInt64) -> UInt64 {
        var g = SystemRandomNumberGenerator()
        return UInt64.random(in: 0..<n, using: &g)
    }
}
