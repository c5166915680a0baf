import ByteCore
import Codecs
import Foundation
import LockRuntime
import OfflineUnlock
import TrustModel
import TrustPhone

/// The push-approval and wallet commands of `phone run` (stdin), one per line:
///
///     fetch                          fetch the approval inbox and this phone's unlock commands
///     inbox                          list the pending requests (message, context, numbers)
///     approve [N]                    accept the oldest pending request (N: the number shown on the requester's side)
///     deny                           deny it
///     request-unlock USER LOCK [default|challenge|biometric] [TTL]
///                                    ask USER to let this phone open LOCK (GROUP[:SUB] hex or NAME.reader.json)
///     requests                       this phone's requests and their state
///     biometric match|no-match|none  what the simulated sensor answers
///     passcode yes|no                whether the device has a passcode (device credentials)
///     wallet-state [FIELD VALUE]     the Schlage decision tree on the phone's Wallet; FIELD: device, library, pass, watch, can-add
struct PhoneApprovalConsole {
    static let verbs = "fetch, inbox, approve [N], deny, request-unlock USER LOCK [TYPE] [TTL], requests, biometric, passcode, wallet-state [FIELD VALUE]"
    let phone: VirtualPhone
    let say: @Sendable (String, [String: String]) -> Void

    /// Handles `words` if it is one of these commands; false otherwise.
    func handle(_ words: [String]) async -> Bool {
        guard let verb = words.first else { return false }
        let phone = self.phone, say = self.say
        switch verb {
        case "fetch":
            let r = await phone.fetchApprovals()
            let unlocks = await phone.fetchUnlocks()
            switch r {
            case .success(let new): say("fetched", ["new": String(new.count), "pending": String(phone.approvals.inbox.count), "unlocks": String(unlocks)])
            case .failure(let e): say("fetch-failed", ["error": e.description])
            }
        case "inbox":
            for v in phone.approvals.inbox { say("request", Self.fields(v)) }
            say("inbox", ["pending": String(phone.approvals.inbox.count)])
        case "approve":
            var number: Int?
            if words.count > 1 {
                guard let n = Int(words[1]), (0...999).contains(n) else { say("usage: approve [N] (N: the number shown on the requester's side)", [:]); return true }
                number = n
            }
            let chosen = number
            report(await phone.approve(chosen))
        case "deny":
            report(await phone.deny())
        case "request-unlock":
            guard words.count >= 3 else { say("usage: request-unlock USER LOCK [default|challenge|biometric] [TTL]", [:]); return true }
            let lock: String
            do { lock = try Self.lock(words[2]) } catch { say("request-unlock: \(error)", [:]); return true }
            var request = ApprovalRequest(approver: words[1], lock: lock)
            if words.count > 3 {
                guard let t = PushType(rawValue: words[3]) else { say("request-unlock: the type is default, challenge or biometric", [:]); return true }
                request.pushType = t
            }
            if words.count > 4 {
                guard let d = DurationText.parse(words[4]), d < 1e9 else { say("request-unlock: \"\(words[4])\" is not a duration like 2m", [:]); return true }
                request.ttl = Int(d)
            }
            let r = request
            switch await phone.requestUnlock(r) {
            case .success(let v):
                // The requester's side shows the challenge number (ForgeRock: "the code displayed in the browser").
                say("requested", ["id": v.id, "type": v.pushType.rawValue, "expires": v.expiresAt, "show": v.challenge.map(String.init) ?? "-"])
            case .failure(let e): say("request-failed", ["error": e.description])
            }
        case "requests":
            _ = await phone.fetchUnlocks()
            for v in phone.approvals.requests {
                say("request", ["id": v.id, "status": v.status.rawValue, "lock": v.lock, "unlockUntil": v.unlockValidUntil ?? "-"])
            }
        case "biometric":
            guard words.count == 2, let b = PhoneApprovals.Biometrics(rawValue: words[1]) else { say("usage: biometric match|no-match|none", [:]); return true }
            phone.approvals.biometrics = b
            say("biometric", ["sensor": b.rawValue])
        case "passcode":
            guard words.count == 2, words[1] == "yes" || words[1] == "no" else { say("usage: passcode yes|no", [:]); return true }
            phone.approvals.passcodeSet = words[1] == "yes"
            say("passcode", ["set": words[1]])
        case "wallet-state":
            if words.count == 3 {
                var w = phone.approvals.wallet
                do { try w.set(words[1], words[2]) } catch { say("wallet-state: \(error.message)", [:]); return true }
                phone.approvals.wallet = w
            } else if words.count != 1 {
                say("usage: wallet-state [device|library|pass|watch|can-add VALUE]", [:]); return true
            }
            let d = WalletProvisioning.decide(phone.approvals.wallet)
            say("wallet", ["state": phone.approvals.wallet.summary, "outcome": d.outcome.rawValue,
                           "path": d.path.map { "\($0.decision)\($0.answer ? "y" : "n")" }.joined(separator: ","), "message": d.message])
        default:
            return false
        }
        return true
    }

    func report(_ outcome: ApprovalOutcome) {
        switch outcome {
        case .answered(let v): say(v.status.rawValue, ["id": v.id, "reason": v.denyReason ?? "-"])
        case .refused(let code, let message): say("approval-refused", ["error": code, "message": message])
        }
    }

    /// What the approver sees: ForgeRock's message, contextInfo (each field may be null), custom
    /// payload and, for a challenge, the three numbers.
    static func fields(_ v: ApprovalView) -> [String: String] {
        var f = ["id": v.id, "type": v.pushType.rawValue, "message": v.message ?? "", "expires": v.expiresAt]
        if let c = v.contextInfo, let info = try? ContextInfo(parsing: c) {
            f["location"] = info.location.map { "\($0.latitude),\($0.longitude)" } ?? "unknown"
            f["userAgent"] = info.userAgent ?? "unknown"
            f["remoteIp"] = info.remoteIp ?? "unknown"
        }
        if let p = v.customPayload { f["payload"] = p }
        if let n = v.numbersChallenge { f["numbers"] = n.map(String.init).joined(separator: ",") }
        return f
    }

    /// A lock as GROUP[:SUB] hex, or the group of a NAME.reader.json.
    static func lock(_ text: String) throws -> String {
        if text.hasSuffix(".json") {
            let reader = try SoftwarePhone.trustedReader(text, group: nil)
            return Hex.encode(reader.groupID)
        }
        return text
    }
}
