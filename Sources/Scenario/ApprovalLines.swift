import ByteCore
import Foundation
import OfflineUnlock
import Push
import TrustModel
import TrustPhone

/// The scenario lines of push approval (ForgeRock) and the wallet decisions (Schlage guide):
///
///     unlock request PHONE from USER LOCK [type default|challenge|biometric] [message TEXT]
///                    [ttl DURATION] [context JSON] [payload JSON] [no-device-credentials]
///     phone NAME fetch | approve [N|right|wrong] | deny
///     phone NAME biometric match|no-match|none | passcode yes|no
///     phone NAME wallet device|library|pass|watch|can-add VALUE
///     expect PHONE answer approved|denied [REASON] | CODE      the approver's last answer
///     expect PHONE request pending|approved|denied|expired     the requester's last request, as the service says
///     expect PHONE inbox N | unlocks N | wallet OUTCOME
///     expect PHONE notification type|message|location|userAgent|remoteIp|payload VALUE|null   the oldest pending one
public enum ApprovalLine: Sendable {
    case request(phone: String, approver: String, lock: String, ApprovalRequest)
    case fetch(String)
    case approve(String, Choice)
    case deny(String)
    case biometrics(String, PhoneApprovals.Biometrics)
    case passcode(String, Bool)
    case wallet(String, field: String, value: String)
    case expectAnswer(String, String, reason: String?)
    case expectRequest(String, ApprovalStatus)
    case expectInbox(String, Int)
    case expectUnlocks(String, Int)
    case expectWallet(String, WalletOutcome)
    case expectNotification(String, field: String, value: String)

    /// The number the approver picks: none, a literal, the one shown on the requester's side, or another of the three.
    public enum Choice: Sendable, Equatable { case none, number(Int), right, wrong }

