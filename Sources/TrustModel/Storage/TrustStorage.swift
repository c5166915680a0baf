import Foundation

/// The storage seam. The service speaks only to this protocol: SQLite (`SQLiteTrustStorage`, an
/// embedded file, one instance) and PostgreSQL (`PostgresTrustStorage`, several stateless
/// `trust serve` instances on one database) implement it.
///
/// Every change happens inside `write`: all or nothing, and acknowledged only once durable (SQLite:
/// WAL with `synchronous=FULL`, several writers' bodies sharing one commit). Writers are serialized
/// (SQLite `BEGIN IMMEDIATE`; PostgreSQL: row locks or SERIALIZABLE), which is what keeps a
/// refresh-token family from forking and revocation serials strictly increasing when requests race.
public protocol TrustStorage: Sendable {
    /// Runs `body` in one atomic, durable transaction. A body may run more than once (a retry after
    /// a conflict, or after another body sharing its commit failed): it acts only through the
    /// transaction, and only the run that committed is answered.
    func write<T: Sendable>(_ body: @escaping @Sendable (any TrustTransaction) async throws -> T) async throws -> T
    /// Runs `body` against a consistent snapshot; `body` must not write.
    func read<T: Sendable>(_ body: @Sendable (any TrustTransaction) async throws -> T) async throws -> T
    /// A poll's read (`TrustTransaction.pollState`), in one consistent snapshot. Every poll makes
    /// it, so a backend that can answer it in one round trip overrides the default (`read`).
    func pollState(device: String, family: String?) async throws -> PollState
    func close() async throws
}

/// What a transaction can do: the records of `Records.swift`, by the operations the service needs.
public protocol TrustTransaction: Sendable {
    // The change sequence: the poll cursor. Each call returns a new, higher value.
    func nextSequence() async throws -> Int64
    func currentSequence() async throws -> Int64

    // Site settings (key lifetime, poll interval…), as text.
    func setting(_ name: String) async throws -> String?
    func setSetting(_ name: String, _ value: String) async throws
    /// Removes a setting (nothing happens when there is none).
    func deleteSetting(_ name: String) async throws
    /// The settings whose names start with `prefix`, in name order, at most `limit` of them (an
    /// index kept as one row per entry, read a batch at a time, never whole).
    func settings(prefix: String, limit: Int) async throws -> [(name: String, value: String)]

    func device(_ id: String) async throws -> DeviceRecord?
    func devices(user: String?) async throws -> [DeviceRecord]
    func putDevice(_ device: DeviceRecord) async throws
    func deleteDevice(_ id: String) async throws

    func grant(_ id: String) async throws -> GrantRecord?
    func grants(user: String?) async throws -> [GrantRecord]
    func putGrant(_ grant: GrantRecord) async throws

    func keys(device: String) async throws -> [KeyRecord]
    func keys(grant: String) async throws -> [KeyRecord]
    func putKey(_ key: KeyRecord) async throws
    /// Keys of `device` written after `sequence` (tombstones included).
    func keys(device: String, after sequence: Int64) async throws -> [KeyRecord]

    func revocations() async throws -> [RevocationRecord]
    func replaceRevocations(_ entries: [RevocationRecord]) async throws
    func revocationList() async throws -> RevocationListRecord?
    func putRevocationList(_ list: RevocationListRecord) async throws

    func enrollment(hash: [UInt8]) async throws -> EnrollmentRecord?
    func putEnrollment(_ e: EnrollmentRecord) async throws

    func family(_ id: String) async throws -> TokenFamilyRecord?
    func putFamily(_ f: TokenFamilyRecord) async throws
    func refreshToken(hash: [UInt8]) async throws -> RefreshTokenRecord?
    func putRefreshToken(_ t: RefreshTokenRecord) async throws
    func refreshTokens(family: String) async throws -> [RefreshTokenRecord]
    /// Revokes every family of a device (credential deactivated or deleted, device removed).
    func revokeFamilies(device: String, at: Date, reason: String) async throws

    // Composite operations for the hot paths (polls and rotations, many at once): one round trip
    // each where the backend can. The defaults below compose the single-record operations above,
    // so a backend overrides them only to go faster; the meaning is the same.

