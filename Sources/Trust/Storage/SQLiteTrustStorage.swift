import Foundation
import Logging
import NIOCore
import SQLiteNIO

/// The storage seam on an embedded SQLite file (sqlite-nio): nothing to install, durable
/// (WAL, `synchronous=FULL`: a transaction is on disk when `write` returns), one writer at a time
/// (`BEGIN IMMEDIATE` on the one write connection), readers on their own connections.
public final class SQLiteTrustStorage: TrustStorage, @unchecked Sendable {
    public let path: String
    private let writer: SQLiteConnection
    private let readers: [(SQLiteConnection, AsyncMutex)]
    private let nextReader = NSLock()
    private var readerIndex = 0

    /// Schema version this code writes; older files are migrated forward on open.
    static let schemaVersion = 1

    public static func open(path: String, readers: Int = 2, logger: Logger = Logger(label: "lockbench.trust.sqlite")) async throws -> SQLiteTrustStorage {
        let writer = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        do {
            _ = try await rows(writer, "PRAGMA journal_mode=WAL")
            _ = try await rows(writer, "PRAGMA synchronous=FULL")
            _ = try await rows(writer, "PRAGMA busy_timeout=10000")
            _ = try await rows(writer, "PRAGMA foreign_keys=ON")
            try await migrate(writer)
            var pool = [(SQLiteConnection, AsyncMutex)]()
            for _ in 0..<max(1, readers) {
                let r = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
                _ = try await rows(r, "PRAGMA busy_timeout=10000")
                pool.append((r, AsyncMutex()))
            }
            return SQLiteTrustStorage(path: path, writer: writer, readers: pool)
        } catch {
            try? await writer.close()
            throw error
        }
    }

    private init(path: String, writer: SQLiteConnection, readers: [(SQLiteConnection, AsyncMutex)]) {
        self.path = path; self.writer = writer; self.readers = readers
    }

