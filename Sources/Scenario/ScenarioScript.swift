import Codecs
import Foundation
import OfflineUnlock
import TrustModel

/// A scenario: lines in the style of the lock's console, one actor command or expectation per
/// line, `#` comments. docs/trust.md lists every line; the shipped ones are in `scenarios/`.
///
///     clock set 2026-03-02T08:00:00Z
///     lock front
///     phone alice user alice poll-every 8h
///     grant add g1 alice front
///     phone alice login
///     tap alice front expect granted
///     phone alice offline
///     clock advance 9h
///     tap alice front expect denied expired
public struct ScenarioScript: Sendable {
    public var name: String
    public var steps: [Step]

    public struct Step: Sendable {
        public var line: Int
        public var text: String
        public var command: Command
    }

    public enum Expectation: Sendable, Equatable {
        case granted
        case denied(DenyReason?)

        public var text: String {
            switch self {
            case .granted: return "granted"
            case .denied(let r): return "denied" + (r.map { " " + $0.rawValue } ?? "")
            }
        }
    }

    public enum Command: Sendable {
        case clockSet(Date)
        case clockAdvance(TimeInterval)
        case site(String, String)
        case lock(String)
        case phone(String, user: String, options: PhoneOptionsLine)
        case grantAdd(String, user: String, locks: [String], schedules: [String])
        case grantModify(String, locks: [String]?, schedules: [String]?)
        case grantRevoke(String, reason: String)
        case credential(String, CredentialState, reason: String?)
        case phoneLogin(String)
        case phonePoll(String)
        case phoneOffline(String)
        case phoneOnline(String)
        case tap(String, lock: String, Expectation)
        case expectKeys(String, Int)
        case expectIteration(String, grant: String, Int)
        case expectRevocation(String, UInt64?)
        case expectError(String, String?)
        case expectEvent(String, String, trigger: String?)
        case expectNoEvent(String, String, trigger: String?)
        case expectRefused(code: String, Box)
        case runUntil(String, event: String, within: TimeInterval)
        /// Push approval and wallet lines (ApprovalLines.swift).
        case approval(ApprovalLine)
        /// Push and wake-up lines (ScenarioScript+Push.swift).
        case push(PushLine)
    }

    /// Indirection for `expect refused …`, which wraps another command.
    public final class Box: Sendable {
        public let command: Command
        init(_ c: Command) { command = c }
    }

    public struct PhoneOptionsLine: Sendable, Equatable {
        public var pollEvery: TimeInterval = 8 * 3600
        public var autoRecover = true
        public var pollOnTriggers = true
    }

