import Codecs
import Foundation
import OfflineUnlock

/// Everything a lock keeps across restarts, in `state.json` in its state directory, replaced
/// atomically (write temp, fsync, rename, fsync directory) after every transaction.
public struct PersistedLockState: Codable, Equatable, Sendable {
    public static let formatVersion = 1
    public var formatVersion = PersistedLockState.formatVersion
    /// Revocation list and serial, clock high-water mark and trust, cached access documents,
    /// replay window, versions per credential.
    public var engine: EngineState
    public var bolt: LockStateMachine.State = .secured
    public var clock: VirtualClock.Mode
    /// The FAST persistent-key cache, as an opaque blob the protocol layer encodes and decodes.
    public var fastCache: Data?
    /// The last acknowledged audit entry.
    public var auditHead: AuditHead = .empty

    public init(engine: EngineState, clock: VirtualClock.Mode) { self.engine = engine; self.clock = clock }
}

extension PersistedLockState {
    /// Every time in the state is a representable date (years 0000–9999): a state file with `1e300`
    /// (or one written before times were range-checked) is refused as corrupt, not trapped on.
    func checkTimes(path: String) throws(LockError) {
        var times: [(String, Date)] = []
        switch clock {
        case .frozen(let d): times.append(("clock", d))
        case .running(let offset): times.append(("clock offset", Date().addingTimeInterval(offset.isFinite ? offset : .infinity)))
        }
        if let hwm = engine.clock.highWaterMark { times.append(("high-water mark", hwm)) }
        for list in engine.revocationLists.values { times.append(("revocation list issued", list.issued)) }
        if case .unsecured(let at) = bolt { times.append(("bolt relock time", at)) }
        for (what, t) in times where !RFC3339.isRepresentable(t) {
            throw LockError(.corruptState, "\(path): \(what) \(t.timeIntervalSince1970) s since 1970 is not a time between years 0000 and 9999; set the clock (`lockbench clock set`) after fixing or removing the file")
        }
    }
}

/// Loads and saves `PersistedLockState`.
public struct StateStore: Sendable {
    public static let fileName = "state.json"
    public let path: String
    let io: FileIO

    public init(directory: String, io: FileIO = .system) { path = directory + "/" + Self.fileName; self.io = io }

    public func load() throws(LockError) -> PersistedLockState? {
        guard let bytes = try DurableFile.read(path) else { return nil }
        let state: PersistedLockState
        do { state = try JSONDecoder().decode(PersistedLockState.self, from: Data(bytes)) } catch {
            throw LockError(.corruptState, "\(path): \(LockConfiguration.describe(error))")
        }
        try state.checkTimes(path: path)
        return state
    }

    public func save(_ state: PersistedLockState) throws(LockError) {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        let data: Data
        do { data = try e.encode(state) } catch { throw LockError(.corruptState, "cannot encode state: \(error)") }
        try DurableFile.writeAtomically(Array(data), to: path, io: io)
    }
}
