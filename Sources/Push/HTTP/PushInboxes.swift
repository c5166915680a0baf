import Foundation

/// The phones that reach the relay over HTTP (`phone run`): each token has an inbox the phone
/// long-polls; the relay delivers into it. At most 100 messages wait per inbox, 10,000 inboxes.
public final class PushInboxes: @unchecked Sendable {
    public let relay: PushRelay
    private let lock = NSLock()
    private var boxes: [String: [[String: String]]] = [:]
    private var states: [String: PushAppState] = [:]

    public init(relay: PushRelay) { self.relay = relay }

    private func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T { lock.lock(); defer { lock.unlock() }; return try body() }

    /// Registers the token with the relay (again: only the app state changes).
    public func open(_ token: String, state: PushAppState = .background) throws(PushRefusal) {
        let known = try locked { () throws(PushRefusal) -> Bool in
            if boxes[token] == nil && boxes.count >= 10_000 { throw .invalidArgument("the relay holds 10,000 phone inboxes already") }
            let known = boxes[token] != nil
            if !known { boxes[token] = [] }
            states[token] = state
            return known
        }
        if known { return }
        do {
            try relay.register(token: token, device: PushDevice(appState: { [weak self] in self?.state(token) ?? .background }) { [weak self] token, data in
                self?.put(token, data) ?? false
            })
        } catch {
            locked { boxes[token] = nil; states[token] = nil }
            throw (error as? PushRefusal) ?? .badDeviceToken
        }
    }

    public func close(_ token: String) {
        locked { boxes[token] = nil; states[token] = nil }
        relay.unregister(token: token)
    }

    func state(_ token: String) -> PushAppState { locked { states[token] ?? .background } }

    func put(_ token: String, _ data: [String: String]) -> Bool {
        locked {
            guard boxes[token] != nil else { return false }
            boxes[token]!.append(data)
            if boxes[token]!.count > 100 { boxes[token]!.removeFirst() }
            return true
        }
    }

    /// What waits for `token`, waiting up to `wait` seconds for something; nil: no such inbox.
    public func collect(_ token: String, wait: TimeInterval) async -> [[String: String]]? {
        let deadline = Date().addingTimeInterval(wait)
        while true {
            let taken = locked { () -> [[String: String]]? in
                guard let box = boxes[token] else { return nil }
                boxes[token] = []
                return box
            }
            guard let taken else { return nil }
            if !taken.isEmpty || Date() >= deadline { return taken }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
    }
}
