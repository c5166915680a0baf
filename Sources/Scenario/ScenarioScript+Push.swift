import Foundation
import OfflineUnlock
import Push


/// The scenario lines for push and wake-up (docs/trust.md lists them):
///
///     push drop 50% | push delay 30s | push throttle 2 | push normal
///     phone NAME force-quit | phone NAME open | phone NAME background | phone NAME rotate-push-token
///     phone NAME subscribe PATH [noData|value|childEvent] [token T] | phone NAME unsubscribe PATH [token T]
///     data set PATH JSON | data fill PATH KEY BYTES | data delete PATH
///     wakeup disable | wakeup enable | wakeup delete | wakeup rule TOKEN|anonymous PATH…|none
///     expect push WORD [PHONE]     (WORD: a fate — delivered, handled, not-handled, dropped, stored,
///                                   expired, discarded, throttled — or the message's s, t or r)
///     expect pushes WORD N [PHONE] (how many records have that fate/field)
///     push send PHONE KEY=VALUE…   (another SDK's push: data without the trust identifier)
public enum PushLine: Sendable {
    case faults(drop: Int?, delay: TimeInterval?, throttle: Int??, reset: Bool)
    case appState(String, PushAppState)
    case rotateToken(String)
    case subscribe(String, path: String, mode: String?, token: String?)
    case unsubscribe(String, path: String, token: String?)
    case dataSet(String, String)
    case dataFill(String, key: String, bytes: Int)
    case dataDelete(String)
    case wakeUpEnabled(Bool)
    case wakeUpDelete
    case wakeUpRule(token: String, paths: [String])
    case expectPush(String, phone: String?, count: Int?)
    case send(String, [String: String])
}

extension ScenarioScript {
    static let pushUsage = """
        push drop N% | push delay DURATION | push throttle N | push normal | push send PHONE KEY=VALUE… | \
        phone NAME force-quit|open|background|rotate-push-token | phone NAME subscribe PATH [MODE] [token T] | \
        phone NAME unsubscribe PATH [token T] | data set PATH JSON | data fill PATH KEY BYTES | data delete PATH | \
        wakeup enable|disable|delete | wakeup rule TOKEN|anonymous PATH…|none | expect push WORD [PHONE] | expect pushes WORD N [PHONE]
        """

    /// A push line, or nil when the words are not one.
    static func pushCommand(_ w: [String]) throws(ScenarioError) -> Command? {
        func need(_ n: Int, _ form: String) throws(ScenarioError) { if w.count < n { throw ScenarioError(line: 0, "usage: \(form)") } }
        func count(_ s: String) throws(ScenarioError) -> Int {
            guard let n = Int(s), n >= 0, n <= 1 << 24 else { throw ScenarioError(line: 0, "\"\(s.prefix(32))\" is not a count (0…16777216)") }
            return n
        }
        func token(_ rest: ArraySlice<String>) throws(ScenarioError) -> String? {
            guard let i = rest.firstIndex(of: "token") else { return nil }
            guard i + 1 < rest.endIndex else { throw ScenarioError(line: 0, "token needs a value") }
            return rest[i + 1]
        }
        switch (w[0], w.count > 1 ? w[1] : "") {
        case ("push", "drop"):
            try need(3, "push drop 50%")
            guard w[2].hasSuffix("%"), let n = Int(w[2].dropLast()), (0...100).contains(n) else { throw ScenarioError(line: 0, "push drop takes a percentage like 50%") }
            return .push(.faults(drop: n, delay: nil, throttle: nil, reset: false))
        case ("push", "delay"):
            try need(3, "push delay 30s")
            guard let d = DurationText.parse(w[2]), d >= 0 else { throw ScenarioError(line: 0, "\"\(w[2])\" is not a duration like 30s") }
            return .push(.faults(drop: nil, delay: d, throttle: nil, reset: false))
        case ("push", "throttle"):
            try need(3, "push throttle N (background pushes per hour) | push throttle off")
            let perHour: Int? = w[2] == "off" ? nil : try count(w[2])
            return .push(.faults(drop: nil, delay: nil, throttle: .some(perHour), reset: false))
        case ("push", "normal"):
            return .push(.faults(drop: nil, delay: nil, throttle: nil, reset: true))
        case ("push", "send"):
            try need(4, "push send PHONE KEY=VALUE…")
            var data = [String: String]()
            for kv in w[3...] {
                let p = kv.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard p.count == 2 else { throw ScenarioError(line: 0, "\"\(kv.prefix(32))\" is not KEY=VALUE") }
                data[String(p[0])] = String(p[1])
            }
            return .push(.send(w[2], data))
        case ("data", "set"):
            try need(4, "data set PATH JSON")
            return .push(.dataSet(w[2], w[3...].joined(separator: " ")))
        case ("data", "fill"):
            try need(5, "data fill PATH KEY BYTES")
            return .push(.dataFill(w[2], key: w[3], bytes: try count(w[4])))
        case ("data", "delete"):
            try need(3, "data delete PATH")
            return .push(.dataDelete(w[2]))
        case ("wakeup", "enable"): return .push(.wakeUpEnabled(true))
        case ("wakeup", "disable"): return .push(.wakeUpEnabled(false))
        case ("wakeup", "delete"): return .push(.wakeUpDelete)
        case ("wakeup", "rule"):
            try need(4, "wakeup rule TOKEN|anonymous PATH…|none")
            return .push(.wakeUpRule(token: w[2] == "anonymous" ? "" : w[2], paths: w[3] == "none" ? [] : Array(w[3...])))
        case ("expect", "push"):
            try need(3, "expect push WORD [PHONE]")
            return .push(.expectPush(w[2], phone: w.count > 3 ? w[3] : nil, count: nil))
        case ("expect", "pushes"):
            try need(4, "expect pushes WORD N [PHONE]")
            return .push(.expectPush(w[2], phone: w.count > 4 ? w[4] : nil, count: try count(w[3])))
        case ("phone", _) where w.count >= 3:
            switch w[2] {
            case "force-quit": return .push(.appState(w[1], .forceQuit))
            case "open": return .push(.appState(w[1], .foreground))
            case "background": return .push(.appState(w[1], .background))
            case "rotate-push-token": return .push(.rotateToken(w[1]))
            case "subscribe":
                try need(4, "phone NAME subscribe PATH [noData|value|childEvent] [token T]")
                let mode = w.count > 4 && w[4] != "token" ? w[4] : nil
                return .push(.subscribe(w[1], path: w[3], mode: mode, token: try token(w[4...])))
            case "unsubscribe":
                try need(4, "phone NAME unsubscribe PATH [token T]")
                return .push(.unsubscribe(w[1], path: w[3], token: try token(w[4...])))
            default: return nil
            }
        default:
            return nil
        }
    }
}