    /// Everything a poll decides from, in one consistent read.
    func pollState(device: String, family: String?) async throws -> PollState
    /// The sequence of each device's newest key (absent: no key) and of the revocation list.
    func pollVersions(devices: [String]) async throws -> PollVersions
    /// Takes `count` new sequence numbers; returns the first.
    func reserveSequences(_ count: Int) async throws -> Int64
    func putKeys(_ keys: [KeyRecord]) async throws
    /// Refresh tokens with their families and devices (unknown hashes are left out).
    func rotationStates(hashes: [[UInt8]]) async throws -> [RotationState]
    func putRefreshTokens(_ tokens: [RefreshTokenRecord]) async throws
    /// Stores device events (`DeviceEvents.swift`, numbered) and keeps each device's newest `keep`.
    func appendDeviceEvents(_ events: [DeviceEvent], keep: Int) async throws

    /// Tells every instance and process on this store, once this transaction commits, who should
    /// poll (the change feed; PostgreSQL: NOTIFY; SQLite: rows of `changes`).
    func announce(_ change: TrustChange) async throws
}

/// A store tells each instance on it about the changes any instance or process committed
/// (`TrustTransaction.announce`), so that the instance holding a phone's push subscription pushes.
public protocol TrustChangeFeed: Sendable {
    /// Every change announced on the store from now on, by any instance (this one included).
    func changes() -> AsyncStream<TrustChange>
}

/// What a poll decides from: the device, its keys (tombstones included), its user's grants, the
/// latest revocation list, whether the login's family was revoked, and the change sequence.
public struct PollState: Sendable {
    public var device: DeviceRecord?
    public var keys: [KeyRecord]
    public var grants: [GrantRecord]
    public var list: RevocationListRecord?
    /// True when `family` was named and is revoked or does not exist.
    public var familyRevoked: Bool
    public var sequence: Int64
    public init(device: DeviceRecord?, keys: [KeyRecord], grants: [GrantRecord], list: RevocationListRecord?,
                familyRevoked: Bool, sequence: Int64) {
        self.device = device; self.keys = keys; self.grants = grants; self.list = list
        self.familyRevoked = familyRevoked; self.sequence = sequence
    }
}

/// Versions of what a poll's keys depend on: a device's keys change only by a write that gives
/// one of them the next sequence, and the list likewise.
public struct PollVersions: Sendable, Equatable {
    public var keys: [String: Int64]
    public var list: Int64?
    public init(keys: [String: Int64], list: Int64?) { self.keys = keys; self.list = list }
}

/// A refresh token as a rotation sees it.
public struct RotationState: Sendable {
    public var token: RefreshTokenRecord
    public var family: TokenFamilyRecord?
    public var device: DeviceRecord?
    public init(token: RefreshTokenRecord, family: TokenFamilyRecord?, device: DeviceRecord?) {
        self.token = token; self.family = family; self.device = device
    }
}

extension TrustStorage {
    public func pollState(device: String, family: String?) async throws -> PollState {
        try await read { tx in try await tx.pollState(device: device, family: family) }
    }
}

extension TrustTransaction {
    public func pollState(device id: String, family: String?) async throws -> PollState {
        // A named family with no row counts as revoked: a token naming a login that does not exist.
        let familyRevoked = if let family { try await self.family(family).map { $0.revokedAt != nil } ?? true } else { false }
        let d = try await device(id)
        let grants = if let d { try await grants(user: d.user) } else { [GrantRecord]() }
        return PollState(device: d, keys: try await keys(device: id), grants: grants,
                         list: try await revocationList(), familyRevoked: familyRevoked, sequence: try await currentSequence())
    }

    public func pollVersions(devices: [String]) async throws -> PollVersions {
        var keys = [String: Int64]()
        for d in Set(devices) { keys[d] = try await self.keys(device: d).map(\.sequence).max() }
        return PollVersions(keys: keys, list: try await revocationList()?.sequence)
    }

    public func reserveSequences(_ count: Int) async throws -> Int64 {
        let first = try await currentSequence() + 1
        for _ in 0..<count { _ = try await nextSequence() }
        return first
    }

    public func putKeys(_ keys: [KeyRecord]) async throws {
        for k in keys { try await putKey(k) }
    }

    public func rotationStates(hashes: [[UInt8]]) async throws -> [RotationState] {
        var out = [RotationState]()
        for h in Set(hashes) {
            guard let t = try await refreshToken(hash: h) else { continue }
            out.append(RotationState(token: t, family: try await family(t.family), device: try await device(t.device)))
        }
        return out
    }

    public func putRefreshTokens(_ tokens: [RefreshTokenRecord]) async throws {
        for t in tokens { try await putRefreshToken(t) }
    }

    public func appendDeviceEvents(_ events: [DeviceEvent], keep: Int) async throws {
        try await appendDeviceEventsOneByOne(events, keep: keep)
    }
}
