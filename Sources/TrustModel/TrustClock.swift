import Foundation
import Synchronization

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
public final class ManualClock: TrustClock {
    private let time: Mutex<Date>
    public init(_ time: Date) { self.time = Mutex(time) }
    public func now() -> Date { time.withLock { $0 } }
    public func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
    public func set(_ t: Date) { time.withLock { $0 = t } }
}
