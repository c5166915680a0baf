import Foundation
import Synchronization

// The change feed's parts that do not depend on the store: the payloads an announcement is
// written as (PostgreSQL: NOTIFY; SQLite: rows of `changes`) and the subscribers they reach.

/// A change as payloads of the change feed: JSON under PostgreSQL's 8000-byte NOTIFY limit,
/// split by devices (SQLite's `changes` rows hold the same payloads).
package enum ChangePayload {
    struct Wire: Codable { var a: [[String]]; var s: UInt64? }
    package static let maxBytes = 7_000

    package static func encode(_ change: TrustChange) -> [String] {
        var out = [String](), current = Wire(a: [], s: change.revocationSerial), size = 0
        for a in change.affected {
            let entrySize = a.device.utf8.count + a.trigger.rawValue.utf8.count + 8
            if size + entrySize > maxBytes && !current.a.isEmpty {
                out.append(json(current)); current = Wire(a: [], s: nil); size = 0
            }
            current.a.append([a.device, a.trigger.rawValue]); size += entrySize
        }
        if !current.a.isEmpty || current.s != nil { out.append(json(current)) }
        return out
    }

    static func json(_ w: Wire) -> String { String(decoding: (try? JSONEncoder().encode(w)) ?? Data("{\"a\":[]}".utf8), as: UTF8.self) }

    /// Nil for anything that is not a payload of ours (the channel is open to every database user).
    package static func decode(_ payload: String) -> TrustChange? {
        guard payload.utf8.count <= 8_000, let w = try? JSONDecoder().decode(Wire.self, from: Data(payload.utf8)) else { return nil }
        var affected = [TrustChange.Affected]()
        for entry in w.a {
            guard entry.count == 2, let trigger = PollTrigger(rawValue: entry[1]) else { return nil }
            affected.append(.init(device: entry[0], trigger: trigger))
        }
        return TrustChange(affected: affected, revocationSerial: w.s)
    }
}

/// Subscribers of the change feed, each an `AsyncStream` (bounded: a slow subscriber loses the
/// oldest changes, never the process's memory).
package final class ChangeFanOut: Sendable {
    private struct State {
        var subscribers: [UUID: AsyncStream<TrustChange>.Continuation] = [:]
        var finished = false
    }
    private let state = Mutex(State())

    package init() {}

    package func subscribe() -> AsyncStream<TrustChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: TrustChange.self, bufferingPolicy: .bufferingNewest(1024))
        let id = UUID()
        let open = state.withLock { s -> Bool in
            if s.finished { return false }
            s.subscribers[id] = continuation
            return true
        }
        if !open { continuation.finish() }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) } }
        return stream
    }

    package func publish(_ change: TrustChange) {
        for c in state.withLock({ Array($0.subscribers.values) }) { c.yield(change) }
    }

    package func finish() {
        for c in state.withLock({ s -> [AsyncStream<TrustChange>.Continuation] in s.finished = true; return Array(s.subscribers.values) }) { c.finish() }
    }
}
