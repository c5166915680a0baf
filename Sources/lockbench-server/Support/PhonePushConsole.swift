import Foundation
import Synchronization
import NIOHTTP1
import TrustPhone

/// The phone's push channel in `phone run --push-relay`: the relay token in use (replaced by
/// `rotate-push-token`) and the wake-up subscriptions it holds (carried over to a new token).
final class PushChannel: Sendable {
    private struct State {
        var inbox: RelayInbox
        var subscriptions: [String: String] = [:]   // path → mode
    }
    private let state: Mutex<State>
    init(_ inbox: RelayInbox) { state = Mutex(State(inbox: inbox)) }
    var inbox: RelayInbox { state.withLock { $0.inbox } }
    func swap(to new: RelayInbox) -> RelayInbox { state.withLock { s in let old = s.inbox; s.inbox = new; return old } }
    var subscriptions: [String: String] { state.withLock { $0.subscriptions } }
    func subscribed(_ path: String, _ mode: String?) { state.withLock { $0.subscriptions[path] = mode } }
}

/// The push and mobile wake-up commands of `phone run --push-relay URL` (stdin), one per line:
///
///     force-quit                     the user force-quits the app: the OS discards background pushes
///     launch                         the app runs again (foreground) and polls
///     rotate-push-token              a new token: opened at the relay and registered with the trust
///                                    service, subscriptions moved to it, then the old one dropped
///     subscribe PATH [MODE]          mobile wake-up subscription (noData, value, childEvent) in --wakeup-app
///     unsubscribe PATH               ends it
struct PhonePushConsole {
    static let verbs = "force-quit, launch, rotate-push-token, subscribe PATH [MODE], unsubscribe PATH"
    static let modes = ["noData", "value", "childEvent"]
    let device: String
    let channel: PushChannel?
    let app: String?
    let say: @Sendable (String, [String: String]) -> Void
    /// Registers the channel's current token with the trust service.
    let register: () async -> Void
    /// Polls the trust service now and reports it (opening the app polls, as the scenario
    /// language's `open` does: pushes discarded while it was force-quit are not lost).
    let poll: () async -> Void

    /// Handles `words` if it is one of these commands; false otherwise.
    func handle(_ words: [String]) async -> Bool {
        guard let verb = words.first, ["force-quit", "launch", "rotate-push-token", "subscribe", "unsubscribe"].contains(verb) else { return false }
        guard let channel else { say("\(verb): start the phone with --push-relay URL", [:]); return true }
        let say = self.say
        do {
            switch verb {
            case "force-quit", "launch":
                let inbox = channel.inbox
                try await inbox.open(state: verb == "force-quit" ? "force-quit" : "foreground")
                say(verb == "force-quit" ? "force-quit" : "launched", [:])
                if verb == "launch" { await poll() }
            case "rotate-push-token":
                // New before old (Tapkey updateRegistrationToken; the wake-up tutorial: subscribe
                // the new id, then unsubscribe the old).
                let new = RelayInbox(baseURL: channel.inbox.baseURL, token: RelayInbox.newToken(device: device))
                try await new.open()
                let old = channel.swap(to: new)
                await register()
                if let app {
                    for (path, mode) in channel.subscriptions {
                        _ = try await new.wakeUp(.PUT, app: app, path: path, mode: mode)
                        _ = try await old.wakeUp(.DELETE, app: app, path: path)
                    }
                }
                try await old.close()
                say("push-token-rotated", ["old": old.token, "new": new.token])
            default:
                guard let app else { say("\(verb): start the phone with --wakeup-app NAME (the relay's `push serve --app NAME`)", [:]); return true }
                guard words.count >= 2, words.count <= 3 else { say("usage: subscribe PATH [MODE] | unsubscribe PATH", [:]); return true }
                let path = words[1], mode = words.count == 3 ? words[2] : nil
                if let mode, !Self.modes.contains(mode) { say("\(verb): mode '\(mode)' is one of \(Self.modes.joined(separator: ", "))", [:]); return true }
                let inbox = channel.inbox
                let subscribe = verb == "subscribe"
                let (status, body) = try await inbox.wakeUp(subscribe ? .PUT : .DELETE, app: app, path: path, mode: mode)
                if status == 204 {
                    channel.subscribed(path, subscribe ? (mode ?? "noData") : nil)
                    say(subscribe ? "subscribed" : "unsubscribed", ["path": path])
                } else {
                    say("\(verb)-refused", ["path": path, "status": String(status), "answer": String(body.prefix(200))])
                }
            }
        } catch {
            say("\(verb)-failed", ["error": "\(error)"])
        }
        return true
    }
}
