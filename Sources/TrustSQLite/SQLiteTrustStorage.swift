import Foundation
import TrustModel
import Logging
import NIOCore
import NIOPosix
import SQLiteNIO
import Synchronization

/// The storage seam on an embedded SQLite file (sqlite-nio): nothing to install, durable
/// (WAL, `synchronous=FULL`: a transaction is on disk when `write` returns), one writer at a time
/// (`BEGIN IMMEDIATE` on the one write connection), readers on their own connections. Its change
/// feed is the `changes` table, followed by `SQLiteChangeFollower`.
public final class SQLiteTrustStorage: TrustStorage, TrustChangeFeed, Sendable {
    public let path: String
    /// The one write connection, driven on the writer's thread through the C API.
    private let writer: SQLiteDirectReader
    private let readers: [(SQLiteConnection, AsyncMutex)]
    private let readerIndex = Mutex(0)
    /// The poll's read, on the caller's thread (`SQLiteDirectReader`).
    private let direct: [SQLiteDirectReader]
    private let directIndex = Mutex(0)
    private let follower: SQLiteChangeFollower

    /// Schema version this code writes; older files are migrated forward on open.
    static let schemaVersion = 3

    /// `readers`: read connections (reads run in parallel, one at a time on each).
    public static func open(path: String, readers: Int = 8, logger: Logger = Logger(label: "lockbench.trust.sqlite")) async throws -> SQLiteTrustStorage {
        // Created (if new), switched to WAL (a property of the file) and migrated through sqlite-nio;
        // then written through a connection of the writer's own (`SQLiteDirectReader`).
        let setup = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        do {
            _ = try await rows(setup, "PRAGMA busy_timeout=10000")
            _ = try await rows(setup, "PRAGMA journal_mode=WAL")
            try await migrate(setup)
            try await setup.close()
        } catch {
            try? await setup.close()
            throw error
        }
        let writer = try SQLiteDirectReader(path: path, writable: true)
        do {
            // Durable when `write` returns: every commit is on disk (FULL in WAL: the log is synced at each commit).
            try writer.execute("PRAGMA synchronous=FULL")
            try writer.execute("PRAGMA busy_timeout=10000")
            try writer.execute("PRAGMA foreign_keys=ON")
            var pool = [(SQLiteConnection, AsyncMutex)]()
            for _ in 0..<max(1, readers) {
                let r = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
                _ = try await rows(r, "PRAGMA busy_timeout=10000")
                pool.append((r, AsyncMutex()))
            }
            // The poll's readers: one per core (its callers run on the cooperative pool, one
            // thread per core), at most half the pooled ones. Every commit empties a reader's page
            // cache, so the first read after it fetches its pages again (`pread`); readers beyond
            // what runs at once only spread the reads over more cold caches.
            let direct = try (0..<max(1, min(readers / 2, ProcessInfo.processInfo.activeProcessorCount))).map { _ in
                try SQLiteDirectReader(path: path)
            }
            let follower = try SQLiteChangeFollower(path: path, logger: logger)
            return SQLiteTrustStorage(path: path, writer: writer, readers: pool, direct: direct, follower: follower)
        } catch {
            writer.close()
            throw error
        }
    }

    private init(path: String, writer: SQLiteDirectReader, readers: [(SQLiteConnection, AsyncMutex)],
                 direct: [SQLiteDirectReader], follower: SQLiteChangeFollower) {
        self.path = path; self.writer = writer; self.readers = readers; self.direct = direct
        self.follower = follower
    }

    /// Every change committed to this file from now on, by this process or another (`changes`).
    public func changes() -> AsyncStream<TrustChange> { follower.subscribe() }

