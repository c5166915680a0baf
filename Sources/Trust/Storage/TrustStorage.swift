import Foundation

/// The storage seam. The service speaks only to this protocol: SQLite (`SQLiteTrustStorage`, an
/// embedded file) implements it here; a PostgreSQL backend implements the same two entry points
/// for several stateless `trust serve` instances on one database.
///
/// Every change happens inside `write`: all or nothing, and acknowledged only once durable (SQLite:
/// WAL with `synchronous=FULL`, several writers' bodies sharing one commit). Writers are serialized (SQLite `BEGIN IMMEDIATE`; PostgreSQL:
/// row locks or SERIALIZABLE), which is what keeps a refresh-token family from forking and
/// revocation serials strictly increasing when requests race.
public protocol TrustStorage: Sendable {
    /// Runs `body` in one atomic, durable transaction.
    func write<T: Sendable>(_ body: @escaping @Sendable (any TrustTransaction) async throws -> T) async throws -> T
    /// Runs `body` against a consistent snapshot; `body` must not write.
    func read<T: Sendable>(_ body: @Sendable (any TrustTransaction) async throws -> T) async throws -> T
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
}
