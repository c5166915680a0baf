import Foundation

/// The one clock every actor reads: trust service, phones and locks. A scenario hands the same
/// instance to all of them, so nine virtual hours pass in one call; `serve --clock system` uses
/// the wall clock.
public protocol TrustClock: Sendable {
    func now() -> Date
}

/// The wall clock.
public struct SystemClock: TrustClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that stands still until moved: tests and benchmarks (scenarios use `ScenarioClock`,
/// which also moves the locks' clocks).
public final class ManualClock: TrustClock, @unchecked Sendable {
    private let lock = NSLock()
    private var time: Date
    public init(_ time: Date) { self.time = time }
    public func now() -> Date { lock.lock(); defer { lock.unlock() }; return time }
    public func advance(_ seconds: TimeInterval) { lock.lock(); time += seconds; lock.unlock() }
    public func set(_ t: Date) { lock.lock(); time = t; lock.unlock() }
}
