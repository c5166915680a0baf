import Foundation

/// The bolt: secured, unsecured until a relock time, or jammed. A pure value: every event comes
/// with its time, and the answer is the list of things the hardware should do.
public struct LockStateMachine: Equatable, Sendable, Codable {
    public enum State: Equatable, Sendable, Codable {
        case secured
        case unsecured(relockAt: Date)
        case jammed
    }

    public enum Event: Equatable, Sendable {
        /// Access granted: unsecure for `relockTime`.
        case grant
        /// Time passed (a timer tick).
        case tick
        /// The bolt is stuck (hardware fault, or injected by a test).
        case jam
        /// The fault was cleared: the bolt is secured again.
        case clearJam
        /// Secure at once (e.g. a grant that could not be recorded).
        case secureNow
    }

    public enum Action: Equatable, Sendable {
        case unsecure(relockAt: Date)
        case secure
        case reportJammed
    }

    public private(set) var state: State = .secured
    public var relockTime: TimeInterval

    public init(relockTime: TimeInterval, state: State = .secured) {
        self.relockTime = relockTime
        self.state = state
    }

    @discardableResult
    public mutating func handle(_ event: Event, at now: Date) -> [Action] {
        switch (state, event) {
        case (.jammed, .clearJam):
            state = .secured
            return [.secure]
        case (.jammed, _):
            return [.reportJammed]
        case (_, .jam):
            state = .jammed
            return [.reportJammed]
        case (_, .grant):
            let at = now.addingTimeInterval(relockTime)
            state = .unsecured(relockAt: at)
            return [.unsecure(relockAt: at)]
        case (.unsecured, .secureNow):
            state = .secured
            return [.secure]
        case (.unsecured(let at), .tick) where now >= at:
            state = .secured
            return [.secure]
        case (_, .tick), (_, .clearJam), (_, .secureNow):
            return []
        }
    }

    /// The state as of `now` (an unsecured lock past its relock time reads as secured).
    public func state(at now: Date) -> State {
        if case .unsecured(let at) = state, now >= at { return .secured }
        return state
    }

    /// EXCHANGE reader status (ALIRO-FACTS): 0100 secured, 0101 unsecured, 0102 jammed.
    public func readerStatus(at now: Date) -> UInt16 {
        switch state(at: now) {
        case .secured: return 0x0100
        case .unsecured: return 0x0101
        case .jammed: return 0x0102
        }
    }

    public func name(at now: Date) -> String {
        switch state(at: now) {
        case .secured: return "secured"
        case .unsecured: return "unsecured"
        case .jammed: return "jammed"
        }
    }
}