    public init(parsing text: String, name: String) throws(ScenarioError) {
        self.name = name
        guard text.utf8.count <= 1 << 20 else { throw ScenarioError(line: 0, "the scenario is larger than 1 MiB") }
        var steps = [Step]()
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let words: [String]
            do { words = try Self.words(line) } catch { throw ScenarioError(line: i + 1, error.message) }
            if words.isEmpty { continue }
            do {
                steps.append(Step(line: i + 1, text: raw.trimmingCharacters(in: .whitespaces), command: try Self.command(words)))
            } catch {
                throw ScenarioError(line: i + 1, "\(error.message) — in \"\(raw.trimmingCharacters(in: .whitespaces).prefix(120))\"")
            }
        }
        guard steps.count <= 100_000 else { throw ScenarioError(line: 0, "more than 100,000 steps") }
        // A scenario that does nothing would pass, and say nothing was checked as "1 passed".
        guard !steps.isEmpty else { throw ScenarioError(line: 0, "the scenario has no steps (only blank lines or comments); a scenario's lines are actor commands and expectations, docs/trust.md") }
        self.steps = steps
    }

    /// Words separated by blanks; "double quotes" keep blanks.
    static func words(_ line: String) throws(ScenarioError) -> [String] {
        var out = [String](), current = "", quoted = false, any = false
        for ch in line {
            if ch == "\"" { quoted.toggle(); any = true; continue }
            if !quoted && (ch == " " || ch == "\t" || ch == "\r") {
                if any { out.append(current); current = ""; any = false }
                continue
            }
            current.append(ch); any = true
        }
        guard !quoted else { throw ScenarioError(line: 0, "a quote is not closed") }
        if any { out.append(current) }
        return out
    }

    static let usage = """
        clock set TIME | clock advance DURATION | site SETTING VALUE | lock NAME | \
        phone NAME user USER [poll-every DURATION] [no-auto-recover] [no-trigger-polls] | \
        phone NAME login|poll|offline|online | grant add ID USER LOCK… [schedule "DAYS HH:MM-HH:MM"]… | \
        grant modify ID [locks LOCK…] [schedule …]… | grant revoke ID reason TEXT | \
        credential suspend|resume|deactivate|delete PHONE [reason TEXT] | \
        tap PHONE LOCK expect granted|denied [REASON] | expect PHONE keys N | expect PHONE iteration GRANT N | \
        expect PHONE revocation N|none | expect PHONE error CODE|none | expect PHONE [no-]event KIND [TRIGGER] | \
        expect refused CODE COMMAND… | run until PHONE polls|refreshes|reauthorizes [within DURATION] | \(pushUsage) | \
        unlock request PHONE from USER LOCK [type T] [message TEXT] [ttl D] [context JSON] [payload JSON] | \
        phone NAME fetch|approve [N|right|wrong]|deny|biometric B|passcode yes|no|wallet FIELD VALUE | \
        expect PHONE answer|request|inbox|unlocks|wallet|notification …
        """

    static func command(_ w: [String]) throws(ScenarioError) -> Command {
        if let c = try pushCommand(w) { return c }
        func need(_ n: Int, _ form: String) throws(ScenarioError) { if w.count < n { throw ScenarioError(line: 0, "usage: \(form)") } }
        func duration(_ s: String) throws(ScenarioError) -> TimeInterval {
            guard let d = DurationText.parse(s), d >= 0 else { throw ScenarioError(line: 0, "\"\(s)\" is not a duration like 90s, 30m, 8h, 7d") }
            return d
        }
        func int(_ s: String) throws(ScenarioError) -> Int {
            guard let n = Int(s), n >= 0, n < 1 << 40 else { throw ScenarioError(line: 0, "\"\(s)\" is not a count") }
            return n
        }
        if let a = try ApprovalLine(words: w) { return .approval(a) }
        switch (w[0], w.count > 1 ? w[1] : "") {
        case ("clock", "set"):
            try need(3, "clock set 2026-03-02T08:00:00Z")
            guard let d = RFC3339.parse(w[2]) else { throw ScenarioError(line: 0, "\"\(w[2])\" is not an RFC 3339 time like 2026-03-02T08:00:00Z") }
            return .clockSet(d)
        case ("clock", "advance"):
            try need(3, "clock advance 9h")
            return .clockAdvance(try duration(w[2]))
        case ("site", _):
            try need(3, "site SETTING VALUE (\(TrustSettings.names.joined(separator: ", ")))")
            return .site(w[1], w[2])
        case ("lock", _):
            try need(2, "lock NAME")
            return .lock(w[1])
        case ("phone", _):
            try need(3, "phone NAME user USER … | phone NAME login|poll|offline|online")
            switch w[2] {
            case "user":
                try need(4, "phone NAME user USER [poll-every DURATION] [no-auto-recover] [no-trigger-polls]")
                var o = PhoneOptionsLine(), i = 4
                while i < w.count {
                    switch w[i] {
                    case "poll-every": try need(i + 2, "poll-every DURATION"); o.pollEvery = try duration(w[i + 1]); i += 2
                    case "no-auto-recover": o.autoRecover = false; i += 1
                    case "no-trigger-polls": o.pollOnTriggers = false; i += 1
                    default: throw ScenarioError(line: 0, "unknown phone option \"\(w[i])\"")
                    }
                }
                return .phone(w[1], user: w[3], options: o)
            case "login": return .phoneLogin(w[1])
            case "poll": return .phonePoll(w[1])
            case "offline": return .phoneOffline(w[1])
            case "online": return .phoneOnline(w[1])
            default: throw ScenarioError(line: 0, "unknown phone command \"\(w[2])\"; login, poll, offline, online, or user USER")
            }
        case ("grant", "add"):
            try need(5, "grant add ID USER LOCK… [schedule \"mon-fri 08:00-18:00\"]…")
            let (locks, schedules) = try lockAndSchedules(Array(w[4...]))
            guard !locks.isEmpty else { throw ScenarioError(line: 0, "a grant names at least one lock") }
            return .grantAdd(w[2], user: w[3], locks: locks, schedules: schedules)
        case ("grant", "modify"):
            try need(4, "grant modify ID [locks LOCK…] [schedule …]…")
            var rest = Array(w[3...]), locks: [String]?
            if rest.first == "locks" {
                rest.removeFirst()
                let (l, _) = try lockAndSchedules(rest)
                locks = l
                rest = Array(rest.drop(while: { $0 != "schedule" && $0 != "no-schedule" }))
            }
            var schedules: [String]?
            if rest.first == "no-schedule" { schedules = [] } else if !rest.isEmpty { schedules = try lockAndSchedules(rest).1 }
            return .grantModify(w[2], locks: locks, schedules: schedules)
        case ("grant", "revoke"):
            try need(5, "grant revoke ID reason \"TEXT\"")
            guard w[3] == "reason" else { throw ScenarioError(line: 0, "usage: grant revoke ID reason \"TEXT\" (a revocation names its reason)") }
            return .grantRevoke(w[2], reason: w[4...].joined(separator: " "))
        case ("credential", _):
            try need(3, "credential suspend|resume|deactivate|delete PHONE [reason TEXT]")
            let state: CredentialState
            switch w[1] {
            case "suspend": state = .suspended
            case "resume": state = .active
            case "deactivate": state = .deactivated
            case "delete": state = .deleted
            default: throw ScenarioError(line: 0, "credential \(w[1])? suspend, resume, deactivate or delete")
            }
            let reason = w.count > 4 && w[3] == "reason" ? w[4...].joined(separator: " ") : nil
            return .credential(w[2], state, reason: reason)
        case ("tap", _):
            try need(5, "tap PHONE LOCK expect granted|denied [REASON]")
            guard w[3] == "expect" else { throw ScenarioError(line: 0, "usage: tap PHONE LOCK expect granted|denied [REASON]") }
            switch w[4] {
            case "granted": return .tap(w[1], lock: w[2], .granted)
            case "denied":
                guard w.count > 5 else { return .tap(w[1], lock: w[2], .denied(nil)) }
                guard let r = DenyReason(rawValue: w[5]) else {
                    throw ScenarioError(line: 0, "unknown deny reason \"\(w[5])\"; one of \(DenyReason.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return .tap(w[1], lock: w[2], .denied(r))
            default: throw ScenarioError(line: 0, "expect granted or denied, not \"\(w[4])\"")
            }
        case ("expect", "refused"):
            try need(4, "expect refused CODE COMMAND…")
            return .expectRefused(code: w[2], Box(try command(Array(w[3...]))))
        case ("expect", _):
            try need(3, "expect PHONE keys|iteration|revocation|error|event …")
            let p = w[1]
            switch w[2] {
            case "keys": try need(4, "expect PHONE keys N"); return .expectKeys(p, try int(w[3]))
            case "iteration": try need(5, "expect PHONE iteration GRANT N"); return .expectIteration(p, grant: w[3], try int(w[4]))
            case "revocation":
                try need(4, "expect PHONE revocation N|none")
                return .expectRevocation(p, w[3] == "none" ? nil : UInt64(try int(w[3])))
            case "error": try need(4, "expect PHONE error CODE|none"); return .expectError(p, w[3] == "none" ? nil : w[3])
            case "event": try need(4, "expect PHONE event KIND [TRIGGER]"); return .expectEvent(p, w[3], trigger: w.count > 4 ? w[4] : nil)
            case "no-event": try need(4, "expect PHONE no-event KIND [TRIGGER]"); return .expectNoEvent(p, w[3], trigger: w.count > 4 ? w[4] : nil)
            default: throw ScenarioError(line: 0, "expect PHONE \(w[2])? keys, iteration, revocation, error or event")
            }
        case ("run", "until"):
            try need(4, "run until PHONE polls|refreshes|reauthorizes [within DURATION]")
            guard ["polls", "refreshes", "reauthorizes"].contains(w[3]) else {
                throw ScenarioError(line: 0, "run until PHONE \(w[3])? polls, refreshes or reauthorizes")
            }
            var within: TimeInterval = 7 * 86400
            if w.count > 4 {
                guard w[4] == "within", w.count > 5 else { throw ScenarioError(line: 0, "usage: run until PHONE EVENT within DURATION") }
                within = try duration(w[5])
            }
            return .runUntil(w[2], event: w[3], within: within)
        default:
            throw ScenarioError(line: 0, "unknown command \"\(w.prefix(2).joined(separator: " "))\"; lines are: \(usage)")
        }
    }

    static func lockAndSchedules(_ w: [String]) throws(ScenarioError) -> ([String], [String]) {
        var locks = [String](), schedules = [String](), i = 0
        while i < w.count {
            if w[i] == "schedule" {
                guard i + 1 < w.count else { throw ScenarioError(line: 0, "schedule needs \"DAYS HH:MM-HH:MM\"") }
                schedules.append(w[i + 1]); i += 2
            } else if w[i] == "no-schedule" {
                i += 1
            } else {
                if !schedules.isEmpty { throw ScenarioError(line: 0, "locks come before schedules") }
                locks.append(w[i]); i += 1
            }
        }
        return (locks, schedules)
    }
}

/// A scenario that cannot run as written (exit 2), with its line.
public struct ScenarioError: Error, CustomStringConvertible, Sendable {
    public var line: Int
    public var message: String
    public init(line: Int, _ message: String) { self.line = line; self.message = message }
    public var description: String { line > 0 ? "line \(line): \(message)" : message }
}

