import Foundation
import Synchronization
import Lock
import TrustModel

/// The one clock of a scenario. The trust service and every phone read it; every lock's own
/// clock (the lock path is unchanged: `EmulatedLock` keeps its `VirtualClock`) is set and
/// advanced with it in the same call, so all actors always agree on the time. Frozen (virtual:
/// nine hours pass in one call) or running from the system clock with an offset (real radios).
public final class ScenarioClock: TrustClock, Sendable {
    public let master: VirtualClock
    private let locks = Mutex<[EmulatedLock]>([])

    public init(_ mode: VirtualClock.Mode) { master = VirtualClock(mode) }

    public func now() -> Date { master.now() }

    /// A lock joins: its clock is set to the scenario's time (trusted, as an operator would).
    func attach(_ l: EmulatedLock) throws {
        try l.setClock(now(), trusted: true)
        locks.withLock { $0.append(l) }
    }

    public func set(_ time: Date) throws {
        master.set(time)
        for l in attached { try l.setClock(time, trusted: true) }
    }

    public func advance(_ seconds: TimeInterval) throws {
        master.advance(seconds)
        for l in attached { try l.advanceClock(seconds) }
    }

    private var attached: [EmulatedLock] { locks.withLock { $0 } }
}
