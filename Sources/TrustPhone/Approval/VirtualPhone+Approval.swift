import Foundation
import TrustModel

/// What came of the user's answer on the phone.
public enum ApprovalOutcome: Sendable, Equatable {
    /// The service recorded the answer: `approved` or `denied` (with its reason).
    case answered(ApprovalView)
    /// Nothing was sent, or the service refused the answer; the code says why
    /// (`no_pending_request`, `challenge_response_required`, `not_a_choice`, `biometric_failed`,
    /// or the service's `already_answered`, `approval_expired`, …).
    case refused(code: String, message: String)
}

/// Push approval on the virtual phone, after ForgeRock's `PushNotification`: `accept` by a tap,
/// `accept(challengeResponse:)` with one of the three numbers, `accept(title:allowDeviceCredentials:)`
/// through (simulated) biometrics, or `deny`.
extension VirtualPhone {
    /// Runs `body` with a valid access token, refreshing once if the service refused it.
    func authorized<T>(_ body: (String) async throws(TrustClientError) -> T) async -> Result<T, TrustClientError> {
        guard isOnline else { return .failure(.network("offline")) }
        var token: String
        switch await accessToken() {
        case .success(let t): token = t
        case .failure(let e): return .failure(e)
        }
        do { return .success(try await body(token)) } catch {
            guard case .unauthorized = error else { return .failure(error) }
        }
        switch await accessToken(forceRefresh: true) {
        case .success(let t): token = t
        case .failure(let e): return .failure(e)
        }
        do { return .success(try await body(token)) } catch { return .failure(error) }
    }

    // MARK: requester

    /// Asks `approver` to let this phone open `lock` (GROUP[:SUB] hex). The answer carries the
    /// number to show on this side for a challenge.
    public func requestUnlock(_ request: ApprovalRequest) async -> Result<ApprovalView, TrustClientError> {
        let r = await authorized { token throws(TrustClientError) in try await client.requestApproval(accessToken: token, request) }
        if case .success(let v) = r {
            _ = approvals.track(v, now: clock.now())
            approvals.lastRequestID = v.id
        }
        return r
    }

    /// Fetches this phone's own requests that are still open; an approved one yields its unlock
    /// command, which the phone then presents to the lock. Returns how many commands arrived.
    @discardableResult
    public func fetchUnlocks() async -> Int {
        var got = 0
        for v in approvals.requests where v.status == .pending || (v.status == .approved && v.unlockDocument == nil) {
            guard case .success(let now) = await authorized({ token throws(TrustClientError) in try await client.approval(accessToken: token, id: v.id) }) else { continue }
            if approvals.track(now, now: clock.now()) {
                got += 1
                record(.unlockReceived, nil, "\(now.id) for \(now.lock) until \(now.unlockValidUntil ?? "?")")
            }
        }
        return got
    }

    /// One of this phone's requests as the service holds it now (kept, with its unlock command).
    public func request(id: String) async -> Result<ApprovalView, TrustClientError> {
        let r = await authorized { token throws(TrustClientError) in try await client.approval(accessToken: token, id: id) }
        if case .success(let v) = r, approvals.track(v, now: clock.now()) {
            record(.unlockReceived, nil, "\(v.id) for \(v.lock) until \(v.unlockValidUntil ?? "?")")
        }
        return r
    }

    // MARK: approver

    /// Fetches the approver's inbox (the delivery seam's explicit fetch). Returns the new notifications.
    @discardableResult
    public func fetchApprovals() async -> Result<[ApprovalView], TrustClientError> {
        let r = await authorized { token throws(TrustClientError) in try await client.approvalInbox(accessToken: token) }
        guard case .success(let inbox) = r else {
            if case .failure(let e) = r { record(.approvalFailed, nil, "fetch: \(e.description)") }
            return r.map { _ in [] }
        }
        let new = approvals.replaceInbox(inbox.approvals)
        for v in new { record(.approvalReceived, nil, "\(v.id) \(v.pushType.rawValue): \(v.message ?? "")") }
        return .success(new)
    }

    /// The user accepts the oldest pending notification (or `id`). A challenge needs one of the
    /// three numbers shown; a biometric request asks the simulated sensor, falling back to the
    /// passcode only when the request allows device credentials.
    public func approve(_ number: Int? = nil, id: String? = nil) async -> ApprovalOutcome {
        guard let v = pending(id) else { return refuse("no_pending_request", "no pending approval request" + (id.map { " \($0)" } ?? "") + "; fetch first") }
        var how = ApprovalAuthentication.tap
        switch v.pushType {
        case .default: break
        case .challenge:
            guard let number else {
                return refuse("challenge_response_required", "request \(v.id) is a challenge: approve with the number shown on the requester's side, one of \(numbers(v))")
            }
            guard v.numbersChallenge?.contains(number) ?? false else {
                return refuse("not_a_choice", "\(number) is not one of the numbers shown: \(numbers(v))")
            }
        case .biometric:
            switch approvals.biometrics {
            case .match: how = .biometric
            case .noMatch, .none:
                guard v.allowDeviceCredentials == true, approvals.passcodeSet else {
                    let why = approvals.biometrics == .none ? "no biometrics enrolled" : "biometrics not recognised"
                    return refuse("biometric_failed", "\(why)" + (v.allowDeviceCredentials == true ? " and no passcode set" : "; the request does not allow device credentials"))
                }
                how = .deviceCredentials
            }
        }
        return await send(v) { token throws(TrustClientError) in
            try await client.accept(accessToken: token, id: v.id, challengeResponse: v.pushType == .challenge ? number : nil, authentication: how)
        }
    }

    /// The user denies the oldest pending notification (or `id`).
    public func deny(id: String? = nil) async -> ApprovalOutcome {
        guard let v = pending(id) else { return refuse("no_pending_request", "no pending approval request" + (id.map { " \($0)" } ?? "") + "; fetch first") }
        return await send(v) { token throws(TrustClientError) in try await client.deny(accessToken: token, id: v.id) }
    }

    func pending(_ id: String?) -> ApprovalView? {
        let inbox = approvals.inbox
        return id.map { i in inbox.first { $0.id == i } } ?? inbox.first
    }

    func numbers(_ v: ApprovalView) -> String { (v.numbersChallenge ?? []).map(String.init).joined(separator: ", ") }

    func refuse(_ code: String, _ message: String) -> ApprovalOutcome {
        record(.approvalFailed, nil, "\(code): \(message)")
        approvals.lastAnswer = .refused(code: code, message: message)
        return .refused(code: code, message: message)
    }

    func send(_ v: ApprovalView, _ call: (String) async throws(TrustClientError) -> ApprovalView) async -> ApprovalOutcome {
        switch await authorized(call) {
        case .success(let answered):
            approvals.answered(v.id)
            record(answered.status == .approved ? .approved : .denied, nil, "\(v.id)" + (answered.denyReason.map { ": \($0)" } ?? ""))
            approvals.lastAnswer = .answered(answered)
            return .answered(answered)
        case .failure(let e):
            if case .refused(_, let code, let d) = e {
                // The service no longer holds it pending (answered elsewhere, expired): drop it.
                if code == "already_answered" || code == "approval_expired" { approvals.answered(v.id) }
                return refuse(code, d)
            }
            return refuse("network", e.description)
        }
    }
}