    /// nil: not an approval or wallet line.
    init?(words w: [String]) throws(ScenarioError) {
        func need(_ n: Int, _ form: String) throws(ScenarioError) { if w.count < n { throw ScenarioError(line: 0, "usage: \(form)") } }
        switch (w.first ?? "", w.count > 1 ? w[1] : "", w.count > 2 ? w[2] : "") {
        case ("unlock", "request", _):
            let form = "unlock request PHONE from USER LOCK [type default|challenge|biometric] [message TEXT] [ttl DURATION] [context JSON] [payload JSON] [no-device-credentials]"
            try need(6, form)
            guard w[3] == "from" else { throw ScenarioError(line: 0, "usage: \(form)") }
            var r = ApprovalRequest(approver: w[4], lock: "")
            var i = 6
            while i < w.count {
                let value = i + 1 < w.count ? w[i + 1] : nil
                switch (w[i], value) {
                case ("type", let v?):
                    guard let t = PushType(rawValue: v) else { throw ScenarioError(line: 0, "type is default, challenge or biometric") }
                    r.pushType = t; i += 2
                case ("message", let v?): r.message = v; i += 2
                case ("ttl", let v?):
                    guard let d = DurationText.parse(v), d >= 0, d < 1e9 else { throw ScenarioError(line: 0, "\"\(v)\" is not a duration like 2m") }
                    r.ttl = Int(d); i += 2
                // JSON with ' for " (a scenario word cannot hold a double quote).
                case ("context", let v?): r.contextInfo = v.replacingOccurrences(of: "'", with: "\""); i += 2
                case ("payload", let v?): r.customPayload = v.replacingOccurrences(of: "'", with: "\""); i += 2
                case ("no-device-credentials", _): r.allowDeviceCredentials = false; i += 1
                default: throw ScenarioError(line: 0, "unknown or incomplete option \"\(w[i])\"; \(form)")
                }
            }
            self = .request(phone: w[2], approver: w[4], lock: w[5], r)
        case ("phone", _, "fetch"): self = .fetch(w[1])
        case ("phone", _, "deny"): self = .deny(w[1])
        case ("phone", _, "approve"):
            switch w.count > 3 ? w[3] : nil {
            case nil: self = .approve(w[1], .none)
            case "right": self = .approve(w[1], .right)
            case "wrong": self = .approve(w[1], .wrong)
            case let v?:
                guard let n = Int(v), (0...999).contains(n) else { throw ScenarioError(line: 0, "approve takes a number, right or wrong, not \"\(v)\"") }
                self = .approve(w[1], .number(n))
            }
        case ("phone", _, "biometric"):
            try need(4, "phone NAME biometric match|no-match|none")
            guard let b = PhoneApprovals.Biometrics(rawValue: w[3]) else { throw ScenarioError(line: 0, "biometric is match, no-match or none") }
            self = .biometrics(w[1], b)
        case ("phone", _, "passcode"):
            try need(4, "phone NAME passcode yes|no")
            guard w[3] == "yes" || w[3] == "no" else { throw ScenarioError(line: 0, "passcode is yes or no") }
            self = .passcode(w[1], w[3] == "yes")
        case ("phone", _, "wallet"):
            try need(5, "phone NAME wallet device|library|pass|watch|can-add VALUE")
            var probe = WalletState()
            do { try probe.set(w[3], w[4]) } catch { throw ScenarioError(line: 0, error.message) }
            self = .wallet(w[1], field: w[3], value: w[4])
        case ("expect", _, "answer"):
            try need(4, "expect PHONE answer approved|denied [REASON] | CODE")
            self = .expectAnswer(w[1], w[3], reason: w.count > 4 ? w[4] : nil)
        case ("expect", _, "request"):
            try need(4, "expect PHONE request pending|approved|denied|expired")
            guard let s = ApprovalStatus(rawValue: w[3]) else { throw ScenarioError(line: 0, "a request is pending, approved, denied or expired") }
            self = .expectRequest(w[1], s)
        case ("expect", _, "inbox"):
            try need(4, "expect PHONE inbox N")
            guard let n = Int(w[3]), n >= 0 else { throw ScenarioError(line: 0, "\"\(w[3])\" is not a count") }
            self = .expectInbox(w[1], n)
        case ("expect", _, "unlocks"):
            try need(4, "expect PHONE unlocks N")
            guard let n = Int(w[3]), n >= 0 else { throw ScenarioError(line: 0, "\"\(w[3])\" is not a count") }
            self = .expectUnlocks(w[1], n)
        case ("expect", _, "notification"):
            try need(5, "expect PHONE notification type|message|location|userAgent|remoteIp|payload VALUE|null")
            guard ["type", "message", "location", "userAgent", "remoteIp", "payload"].contains(w[3]) else {
                throw ScenarioError(line: 0, "a notification field is type, message, location, userAgent, remoteIp or payload")
            }
            self = .expectNotification(w[1], field: w[3], value: w[4...].joined(separator: " ").replacingOccurrences(of: "'", with: "\""))
        case ("expect", _, "wallet"):
            try need(4, "expect PHONE wallet OUTCOME")
            guard let o = WalletOutcome(rawValue: w[3]) else {
                throw ScenarioError(line: 0, "wallet outcomes: \(WalletOutcome.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self = .expectWallet(w[1], o)
        default: return nil
        }
    }
}

extension World {
    func run(_ line: ApprovalLine) async throws {
        switch line {
        case .request(let name, _, let lockName, var request):
            let p = try phone(name)
            request.lock = Hex.encode(try lock(lockName).group)
            switch await p.requestUnlock(request) {
            case .success(let v): await deliverApprovals(v, approver: request.approver)
            case .failure(let e):
                if case .refused(_, let code, let d) = e, let c = TrustError.Code(rawValue: code) { throw TrustError(c, d) }
                throw StepFailure("the request failed: \(e.description)")
            }
        case .fetch(let name):
            let p = try phone(name)
            _ = await p.fetchApprovals()
            await p.fetchUnlocks()
        case .approve(let name, let choice):
            let p = try phone(name)
            var number: Int?
            switch choice {
            case .none: break
            case .number(let n): number = n
            case .right, .wrong:
                guard let v = p.approvals.inbox.first else { throw StepFailure("\(name) has no pending approval request") }
                guard let shown = phones.values.lazy.compactMap({ $0.approvals.requests.first { $0.id == v.id }?.challenge }).first else {
                    throw StepFailure("request \(v.id) shows no number on the requester's side (type \(v.pushType.rawValue))")
                }
                number = choice == .right ? shown : v.numbersChallenge?.first { $0 != shown }
            }
            await deliverUnlocks(await p.approve(number))
        case .deny(let name):
            await deliverUnlocks(try await phone(name).deny())
        case .biometrics(let name, let b): try phone(name).approvals.biometrics = b
        case .passcode(let name, let set): try phone(name).approvals.passcodeSet = set
        case .wallet(let name, let field, let value):
            let p = try phone(name)
            var w = p.approvals.wallet
            do { try w.set(field, value) } catch { throw ScenarioError(line: 0, error.message) }
            p.approvals.wallet = w
        case .expectAnswer(let name, let want, let reason):
            let have: String
            switch try phone(name).approvals.lastAnswer {
            case nil: throw StepFailure("\(name) has not answered a request")
            case .answered(let v)?:
                have = v.status.rawValue + (v.denyReason.map { " " + $0 } ?? "")
                if v.status.rawValue == want && (reason == nil || v.denyReason == reason) { return }
            case .refused(let code, let message)?:
                have = "\(code) (\(message))"
                if code == want { return }
            }
            throw StepFailure("expected the answer \(want)\(reason.map { " " + $0 } ?? ""), it was \(have)")
        case .expectRequest(let name, let want):
            let p = try phone(name)
            guard let mine = p.approvals.lastRequestID else { throw StepFailure("\(name) has made no request") }
            guard case .success(let now) = await p.request(id: mine) else { throw StepFailure("cannot read request \(mine)") }
            if now.status != want { throw StepFailure("expected request \(mine) \(want.rawValue), the service says \(now.status.rawValue)") }
        case .expectInbox(let name, let n):
            let have = try phone(name).approvals.inbox.count
            if have != n { throw StepFailure("expected \(n) pending request(s) on \(name), it shows \(have)") }
        case .expectUnlocks(let name, let n):
            let have = try phone(name).approvals.unlockCount
            if have != n { throw StepFailure("expected \(n) unlock command(s) on \(name), it holds \(have)") }
        case .expectNotification(let name, let field, let want):
            guard let v = try phone(name).approvals.inbox.first else { throw StepFailure("\(name) has no pending approval request") }
            let info = try v.contextInfo.map { try ContextInfo(parsing: $0) }
            let have: String? = switch field {
            case "type": v.pushType.rawValue
            case "message": v.message
            case "location": info?.location.map { "\($0.latitude),\($0.longitude)" }
            case "userAgent": info?.userAgent
            case "remoteIp": info?.remoteIp
            default: v.customPayload
            }
            if (have ?? "null") != want { throw StepFailure("expected notification \(field) \(want), it is \(have ?? "null")") }
        case .expectWallet(let name, let want):
            let p = try phone(name)
            let d = WalletProvisioning.decide(p.approvals.wallet)
            if d.outcome != want { throw StepFailure("expected wallet \(want.rawValue), the decision tree says \(d)") }
        }
    }

    /// The trust service pushes a new request to every device of its approver (through the relay,
    /// with its faults); the phone that gets the push fetches its inbox.
    func deliverApprovals(_ request: ApprovalView, approver: String) async {
        await push(ApprovalPush.data(id: request.id, pushType: request.pushType, message: nil, expiresAt: request.expiresAt, requester: request.requester),
                   to: users.filter { $0.value == approver }.map(\.key))
    }

    /// … and an answered request to its requester, whose phone then fetches the unlock command.
    func deliverUnlocks(_ answered: ApprovalOutcome?) async {
        guard case .answered(let v)? = answered else { return }
        await push(ApprovalPush.data(id: v.id, pushType: v.pushType, message: nil, expiresAt: v.expiresAt, requester: v.requester), to: [v.requester])
    }

    func push(_ data: [String: String], to devices: [String]) async {
        for device in devices.sorted() {
            for token in notifier.tokens(of: device) { _ = try? await relay.send(PushMessage(token: token, data: data)) }
        }
    }
}
