import Foundation

/// The lock's clock. In CI it is virtual: set to any time and advanced by hand, frozen between.
/// On a bench it can run: system time plus an offset the operator sets. The engine and the state
/// machine never read it themselves; the lock passes `now()` in.
public final class VirtualClock: @unchecked Sendable {
    public enum Mode: Equatable, Sendable, Codable {
        /// Stands still at this time until set or advanced.
        case frozen(Date)
        /// Follows the system clock shifted by this many seconds.
        case running(offset: TimeInterval)
    }

    private let lock = NSLock()
    private var _mode: Mode
    private let systemNow: () -> Date

    public init(_ mode: Mode, systemNow: @escaping () -> Date = Date.init) {
        _mode = mode
        self.systemNow = systemNow
    }

    public var mode: Mode { lock.lock(); defer { lock.unlock() }; return _mode }

    public func now() -> Date {
        lock.lock(); defer { lock.unlock() }
        switch _mode {
        case .frozen(let d): return d
        case .running(let offset): return systemNow().addingTimeInterval(offset)
        }
    }

    /// Sets the time (keeps the mode: a running clock keeps running from there).
    public func set(_ time: Date) {
        lock.lock(); defer { lock.unlock() }
        switch _mode {
        case .frozen: _mode = .frozen(time)
        case .running: _mode = .running(offset: time.timeIntervalSince(systemNow()))
        }
    }

    /// Puts the mode back (a change that could not be saved is undone).
    public func reset(to mode: Mode) {
        lock.lock(); defer { lock.unlock() }
        _mode = mode
    }

    /// Moves the time by `seconds` (negative moves it back).
    public func advance(_ seconds: TimeInterval) {
        lock.lock(); defer { lock.unlock() }
        switch _mode {
        case .frozen(let d): _mode = .frozen(d.addingTimeInterval(seconds))
        case .running(let o): _mode = .running(offset: o + seconds)
        }
    }
}
