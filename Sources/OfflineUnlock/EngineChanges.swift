import Foundation

/// What decisions changed in an `EngineState` since the lock last took the changes
/// (`EngineState.takeChanges`): each cached document, protocol version and replay-window id a
/// decision touched, with its value before the first change and after the last, and the trusted
/// clock and revocation lists as they were before the first decision. In memory only.
///
/// The lock records exactly these in the decision's journal record (`StateDelta`) and undoes them
/// when that record cannot be written (`EngineState.undo`). Neither compares nor copies the whole
/// state: a step-up costs the same on a lock that has met 1 phone as on one that has met 256.
public struct EngineChanges: Sendable {
    public struct Change<Value: Sendable & Equatable>: Sendable {
        /// nil: absent.
        public internal(set) var before: Value?
        public internal(set) var after: Value?
        public var isChange: Bool { before != after }
    }

    /// Cached access documents by credential key (hex).
    public internal(set) var documents: [String: Change<[UInt8]>] = [:]
    /// Highest protocol version by credential key (hex).
    public internal(set) var versions: [String: Change<UInt16>] = [:]
    /// AccessIteration by issuer (kid, hex).
    public internal(set) var iterations: [String: Change<Int>] = [:]
    /// Transaction ids appended to the replay window, in order.
    public internal(set) var appendedTransactions: [String] = []
    /// Ids the window dropped from its front to make room, oldest first (to undo the appends).
    var droppedTransactions: [String] = []
    /// Filled by `takeChanges` when a decision ran since the last take.
    public internal(set) var clock: Change<TrustedClock>?
    public internal(set) var revocationLists: Change<RevocationLists>?
    /// The state was replaced or edited through a public setter (`cachedDocuments`,
    /// `highestVersion`, `recentTransactionIDs`, `OfflineUnlockEngine.state`): which keys changed
    /// is not known, so a record cannot say it — the lock writes a whole snapshot instead.
    public internal(set) var untracked = false
    /// Decisions since the last take (bounded: see `EngineState.noteDecision`).
    var decisions = 0

    public init() {}

    public var isEmpty: Bool {
        documents.isEmpty && versions.isEmpty && iterations.isEmpty && appendedTransactions.isEmpty && clock == nil && revocationLists == nil && !untracked
    }

    mutating func document(_ key: String, from before: [UInt8]?, to after: [UInt8]?) {
        documents[key, default: Change(before: before)].after = after
    }

    mutating func iteration(_ issuer: String, from before: Int?, to after: Int?) {
        iterations[issuer, default: Change(before: before)].after = after
    }

    mutating func version(_ key: String, from before: UInt16?, to after: UInt16?) {
        versions[key, default: Change(before: before)].after = after
    }
}

/// The changes as `EngineState` keeps them: bookkeeping, not state, so two engine states are equal
/// when what they persist is.
struct ChangeLog: Sendable, Equatable {
    var changes = EngineChanges()
    static func == (_: ChangeLog, _: ChangeLog) -> Bool { true }
}
