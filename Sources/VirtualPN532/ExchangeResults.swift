import ByteCore
import Foundation

/// Where a card's answer, made on the card queue, meets the chip on the I/O thread: answers by
/// exchange id, the one exchange still wanted (a late answer to a cancelled one is dropped), and
/// the one the I/O thread is briefly waiting on (`waitForQuickAnswer`).
final class ExchangeResults: Sendable {
    private struct State {
        var results: [UInt64: [UInt8]] = [:]
        /// The exchange whose answer is still wanted; 0 for none.
        var active: UInt64 = 0
        /// The exchange the I/O thread is waiting on for a quick answer, 0 for none.
        var waiting: UInt64 = 0
    }
    /// Every change wakes the I/O thread if it waits for a quick answer.
    private let state = Monitor(State())

    /// Exchange `id` starts; the I/O thread waits for its answer a moment.
    func begin(_ id: UInt64) { state.withLock { $0.active = id; $0.waiting = id } }

    /// Waits until exchange `id` is answered or `deadline` passes; true when it was answered.
    func waitForQuickAnswer(_ id: UInt64, until deadline: Date) -> Bool {
        state.wait(until: deadline, for: { $0.results[id] != nil }, then: { _, answered in answered })
    }

    /// The I/O thread no longer waits (its answer, if late, wakes the I/O thread instead).
    func stopWaiting() { state.withLock { $0.waiting = 0 } }

    /// The card answered exchange `id`: kept if still wanted. True when the I/O thread waits for it.
    func deliver(_ response: [UInt8], for id: UInt64) -> Bool {
        state.withLock { s in
            if s.active == id { s.results[id] = response }
            return s.waiting == id
        }
    }

    func take(_ id: UInt64) -> [UInt8]? { state.withLock { $0.results.removeValue(forKey: id) } }

    func has(_ id: UInt64) -> Bool { state.withLock { $0.results[id] != nil } }

    /// A new command or a host ACK ended the wait: drop its answer, whatever comes later.
    func cancel(_ id: UInt64) {
        state.withLock { s in
            s.results.removeValue(forKey: id)
            if s.active == id { s.active = 0 }
        }
    }
}
