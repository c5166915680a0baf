import ByteCore
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

/// Loads and saves `PersistedLockState`, authenticated: the file is
/// `{"mac":"<64 hex>","state":<state JSON>}` with mac = HMAC-SHA256(K, "lockbench state v1\n" ‖
/// the state JSON bytes as written), K = HMAC-SHA256(audit key, "lockbench state key"). A state
/// file edited, swapped for another lock's, or written without the key is refused (`corrupt_state`,
/// with `lockbench lock reset` as the way out) instead of being believed.
public struct StateStore: Sendable {
    public static let fileName = "state.json"
    public let path: String
    let io: FileIO
    private let macKey: [UInt8]

    /// `auditKey` is the lock's 32-byte audit key (`AuditLog.openKey`).
    public init(directory: String, auditKey: [UInt8], io: FileIO = .system) {
        path = directory + "/" + Self.fileName
        self.io = io
        macKey = Primitives.hmacSHA256(key: auditKey, message: Array("lockbench state key".utf8))
    }

    static let prefix = Array("{\"mac\":\"".utf8), middle = Array("\",\"state\":".utf8), suffix = Array("}\n".utf8)

    private func mac(_ body: [UInt8]) -> [UInt8] {
        Primitives.hmacSHA256(key: macKey, message: Array("lockbench state v1\n".utf8) + body)
    }

    public func load() throws(LockError) -> PersistedLockState? {
        guard let bytes = try DurableFile.read(path) else { return nil }
        let macLength = 64
        guard bytes.count > Self.prefix.count + macLength + Self.middle.count + Self.suffix.count,
              bytes.starts(with: Self.prefix), bytes.suffix(Self.suffix.count).elementsEqual(Self.suffix),
              bytes[(Self.prefix.count + macLength)...].starts(with: Self.middle),
              let recorded = String(bytes: bytes[Self.prefix.count..<(Self.prefix.count + macLength)], encoding: .utf8).flatMap(Hex.decode) else {
            throw LockError(.corruptState, "\(path) is not an authenticated LockBench state file (edited, or written by an older LockBench); to start the lock afresh (audited), run `lockbench lock reset --config FILE`")
        }
        let body = Array(bytes[(Self.prefix.count + macLength + Self.middle.count)..<(bytes.count - Self.suffix.count)])
        guard Primitives.constantTimeEqual(mac(body), recorded) else {
            throw LockError(.corruptState, "\(path) does not verify with this lock's audit key (edited, or another lock's); to start the lock afresh (audited), run `lockbench lock reset --config FILE`")
        }
        let state: PersistedLockState
        do { state = try JSONDecoder().decode(PersistedLockState.self, from: Data(body)) } catch {
            throw LockError(.corruptState, "\(path): \(LockConfiguration.describe(error, decoding: PersistedLockState.self, in: Data(body)))")
        }
        try state.checkTimes(path: path)
        return state
    }

    public func save(_ state: PersistedLockState) throws(LockError) {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        let body: [UInt8]
        do { body = Array(try e.encode(state)) } catch { throw LockError(.corruptState, "cannot encode state: \(error)") }
        let file = Self.prefix + Array(Hex.encode(mac(body)).utf8) + Self.middle + body + Self.suffix
        try DurableFile.writeAtomically(file, to: path, io: io)
    }
}
