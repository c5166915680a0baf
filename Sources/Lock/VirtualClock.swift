import Foundation
import Synchronization

/// The lock's clock. In CI it is virtual: set to any time and advanced by hand, frozen between.
/// On a bench it can run: system time plus an offset the operator sets. The engine and the state
/// machine never read it themselves; the lock passes `now()` in.
public final class VirtualClock: Sendable {
    public enum Mode: Equatable, Sendable, Codable {
        /// Stands still at this time until set or advanced.
        case frozen(Date)
        /// Follows the system clock shifted by this many seconds.
        case running(offset: TimeInterval)
    }

    private let state: Mutex<Mode>
    private let systemNow: @Sendable () -> Date

    public init(_ mode: Mode, systemNow: @escaping @Sendable () -> Date = Date.init) {
        state = Mutex(mode)
        self.systemNow = systemNow
    }

    public var mode: Mode { state.withLock { $0 } }

    public func now() -> Date {
        switch mode {
        case .frozen(let d): return d
        case .running(let offset): return systemNow().addingTimeInterval(offset)
        }
    }

    /// Sets the time (keeps the mode: a running clock keeps running from there).
    public func set(_ time: Date) {
        let system = systemNow()
        state.withLock { mode in
            switch mode {
            case .frozen: mode = .frozen(time)
            case .running: mode = .running(offset: time.timeIntervalSince(system))
            }
        }
    }

    /// Puts the mode back (a change that could not be saved is undone).
    public func reset(to mode: Mode) {
        state.withLock { $0 = mode }
    }

    /// Moves the time by `seconds` (negative moves it back).
    public func advance(_ seconds: TimeInterval) {
        state.withLock { mode in
            switch mode {
            case .frozen(let d): mode = .frozen(d.addingTimeInterval(seconds))
            case .running(let o): mode = .running(offset: o + seconds)
            }
        }
    }
}