    /// Group commit: concurrent writers queue; one leader runs the queued bodies in one
    /// `BEGIN IMMEDIATE` transaction and COMMITs once — one fsync for the batch — and only then
    /// answers each writer. Each body sees the writes of the bodies before it: the batch is serial.
    /// Bodies run back to back with no SAVEPOINT between them (each statement is a round trip to
    /// SQLite's thread, and on the serialized write path round trips are the cost); if one throws,
    /// the whole batch rolls back and runs again with each body in its own SAVEPOINT, so a body
    /// that fails rolls back alone.
    public func write<T: Sendable>(_ body: @escaping @Sendable (any TrustTransaction) async throws -> T) async throws -> T {
        // The body may run twice (isolated after a batch failed): the committed run's value is kept.
        let value = Mutex<T?>(nil)
        let run: @Sendable (any TrustTransaction) async throws -> Void = { tx in
            let v = try await body(tx)
            value.withLock { $0 = v }
        }
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
            enqueue(WriteJob(run: run, continuation: c))
        }
        guard let v = value.withLock({ $0 }) else { throw TrustStorageError("a committed write left no answer") }
        return v
    }

    /// Where the batches run (their bodies included): a thread of their own.
    private let writerThread = ThreadExecutor(name: "trust-sqlite-writer")
    /// Writers waiting for the next batch, and whether a leader is draining them.
    private struct WriteQueue {
        var jobs: [WriteJob] = []
        var draining = false
    }
    private let queue = Mutex(WriteQueue())
    /// At most this many bodies share one commit.
    static let maxBatch = 256

    private func enqueue(_ job: WriteJob) {
        let lead = queue.withLock { q in
            q.jobs.append(job)
            defer { q.draining = true }
            return !q.draining
        }
        if lead { Task(executorPreference: writerThread) { await self.drain() } }
    }

    private func drain() async {
        while true {
            let batch: [WriteJob] = queue.withLock { q in
                if q.jobs.isEmpty { q.draining = false; return [] }
                let b = Array(q.jobs.prefix(Self.maxBatch))
                q.jobs.removeFirst(b.count)
                return b
            }
            if batch.isEmpty { return }
            await commit(batch)
        }
    }

    private func commit(_ batch: [WriteJob]) async {
        let tx = SQLiteTransaction(connection: .direct(writer))
        var failed: Error?
        do {
            try writer.execute("BEGIN IMMEDIATE")
            do {
                for job in batch { try await job.run(tx) }
            } catch {
                failed = error
            }
            if failed == nil {
                try writer.execute("COMMIT")
                for job in batch { job.continuation.resume() }
                return
            }
            try writer.execute("ROLLBACK")
        } catch {
            // BEGIN, COMMIT or ROLLBACK failed: nothing of the batch happened, every writer hears so.
            try? writer.execute("ROLLBACK")
            for job in batch { job.continuation.resume(throwing: error) }
            return
        }
        // One body threw: alone, its error is the answer; in a batch, run it again isolated.
        if batch.count == 1, let failed {
            batch[0].continuation.resume(throwing: failed)
            return
        }
        await commitIsolated(batch)
    }

    /// The batch again, each body in its own SAVEPOINT: a body that throws rolls back alone.
    private func commitIsolated(_ batch: [WriteJob]) async {
        let tx = SQLiteTransaction(connection: .direct(writer))
        var outcomes = [Error?](repeating: nil, count: batch.count)
        do {
            try writer.execute("BEGIN IMMEDIATE")
            for (i, job) in batch.enumerated() {
                try writer.execute("SAVEPOINT w")
                do {
                    try await job.run(tx)
                    try writer.execute("RELEASE w")
                } catch {
                    outcomes[i] = error
                    try writer.execute("ROLLBACK TO w")
                    try writer.execute("RELEASE w")
                }
            }
            try writer.execute("COMMIT")
        } catch {
            try? writer.execute("ROLLBACK")
            for job in batch { job.continuation.resume(throwing: error) }
            return
        }
        for (job, outcome) in zip(batch, outcomes) {
            if let outcome { job.continuation.resume(throwing: outcome) } else { job.continuation.resume() }
        }
    }

    public func read<T: Sendable>(_ body: @Sendable (any TrustTransaction) async throws -> T) async throws -> T {
        let (connection, mutex) = reader()
        return try await mutex.run {
            _ = try await Self.rows(connection, "BEGIN")
            do {
                let result = try await body(SQLiteTransaction(connection: .pooled(connection)))
                _ = try await Self.rows(connection, "COMMIT")
                return result
            } catch {
                _ = try? await Self.rows(connection, "ROLLBACK")
                throw error
            }
        }
    }

    /// The poll's read is one statement (`SQLiteTransaction.pollStateSQL`): in autocommit mode a
    /// statement is its own read transaction, one consistent snapshot, so it needs no BEGIN and
    /// COMMIT, and it runs here, on the caller's thread, through a `SQLiteDirectReader` (a free
    /// one if there is one).
    public func pollState(device: String, family: String?) async throws -> PollState {
        try directPollState(device: device, family: family)
    }

    private func directPollState(device: String, family: String?) throws -> PollState {
        let start = directIndex.withLock { $0 &+= 1; return $0 }
        let (sql, binds) = (SQLiteTransaction.pollStateSQL, SQLiteTransaction.pollStateBinds(device: device, family: family))
        // A free reader if there is one, else wait for the one this call's turn names.
        var rows: [SQLiteDirectReader.Row]?
        for i in 0..<direct.count where rows == nil { rows = try direct[(start &+ i) % direct.count].rowsIfFree(sql, binds) }
        return try SQLiteTransaction.pollState(try rows ?? direct[start % direct.count].rows(sql, binds), familyNamed: family != nil)
    }

    private func reader() -> (SQLiteConnection, AsyncMutex) {
        readers[readerIndex.withLock { $0 &+= 1; return $0 } % readers.count]
    }

    public func close() async throws {
        follower.stop()
        for r in direct { r.close() }
        for (r, _) in readers { try await r.close() }
        writer.close()
    }

    static func rows(_ c: SQLiteConnection, _ sql: String, _ binds: [SQLiteData] = []) async throws -> [SQLiteRow] {
        let box = RowBox()
        try await c.query(sql, binds) { box.append($0) }
        return box.rows
    }

    static func migrate(_ c: SQLiteConnection) async throws {
        let version = try await rows(c, "PRAGMA user_version").first?.column("user_version")?.integer ?? 0
        guard version < schemaVersion else { return }
        var schema = version >= 1 ? [] : [
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
        ]
        // 2: a poll reads its user's grants and an administrative change its user's devices by index.
        // 3: the change feed (`SQLiteChangeFollower`).
        schema += [
            "CREATE INDEX IF NOT EXISTS grants_by_user ON grants (user)",
            "CREATE INDEX IF NOT EXISTS devices_by_user ON devices (user)",
            "CREATE TABLE IF NOT EXISTS changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, payload TEXT NOT NULL)",
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

private struct WriteJob: Sendable {
    let run: @Sendable (any TrustTransaction) async throws -> Void
    let continuation: CheckedContinuation<Void, Error>
}

private final class RowBox: Sendable {
    private let collected = Mutex<[SQLiteRow]>([])
    func append(_ r: SQLiteRow) { collected.withLock { $0.append(r) } }
    var rows: [SQLiteRow] { collected.withLock { $0 } }
}

/// A row's columns by name: sqlite-nio's `SQLiteRow`, or `SQLiteDirectReader.Row`.
protocol SQLiteColumns {
    func column(_ name: String) -> SQLiteData?
}

extension SQLiteRow: SQLiteColumns {}

struct SQLiteTransaction: TrustTransaction {
    /// Reads go through sqlite-nio's pooled connections; the writer's batches through its own
    /// connection, on the writer's thread, with no hand-off per statement.
    enum Connection: Sendable {
        case pooled(SQLiteConnection)
        case direct(SQLiteDirectReader)
    }
    let connection: Connection

    func q(_ sql: String, _ binds: [SQLiteData] = []) async throws -> [SQLiteDirectReader.Row] {
        switch connection {
        case .pooled(let c): return try await SQLiteTrustStorage.rows(c, sql, binds).map(SQLiteDirectReader.Row.init)
        case .direct(let c): return try c.rows(sql, binds)
        }
    }

    // MARK: the change feed

    /// Writes the change as rows of `changes` in this transaction (committed with it, or not at
    /// all) and deletes rows older than the newest `SQLiteChangeFollower.retained`.
    func announce(_ change: TrustChange) async throws {
        for payload in ChangePayload.encode(change) {
            _ = try await q("INSERT INTO changes (payload) VALUES (?)", [.text(payload)])
        }
        _ = try await q("DELETE FROM changes WHERE seq <= (SELECT max(seq) FROM changes) - ?", [.integer(SQLiteChangeFollower.retained)])
    }

    // MARK: sequence and settings

    func nextSequence() async throws -> Int64 {
        guard let n = try await reserve("UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE name = 'sequence' RETURNING value") else {
            throw TrustStorageError("meta has no sequence row")
        }
        return n
    }

    func reserve(_ sql: String, _ binds: [SQLiteData] = []) async throws -> Int64? {
        guard let row = try await q(sql, binds).first else { return nil }
        guard let text = row.column("value")?.string, let n = Int64(text) else { throw TrustStorageError("meta.sequence is not an integer") }
        return n
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

    func deleteSetting(_ name: String) async throws {
        _ = try await q("DELETE FROM meta WHERE name = ?", [.text("setting." + name)])
    }

    func settings(prefix: String, limit: Int) async throws -> [(name: String, value: String)] {
        // A range on the primary key: names are printable ASCII, so DEL (7F) sorts after all of them.
        try await q("SELECT name, value FROM meta WHERE name >= ? AND name < ? ORDER BY name LIMIT ?",
                    [.text("setting." + prefix), .text("setting." + prefix + "\u{7F}"), .integer(max(0, min(limit, 100_000)))])
            .map { (String(try Self.text($0, "name").dropFirst("setting.".count)), try Self.text($0, "value")) }
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

    static let deviceColumns = ["id", "user", "credential_key", "state", "created_at", "updated_at"]

    static func device(_ r: SQLiteDirectReader.Row) throws -> DeviceRecord { try device(r, deviceColumns) }

    static func device<R: SQLiteColumns>(_ r: R, _ c: [String]) throws -> DeviceRecord {
        guard let state = CredentialState(rawValue: try text(r, c[3])) else { throw TrustStorageError("devices.state: unknown value") }
        return DeviceRecord(id: try text(r, c[0]), user: try text(r, c[1]), credentialKey: try bytes(r, c[2]),
                            credentialState: state, createdAt: try date(r, c[4]), updatedAt: try date(r, c[5]))
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
            """, [.text(g.id), .text(g.user), .text(StoredList.encode(g.readers)), .text(StoredList.encode(g.schedules)), .text(g.state.rawValue),
                  g.reason.map { .text($0) } ?? .null, .integer(g.revision), time(g.updatedAt)])
    }

    static let grantColumns = ["id", "user", "readers", "schedules", "state", "reason", "revision", "updated_at"]

    static func grant(_ r: SQLiteDirectReader.Row) throws -> GrantRecord { try grant(r, grantColumns) }

    static func grant<R: SQLiteColumns>(_ r: R, _ c: [String]) throws -> GrantRecord {
        guard let state = GrantRecord.State(rawValue: try text(r, c[4])) else { throw TrustStorageError("grants.state: unknown value") }
        return GrantRecord(id: try text(r, c[0]), user: try text(r, c[1]), readers: try StoredList.decode(try text(r, c[2])),
                           schedules: try StoredList.decode(try text(r, c[3])), state: state, reason: r.column(c[5])?.string,
                           revision: Int(try int(r, c[6])), updatedAt: try date(r, c[7]))
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

    func putKey(_ k: KeyRecord) async throws { try await putKeys([k]) }

    /// Every key in one statement (a multi-row upsert).
    func putKeys(_ keys: [KeyRecord]) async throws {
        guard !keys.isEmpty else { return }
        _ = try await q("""
            INSERT INTO keys (id, grant_id, device, document, document_id, iteration, grant_revision, valid_until,
              expected_update, sequence) VALUES \(Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", count: keys.count).joined(separator: ", "))
            ON CONFLICT(id) DO UPDATE SET document = excluded.document, document_id = excluded.document_id,
              iteration = excluded.iteration, grant_revision = excluded.grant_revision, valid_until = excluded.valid_until,
              expected_update = excluded.expected_update, sequence = excluded.sequence
            """, keys.flatMap { k in
                [.text(k.id), .text(k.grant), .text(k.device), k.document.map(blob) ?? .null, blob(k.documentID),
                 .integer(k.iteration), .integer(k.grantRevision), time(k.validUntil), time(k.expectedUpdate),
                 .integer(Int(k.sequence))] as [SQLiteData]
            })
    }

    static let keyColumns = ["id", "grant_id", "device", "document", "document_id", "iteration", "grant_revision", "valid_until",
                             "expected_update", "sequence"]

    static func key(_ r: SQLiteDirectReader.Row) throws -> KeyRecord { try key(r, keyColumns) }

    static func key<R: SQLiteColumns>(_ r: R, _ c: [String]) throws -> KeyRecord {
        KeyRecord(id: try text(r, c[0]), grant: try text(r, c[1]), device: try text(r, c[2]),
                  document: r.column(c[3])?.blob.map { Array($0.readableBytesView) }, documentID: try bytes(r, c[4]),
                  iteration: Int(try int(r, c[5])), grantRevision: Int(try int(r, c[6])),
                  validUntil: try date(r, c[7]), expectedUpdate: try date(r, c[8]),
                  sequence: Int64(try int(r, c[9])))
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
        try await q("SELECT * FROM families WHERE id = ?", [.text(id)]).first.map { try Self.family($0, Self.familyColumns) }
    }

    static let familyColumns = ["id", "device", "created_at", "revoked_at", "reason"]

    static func family(_ r: SQLiteDirectReader.Row, _ c: [String]) throws -> TokenFamilyRecord {
        TokenFamilyRecord(id: try text(r, c[0]), device: try text(r, c[1]), createdAt: try date(r, c[2]),
                          revokedAt: r.column(c[3])?.double.map(Date.init(timeIntervalSince1970:)), revokedReason: r.column(c[4])?.string)
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

    func putRefreshToken(_ t: RefreshTokenRecord) async throws { try await putRefreshTokens([t]) }

    /// Every token in one statement (a multi-row upsert).
    func putRefreshTokens(_ tokens: [RefreshTokenRecord]) async throws {
        guard !tokens.isEmpty else { return }
        _ = try await q("""
            INSERT INTO refresh_tokens (hash, family, device, state, issued_at, used_at, successor)
            VALUES \(Array(repeating: "(?, ?, ?, ?, ?, ?, ?)", count: tokens.count).joined(separator: ", "))
            ON CONFLICT(hash) DO UPDATE SET state = excluded.state, used_at = excluded.used_at, successor = excluded.successor
            """, tokens.flatMap { t in
                [blob(t.hash), .text(t.family), .text(t.device), .text(t.state.rawValue), time(t.issuedAt),
                 t.usedAt.map(time) ?? .null, t.successor.map(blob) ?? .null] as [SQLiteData]
            })
    }

    /// Device events in two statements whatever their number: one multi-row upsert, one delete of
    /// every named device's rows older than its `keep`-th newest (a range on the primary key each).
    func appendDeviceEvents(_ events: [DeviceEvent], keep: Int) async throws {
        guard !events.isEmpty else { return }
        for start in stride(from: 0, to: events.count, by: 500) {
            let chunk = events[start..<min(events.count, start + 500)]
            _ = try await q("""
                INSERT INTO meta (name, value) VALUES \(Array(repeating: "(?, ?)", count: chunk.count).joined(separator: ", "))
                ON CONFLICT(name) DO UPDATE SET value = excluded.value
                """, chunk.flatMap { e in [.text("setting." + e.rowName), .text(e.encoded())] as [SQLiteData] })
        }
        let devices = Set(events.map(\.device)).sorted()
        for start in stride(from: 0, to: devices.count, by: 200) {
            let chunk = devices[start..<min(devices.count, start + 200)]
            let one = "(name >= ? AND name < (SELECT name FROM meta WHERE name >= ? AND name < ? ORDER BY name DESC LIMIT 1 OFFSET ?))"
            _ = try await q("DELETE FROM meta WHERE " + Array(repeating: one, count: chunk.count).joined(separator: " OR "), chunk.flatMap { d in
                let lo = "setting." + DeviceEvent.rowPrefix(device: d)
                return [.text(lo), .text(lo), .text(lo + "\u{7F}"), .integer(max(0, keep - 1))] as [SQLiteData]
            })
        }
    }

    func revokeFamilies(device: String, at: Date, reason: String) async throws {
        _ = try await q("UPDATE families SET revoked_at = ?, reason = ? WHERE device = ? AND revoked_at IS NULL",
                        [time(at), .text(reason), .text(device)])
    }

    static func token(_ r: SQLiteDirectReader.Row) throws -> RefreshTokenRecord {
        guard let state = RefreshTokenRecord.State(rawValue: try text(r, "state")) else { throw TrustStorageError("refresh_tokens.state: unknown value") }
        return RefreshTokenRecord(hash: try bytes(r, "hash"), family: try text(r, "family"), device: try text(r, "device"),
                                  state: state, issuedAt: try date(r, "issued_at"),
                                  usedAt: r.column("used_at")?.double.map(Date.init(timeIntervalSince1970:)),
                                  successor: r.column("successor")?.blob.map { Array($0.readableBytesView) })
    }

    // MARK: composite reads and the poll's compare-and-swap: one statement each

    /// The poll's whole read as one statement (so one consistent snapshot): a UNION of tagged rows
    /// in generic columns c1…c10 — the device, its keys, its user's grants, the revocation list,
    /// the family's revocation and the change sequence.
    func pollState(device: String, family: String?) async throws -> PollState {
        try Self.pollState(try await q(Self.pollStateSQL, Self.pollStateBinds(device: device, family: family)), familyNamed: family != nil)
    }

    static let pollStateSQL = """
        SELECT 'd' AS t, id AS c1, user AS c2, credential_key AS c3, state AS c4, created_at AS c5, updated_at AS c6,
               NULL AS c7, NULL AS c8, NULL AS c9, NULL AS c10 FROM devices WHERE id = ?1
        UNION ALL SELECT 'k', id, grant_id, device, document, document_id, iteration, grant_revision, valid_until,
               expected_update, sequence FROM keys WHERE device = ?1
        UNION ALL SELECT 'g', id, user, readers, schedules, state, reason, revision, updated_at, NULL, NULL
               FROM grants WHERE user = (SELECT user FROM devices WHERE id = ?1)
        UNION ALL SELECT 'l', serial, document, sequence, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM revocation_list WHERE one = 1
        UNION ALL SELECT 'f', revoked_at, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM families WHERE id = ?2
        UNION ALL SELECT 's', CAST(value AS INTEGER), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM meta WHERE name = 'sequence'
        """

    static func pollStateBinds(device: String, family: String?) -> [SQLiteData] { [.text(device), family.map { .text($0) } ?? .null] }

    /// The rows of `pollStateSQL` (through sqlite-nio or `SQLiteDirectReader`) as a `PollState`.
    /// A named family with no row is treated as revoked: a token naming a login that does not exist
    /// logged in nobody.
    static func pollState<R: SQLiteColumns>(_ rows: [R], familyNamed: Bool) throws -> PollState {
        let c = (1...10).map { "c\($0)" }
        var state = PollState(device: nil, keys: [], grants: [], list: nil, familyRevoked: familyNamed, sequence: 0)
        for r in rows {
            switch r.column("t")?.string {
            case "d": state.device = try Self.device(r, c)
            case "k": state.keys.append(try Self.key(r, c))
            case "g": state.grants.append(try Self.grant(r, c))
            case "l": state.list = RevocationListRecord(serial: UInt64(try Self.int(r, "c1")), document: try Self.bytes(r, "c2"),
                                                        sequence: Int64(try Self.int(r, "c3")))
            case "f": state.familyRevoked = r.column("c1")?.double != nil
            case "s": state.sequence = Int64(try Self.int(r, "c1"))
            default: throw TrustStorageError("pollState: unknown row tag")
            }
        }
        state.keys.sort { $0.id < $1.id }
        state.grants.sort { $0.id < $1.id }
        return state
    }

    func pollVersions(devices: [String]) async throws -> PollVersions {
        let unique = Array(Set(devices))
        var versions = PollVersions(keys: [:], list: nil)
        guard unique.count <= 10_000 else { throw TrustStorageError("pollVersions: too many devices at once") }
        let marks = unique.isEmpty ? "NULL" : Array(repeating: "?", count: unique.count).joined(separator: ", ")
        for r in try await q("""
            SELECT 'k' AS t, device AS d, max(sequence) AS s FROM keys WHERE device IN (\(marks)) GROUP BY device
            UNION ALL SELECT 'l', NULL, sequence FROM revocation_list WHERE one = 1
            """, unique.map { .text($0) }) {
            if r.column("t")?.string == "l" { versions.list = Int64(try Self.int(r, "s")) } else {
                versions.keys[try Self.text(r, "d")] = Int64(try Self.int(r, "s"))
            }
        }
        return versions
    }

    func reserveSequences(_ count: Int) async throws -> Int64 {
        guard let first = try await reserve("""
            UPDATE meta SET value = CAST(CAST(value AS INTEGER) + ?1 AS TEXT) WHERE name = 'sequence'
            RETURNING CAST(CAST(value AS INTEGER) - ?1 + 1 AS TEXT) AS value
            """, [.integer(count)]) else { throw TrustStorageError("meta has no sequence row") }
        return first
    }

    func rotationStates(hashes: [[UInt8]]) async throws -> [RotationState] {
        let unique = Array(Set(hashes))
        guard !unique.isEmpty else { return [] }
        guard unique.count <= 10_000 else { throw TrustStorageError("rotationStates: too many tokens at once") }
        return try await q("""
            SELECT t.*, f.id AS f_id, f.device AS f_device, f.created_at AS f_created_at, f.revoked_at AS f_revoked_at,
                   f.reason AS f_reason, d.id AS d_id, d.user AS d_user, d.credential_key AS d_credential_key, d.state AS d_state,
                   d.created_at AS d_created_at, d.updated_at AS d_updated_at
            FROM refresh_tokens t LEFT JOIN families f ON f.id = t.family LEFT JOIN devices d ON d.id = t.device
            WHERE t.hash IN (\(Array(repeating: "?", count: unique.count).joined(separator: ", ")))
            """, unique.map(blob)).map { r in
            RotationState(token: try Self.token(r),
                          family: r.column("f_id")?.string == nil ? nil : try Self.family(r, Self.familyColumns.map { "f_" + $0 }),
                          device: r.column("d_id")?.string == nil ? nil : try Self.device(r, Self.deviceColumns.map { "d_" + $0 }))
        }
    }

    // MARK: columns

    static func text<R: SQLiteColumns>(_ r: R, _ c: String) throws -> String {
        guard let s = r.column(c)?.string else { throw TrustStorageError("column \(c) is missing or not text") }
        return s
    }
    static func int<R: SQLiteColumns>(_ r: R, _ c: String) throws -> Int {
        guard let i = r.column(c)?.integer else { throw TrustStorageError("column \(c) is missing or not an integer") }
        return i
    }
    static func date<R: SQLiteColumns>(_ r: R, _ c: String) throws -> Date {
        guard let d = r.column(c)?.double else { throw TrustStorageError("column \(c) is missing or not a time") }
        return Date(timeIntervalSince1970: d)
    }
    static func bytes<R: SQLiteColumns>(_ r: R, _ c: String) throws -> [UInt8] {
        guard let b = r.column(c)?.blob else { throw TrustStorageError("column \(c) is missing or not a blob") }
        return Array(b.readableBytesView)
    }
}

private func blob(_ b: [UInt8]) -> SQLiteData { .blob(ByteBuffer(bytes: b)) }
private func time(_ d: Date) -> SQLiteData { .float(d.timeIntervalSince1970) }
