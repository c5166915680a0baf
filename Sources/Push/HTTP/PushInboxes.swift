import Foundation
import Synchronization

/// The phones that reach the relay over HTTP (`phone run`): each token has an inbox the phone
/// long-polls; the relay delivers into it. At most 100 messages wait per inbox, 10,000 inboxes.
public final class PushInboxes: Sendable {
    private struct State {
        var boxes: [String: [[String: String]]] = [:]
        var states: [String: PushAppState] = [:]
    }
    private let state = Mutex(State())

    public let relay: PushRelay

    public init(relay: PushRelay) { self.relay = relay }

    private func locked<T, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T { try state.withLock { (s: inout State) throws(E) -> T in try body(&s) } }

    /// Registers the token with the relay (again: only the app state changes).
    public func open(_ token: String, state: PushAppState = .background) throws(PushRefusal) {
        let known = try locked { (s: inout State) throws(PushRefusal) -> Bool in
            if s.boxes[token] == nil && s.boxes.count >= 10_000 { throw .invalidArgument("the relay holds 10,000 phone inboxes already") }
            let known = s.boxes[token] != nil
            if !known { s.boxes[token] = [] }
            s.states[token] = state
            return known
        }
        if known { return }
        do {
            try relay.register(token: token, device: PushDevice(appState: { [weak self] in self?.state(token) ?? .background }) { [weak self] token, data in
                self?.put(token, data) ?? false
            })
        } catch {
            locked { s in s.boxes[token] = nil; s.states[token] = nil }
            throw error
        }
    }

    public func close(_ token: String) {
        locked { s in s.boxes[token] = nil; s.states[token] = nil }
        relay.unregister(token: token)
    }

    func state(_ token: String) -> PushAppState { locked { s in s.states[token] ?? .background } }

    func put(_ token: String, _ data: [String: String]) -> Bool {
        locked { s in
            guard s.boxes[token] != nil else { return false }
            s.boxes[token]!.append(data)
            if s.boxes[token]!.count > 100 { s.boxes[token]!.removeFirst() }
            return true
        }
    }

    /// What waits for `token`, waiting up to `wait` seconds for something; nil: no such inbox.
    public func collect(_ token: String, wait: TimeInterval) async -> [[String: String]]? {
        let deadline = Date().addingTimeInterval(wait)
        while true {
            let taken = locked { (s: inout State)  -> [[String: String]]? in
                guard let box = s.boxes[token] else { return nil }
                s.boxes[token] = []
                return box
            }
            guard let taken else { return nil }
            if !taken.isEmpty || Date() >= deadline { return taken }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
    }
}
