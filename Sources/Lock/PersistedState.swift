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

/// Loads and saves `PersistedLockState`.
public struct StateStore: Sendable {
    public static let fileName = "state.json"
    public let path: String

    public init(directory: String) { path = directory + "/" + Self.fileName }

    public func load() throws(LockError) -> PersistedLockState? {
        guard let bytes = try DurableFile.read(path) else { return nil }
        do { return try JSONDecoder().decode(PersistedLockState.self, from: Data(bytes)) } catch {
            throw LockError(.corruptState, "\(path): \(LockConfiguration.describe(error))")
        }
    }

    public func save(_ state: PersistedLockState) throws(LockError) {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        let data: Data
        do { data = try e.encode(state) } catch { throw LockError(.corruptState, "cannot encode state: \(error)") }
        try DurableFile.writeAtomically(Array(data), to: path)
    }
}