    /// Group commit: concurrent writers queue; one leader runs the queued bodies in one
    /// `BEGIN IMMEDIATE` transaction, each inside its own SAVEPOINT (a body that throws rolls back
    /// alone), then COMMITs once — one fsync for the batch — and only then answers each writer.
    /// Each body still sees the writes of the bodies before it: the batch is serial.
    public func write<T: Sendable>(_ body: @escaping @Sendable (any TrustTransaction) async throws -> T) async throws -> T {
        let box = ValueBox<T>()
        let run: @Sendable (any TrustTransaction) async throws -> Void = { tx in box.value = try await body(tx) }
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
            enqueue(WriteJob(run: run, continuation: c))
        }
        return box.value!
    }

    /// Writers waiting for the next batch, and whether a leader is draining them.
    private let queueLock = NSLock()
    private var queue: [WriteJob] = []
    private var draining = false
    /// At most this many bodies share one commit.
    static let maxBatch = 256

    private func enqueue(_ job: WriteJob) {
        let lead = queueLock.withLock {
            queue.append(job)
            defer { draining = true }
            return !draining
        }
        if lead { Task { await self.drain() } }
    }

    private func drain() async {
        while true {
            let batch: [WriteJob] = queueLock.withLock {
                if queue.isEmpty { draining = false; return [] }
                let b = Array(queue.prefix(Self.maxBatch))
                queue.removeFirst(b.count)
                return b
            }
            if batch.isEmpty { return }
            await commit(batch)
        }
    }

    private func commit(_ batch: [WriteJob]) async {
        var outcomes = [Error?](repeating: nil, count: batch.count)
        do {
            _ = try await Self.rows(writer, "BEGIN IMMEDIATE")
            let tx = SQLiteTransaction(connection: writer)
            for (i, job) in batch.enumerated() {
                _ = try await Self.rows(writer, "SAVEPOINT w")
                do {
                    try await job.run(tx)
                    _ = try await Self.rows(writer, "RELEASE w")
                } catch {
                    outcomes[i] = error
                    _ = try await Self.rows(writer, "ROLLBACK TO w")
                    _ = try await Self.rows(writer, "RELEASE w")
                }
            }
            _ = try await Self.rows(writer, "COMMIT")
        } catch {
            // The batch did not commit: nothing of it happened, every writer hears so.
            _ = try? await Self.rows(writer, "ROLLBACK")
            for job in batch { job.continuation.resume(throwing: error) }
            return
        }
        for (job, outcome) in zip(batch, outcomes) {
            if let outcome { job.continuation.resume(throwing: outcome) } else { job.continuation.resume() }
        }
    }

    public func read<T: Sendable>(_ body: @Sendable (any TrustTransaction) async throws -> T) async throws -> T {
        let (connection, mutex) = nextReader.withLock {
            readerIndex &+= 1
            return readers[readerIndex % readers.count]
        }
        return try await mutex.run {
            _ = try await Self.rows(connection, "BEGIN")
            do {
                let result = try await body(SQLiteTransaction(connection: connection))
                _ = try await Self.rows(connection, "COMMIT")
                return result
            } catch {
                _ = try? await Self.rows(connection, "ROLLBACK")
                throw error
            }
        }
    }

    public func close() async throws {
        for (r, _) in readers { try await r.close() }
        try await writer.close()
    }

    static func rows(_ c: SQLiteConnection, _ sql: String, _ binds: [SQLiteData] = []) async throws -> [SQLiteRow] {
        let box = RowBox()
        try await c.query(sql, binds) { box.append($0) }
        return box.rows
    }

    static func migrate(_ c: SQLiteConnection) async throws {
        let version = try await rows(c, "PRAGMA user_version").first?.column("user_version")?.integer ?? 0
        guard version < schemaVersion else { return }
        let schema = [
            "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
            """
            CREATE TABLE IF NOT EXISTS devices (id TEXT PRIMARY KEY, user TEXT NOT NULL, credential_key BLOB NOT NULL,
              state TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL)
            """,
            """
            CREATE TABLE IF NOT EXISTS grants (id TEXT PRIMARY KEY, user TEXT NOT NULL, readers TEXT NOT NULL,
              schedules TEXT NOT NULL, state TEXT NOT NULL, reason TEXT, revision INTEGER NOT NULL, updated_at REAL NOT NULL)
            """,
            """
            CREATE TABLE IF NOT EXISTS keys (id TEXT PRIMARY KEY, grant_id TEXT NOT NULL, device TEXT NOT NULL,
              document BLOB, document_id BLOB NOT NULL, iteration INTEGER NOT NULL, grant_revision INTEGER NOT NULL,
              valid_until REAL NOT NULL, expected_update REAL NOT NULL, sequence INTEGER NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS keys_by_device ON keys (device, sequence)",
            "CREATE INDEX IF NOT EXISTS keys_by_grant ON keys (grant_id)",
            """
            CREATE TABLE IF NOT EXISTS revocations (pk_hash BLOB, document_id BLOB, expiry REAL NOT NULL, cause TEXT NOT NULL)
            """,
            """
            CREATE TABLE IF NOT EXISTS revocation_list (one INTEGER PRIMARY KEY CHECK (one = 1), serial INTEGER NOT NULL,
              document BLOB NOT NULL, sequence INTEGER NOT NULL)
            """,
            """
            CREATE TABLE IF NOT EXISTS enrollments (hash BLOB PRIMARY KEY, device TEXT NOT NULL, expires_at REAL NOT NULL,
              used_at REAL)
            """,
            """
            CREATE TABLE IF NOT EXISTS families (id TEXT PRIMARY KEY, device TEXT NOT NULL, created_at REAL NOT NULL,
              revoked_at REAL, reason TEXT)
            """,
            """
            CREATE TABLE IF NOT EXISTS refresh_tokens (hash BLOB PRIMARY KEY, family TEXT NOT NULL, device TEXT NOT NULL,
              state TEXT NOT NULL, issued_at REAL NOT NULL, used_at REAL, successor BLOB)
            """,
            "CREATE INDEX IF NOT EXISTS refresh_by_family ON refresh_tokens (family)",
            "INSERT OR IGNORE INTO meta (name, value) VALUES ('sequence', '0')",
            "PRAGMA user_version = \(schemaVersion)",
        ]
        _ = try await rows(c, "BEGIN IMMEDIATE")
        do {
            for s in schema { _ = try await rows(c, s) }
            _ = try await rows(c, "COMMIT")
        } catch {
            _ = try? await rows(c, "ROLLBACK")
            throw error
        }
    }
}

private struct WriteJob: @unchecked Sendable {
    let run: @Sendable (any TrustTransaction) async throws -> Void
    let continuation: CheckedContinuation<Void, Error>
}

private final class ValueBox<T>: @unchecked Sendable {
    var value: T?
}

private final class RowBox: @unchecked Sendable {
    private let lock = NSLock()
    private var _rows = [SQLiteRow]()
    func append(_ r: SQLiteRow) { lock.lock(); _rows.append(r); lock.unlock() }
    var rows: [SQLiteRow] { lock.lock(); defer { lock.unlock() }; return _rows }
}

/// The error a store raises for data it cannot read back (a damaged or foreign file).
public struct TrustStorageError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

struct SQLiteTransaction: TrustTransaction {
    let connection: SQLiteConnection

    func q(_ sql: String, _ binds: [SQLiteData] = []) async throws -> [SQLiteRow] {
        try await SQLiteTrustStorage.rows(connection, sql, binds)
    }

    // MARK: sequence and settings

    func nextSequence() async throws -> Int64 {
        _ = try await q("UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE name = 'sequence'")
        return try await currentSequence()
    }

    func currentSequence() async throws -> Int64 {
        Int64(try await q("SELECT value FROM meta WHERE name = 'sequence'").first?.column("value")?.string ?? "0") ?? 0
    }

    func setting(_ name: String) async throws -> String? {
        try await q("SELECT value FROM meta WHERE name = ?", [.text("setting." + name)]).first?.column("value")?.string
    }

    func setSetting(_ name: String, _ value: String) async throws {
        _ = try await q("INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                        [.text("setting." + name), .text(value)])
    }

    // MARK: devices

    func device(_ id: String) async throws -> DeviceRecord? {
        try await q("SELECT * FROM devices WHERE id = ?", [.text(id)]).first.map(Self.device)
    }

    func devices(user: String?) async throws -> [DeviceRecord] {
        let rows = if let user { try await q("SELECT * FROM devices WHERE user = ? ORDER BY id", [.text(user)]) }
            else { try await q("SELECT * FROM devices ORDER BY id") }
        return try rows.map(Self.device)
    }

    func putDevice(_ d: DeviceRecord) async throws {
        _ = try await q("""
            INSERT INTO devices (id, user, credential_key, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET user = excluded.user, credential_key = excluded.credential_key,
              state = excluded.state, updated_at = excluded.updated_at
            """, [.text(d.id), .text(d.user), blob(d.credentialKey), .text(d.credentialState.rawValue),
                  time(d.createdAt), time(d.updatedAt)])
    }

    func deleteDevice(_ id: String) async throws {
        _ = try await q("DELETE FROM devices WHERE id = ?", [.text(id)])
    }

    static func device(_ r: SQLiteRow) throws -> DeviceRecord {
        guard let state = CredentialState(rawValue: try text(r, "state")) else { throw TrustStorageError("devices.state: unknown value") }
        return DeviceRecord(id: try text(r, "id"), user: try text(r, "user"), credentialKey: try bytes(r, "credential_key"),
                            credentialState: state, createdAt: try date(r, "created_at"), updatedAt: try date(r, "updated_at"))
    }

    // MARK: grants

    func grant(_ id: String) async throws -> GrantRecord? {
        try await q("SELECT * FROM grants WHERE id = ?", [.text(id)]).first.map(Self.grant)
    }

    func grants(user: String?) async throws -> [GrantRecord] {
        let rows = if let user { try await q("SELECT * FROM grants WHERE user = ? ORDER BY id", [.text(user)]) }
            else { try await q("SELECT * FROM grants ORDER BY id") }
        return try rows.map(Self.grant)
    }

    func putGrant(_ g: GrantRecord) async throws {
        _ = try await q("""
            INSERT INTO grants (id, user, readers, schedules, state, reason, revision, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET user = excluded.user, readers = excluded.readers, schedules = excluded.schedules,
              state = excluded.state, reason = excluded.reason, revision = excluded.revision, updated_at = excluded.updated_at
            """, [.text(g.id), .text(g.user), .text(Self.list(g.readers)), .text(Self.list(g.schedules)), .text(g.state.rawValue),
                  g.reason.map { .text($0) } ?? .null, .integer(g.revision), time(g.updatedAt)])
    }

    static func grant(_ r: SQLiteRow) throws -> GrantRecord {
        guard let state = GrantRecord.State(rawValue: try text(r, "state")) else { throw TrustStorageError("grants.state: unknown value") }
        return GrantRecord(id: try text(r, "id"), user: try text(r, "user"), readers: try list(try text(r, "readers")),
                           schedules: try list(try text(r, "schedules")), state: state, reason: r.column("reason")?.string,
                           revision: Int(try int(r, "revision")), updatedAt: try date(r, "updated_at"))
    }

    static func list(_ items: [String]) -> String {
        String(decoding: (try? JSONEncoder().encode(items)) ?? Data("[]".utf8), as: UTF8.self)
    }

    static func list(_ text: String) throws -> [String] {
        do { return try JSONDecoder().decode([String].self, from: Data(text.utf8)) } catch {
            throw TrustStorageError("a list column is not a JSON array of strings")
        }
    }

    // MARK: keys

    func keys(device: String) async throws -> [KeyRecord] {
        try await q("SELECT * FROM keys WHERE device = ? ORDER BY id", [.text(device)]).map(Self.key)
    }

    func keys(grant: String) async throws -> [KeyRecord] {
        try await q("SELECT * FROM keys WHERE grant_id = ? ORDER BY id", [.text(grant)]).map(Self.key)
    }

    func keys(device: String, after sequence: Int64) async throws -> [KeyRecord] {
        try await q("SELECT * FROM keys WHERE device = ? AND sequence > ? ORDER BY sequence", [.text(device), .integer(Int(sequence))])
            .map(Self.key)
    }

    func putKey(_ k: KeyRecord) async throws {
        _ = try await q("""
            INSERT INTO keys (id, grant_id, device, document, document_id, iteration, grant_revision, valid_until,
              expected_update, sequence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET document = excluded.document, document_id = excluded.document_id,
              iteration = excluded.iteration, grant_revision = excluded.grant_revision, valid_until = excluded.valid_until,
              expected_update = excluded.expected_update, sequence = excluded.sequence
            """, [.text(k.id), .text(k.grant), .text(k.device), k.document.map(blob) ?? .null, blob(k.documentID),
                  .integer(k.iteration), .integer(k.grantRevision), time(k.validUntil), time(k.expectedUpdate),
                  .integer(Int(k.sequence))])
    }

    static func key(_ r: SQLiteRow) throws -> KeyRecord {
        KeyRecord(id: try text(r, "id"), grant: try text(r, "grant_id"), device: try text(r, "device"),
                  document: r.column("document")?.blob.map { Array($0.readableBytesView) }, documentID: try bytes(r, "document_id"),
                  iteration: Int(try int(r, "iteration")), grantRevision: Int(try int(r, "grant_revision")),
                  validUntil: try date(r, "valid_until"), expectedUpdate: try date(r, "expected_update"),
                  sequence: Int64(try int(r, "sequence")))
    }

    // MARK: revocations

    func revocations() async throws -> [RevocationRecord] {
        try await q("SELECT * FROM revocations ORDER BY rowid").map { r in
            RevocationRecord(publicKeyHash: r.column("pk_hash")?.blob.map { Array($0.readableBytesView) },
                             documentID: r.column("document_id")?.blob.map { Array($0.readableBytesView) },
                             expiry: try Self.date(r, "expiry"), cause: try Self.text(r, "cause"))
        }
    }

    func replaceRevocations(_ entries: [RevocationRecord]) async throws {
        _ = try await q("DELETE FROM revocations")
        for e in entries {
            _ = try await q("INSERT INTO revocations (pk_hash, document_id, expiry, cause) VALUES (?, ?, ?, ?)",
                            [e.publicKeyHash.map(blob) ?? .null, e.documentID.map(blob) ?? .null, time(e.expiry), .text(e.cause)])
        }
    }

    func revocationList() async throws -> RevocationListRecord? {
        try await q("SELECT * FROM revocation_list WHERE one = 1").first.map { r in
            RevocationListRecord(serial: UInt64(try Self.int(r, "serial")), document: try Self.bytes(r, "document"),
                                 sequence: Int64(try Self.int(r, "sequence")))
        }
    }

    func putRevocationList(_ l: RevocationListRecord) async throws {
        _ = try await q("""
            INSERT INTO revocation_list (one, serial, document, sequence) VALUES (1, ?, ?, ?)
            ON CONFLICT(one) DO UPDATE SET serial = excluded.serial, document = excluded.document, sequence = excluded.sequence
            """, [.integer(Int(l.serial)), blob(l.document), .integer(Int(l.sequence))])
    }

    // MARK: tokens

    func enrollment(hash: [UInt8]) async throws -> EnrollmentRecord? {
        try await q("SELECT * FROM enrollments WHERE hash = ?", [blob(hash)]).first.map { r in
            EnrollmentRecord(hash: try Self.bytes(r, "hash"), device: try Self.text(r, "device"),
                             expiresAt: try Self.date(r, "expires_at"), usedAt: r.column("used_at")?.double.map(Date.init(timeIntervalSince1970:)))
        }
    }

    func putEnrollment(_ e: EnrollmentRecord) async throws {
        _ = try await q("""
            INSERT INTO enrollments (hash, device, expires_at, used_at) VALUES (?, ?, ?, ?)
            ON CONFLICT(hash) DO UPDATE SET used_at = excluded.used_at
            """, [blob(e.hash), .text(e.device), time(e.expiresAt), e.usedAt.map(time) ?? .null])
    }

    func family(_ id: String) async throws -> TokenFamilyRecord? {
        try await q("SELECT * FROM families WHERE id = ?", [.text(id)]).first.map { r in
            TokenFamilyRecord(id: try Self.text(r, "id"), device: try Self.text(r, "device"), createdAt: try Self.date(r, "created_at"),
                              revokedAt: r.column("revoked_at")?.double.map(Date.init(timeIntervalSince1970:)),
                              revokedReason: r.column("reason")?.string)
        }
    }

    func putFamily(_ f: TokenFamilyRecord) async throws {
        _ = try await q("""
            INSERT INTO families (id, device, created_at, revoked_at, reason) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET revoked_at = excluded.revoked_at, reason = excluded.reason
            """, [.text(f.id), .text(f.device), time(f.createdAt), f.revokedAt.map(time) ?? .null,
                  f.revokedReason.map { .text($0) } ?? .null])
    }

    func refreshToken(hash: [UInt8]) async throws -> RefreshTokenRecord? {
        try await q("SELECT * FROM refresh_tokens WHERE hash = ?", [blob(hash)]).first.map(Self.token)
    }

    func refreshTokens(family: String) async throws -> [RefreshTokenRecord] {
        try await q("SELECT * FROM refresh_tokens WHERE family = ? ORDER BY issued_at", [.text(family)]).map(Self.token)
    }

    func putRefreshToken(_ t: RefreshTokenRecord) async throws {
        _ = try await q("""
            INSERT INTO refresh_tokens (hash, family, device, state, issued_at, used_at, successor) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(hash) DO UPDATE SET state = excluded.state, used_at = excluded.used_at, successor = excluded.successor
            """, [blob(t.hash), .text(t.family), .text(t.device), .text(t.state.rawValue), time(t.issuedAt),
                  t.usedAt.map(time) ?? .null, t.successor.map(blob) ?? .null])
    }

    func revokeFamilies(device: String, at: Date, reason: String) async throws {
        _ = try await q("UPDATE families SET revoked_at = ?, reason = ? WHERE device = ? AND revoked_at IS NULL",
                        [time(at), .text(reason), .text(device)])
    }

    static func token(_ r: SQLiteRow) throws -> RefreshTokenRecord {
        guard let state = RefreshTokenRecord.State(rawValue: try text(r, "state")) else { throw TrustStorageError("refresh_tokens.state: unknown value") }
        return RefreshTokenRecord(hash: try bytes(r, "hash"), family: try text(r, "family"), device: try text(r, "device"),
                                  state: state, issuedAt: try date(r, "issued_at"),
                                  usedAt: r.column("used_at")?.double.map(Date.init(timeIntervalSince1970:)),
                                  successor: r.column("successor")?.blob.map { Array($0.readableBytesView) })
    }

    // MARK: columns

    static func text(_ r: SQLiteRow, _ c: String) throws -> String {
        guard let s = r.column(c)?.string else { throw TrustStorageError("column \(c) is missing or not text") }
        return s
    }
    static func int(_ r: SQLiteRow, _ c: String) throws -> Int {
        guard let i = r.column(c)?.integer else { throw TrustStorageError("column \(c) is missing or not an integer") }
        return i
    }
    static func date(_ r: SQLiteRow, _ c: String) throws -> Date {
        guard let d = r.column(c)?.double else { throw TrustStorageError("column \(c) is missing or not a time") }
        return Date(timeIntervalSince1970: d)
    }
    static func bytes(_ r: SQLiteRow, _ c: String) throws -> [UInt8] {
        guard let b = r.column(c)?.blob else { throw TrustStorageError("column \(c) is missing or not a blob") }
        return Array(b.readableBytesView)
    }
}

private func blob(_ b: [UInt8]) -> SQLiteData { .blob(ByteBuffer(bytes: b)) }
private func time(_ d: Date) -> SQLiteData { .float(d.timeIntervalSince1970) }
