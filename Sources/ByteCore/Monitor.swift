import Foundation

/// State shared by threads that block until it changes (a reply arrives, a peer leaves, a stop
/// is asked): a condition variable and the state it guards, for code that runs on threads of
/// its own because a blocking C call or socket read needs one. Async code uses actors or `Mutex`.
///
/// Safe because `state` is reached only inside `withLock` and `wait`, both holding `condition`'s
/// lock, and no reference to it escapes them (`State` is Sendable, so what they return is a copy).
public final class Monitor<State: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var state: State

    public init(_ state: State) { self.state = state }

    /// Runs `body` on the state with the lock held and wakes every waiter (it may have changed it).
    public func withLock<T>(_ body: (inout State) throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.broadcast(); condition.unlock() }
        return try body(&state)
    }

    /// Runs `body` on the state with the lock held and wakes no one: for a change no waiter waits
    /// for (a waiter woken for nothing takes a CPU from the thread that made the change).
    public func withLockQuietly<T>(_ body: (inout State) throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body(&state)
    }

    /// Waits until `ready` holds or `deadline` passes (nil: no deadline), then runs `body` with
    /// the lock held. `body` gets whether `ready` held.
    public func wait<T>(until deadline: Date?, for ready: (State) -> Bool,
                        then body: (inout State, Bool) throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.broadcast(); condition.unlock() }
        while !ready(state) {
            if let deadline {
                if !condition.wait(until: deadline) { break }
            } else {
                condition.wait()
            }
        }
        return try body(&state, ready(state))
    }
}
