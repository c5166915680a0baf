import Foundation
import TrustModel
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// The storage seam on PostgreSQL (postgres-nio `PostgresClient`): the one store that several
/// stateless `trust serve` instances share.
///
/// Writers across every instance are serialized by one transaction-scoped advisory lock
/// (`pg_advisory_xact_lock`), taken first in each write transaction (READ COMMITTED, so every
/// statement after the lock sees every commit before it). Why not SERIALIZABLE with retries: every
/// write that changes keys, lists or tokens bumps the one change-sequence row, so concurrent writers
/// conflict anyway and SERIALIZABLE would only add aborted work; and the service's write bodies
/// are read-modify-write across tables (token family → successor, list serial → serial + 1, a
/// poll's compare-and-swap on key versions) that were written for one writer at a time, exactly
/// what SQLite's `BEGIN IMMEDIATE` gives. The lock keeps that reasoning true across processes:
/// refresh-token families never fork, revocation serials and the change sequence strictly increase.
/// Hot paths are already batched by the service (`Coalescer`), so one lock holder commits many
/// polls or rotations. A commit is durable when it returns (the server's `synchronous_commit`).
///
/// Reads run in REPEATABLE READ READ ONLY transactions: one consistent snapshot, never blocked by
/// the writer lock. The change feed (`TrustChangeFeed`) is LISTEN/NOTIFY on `changeChannel`.
public final class PostgresTrustStorage: TrustStorage, TrustChangeFeed, Sendable {
    public let client: PostgresClient
    let logger: Logger
    private let runner: Task<Void, Never>
    private let listener: Task<Void, Never>
    private let feed: ChangeFanOut

    /// Schema version this code writes; older databases are migrated forward on open.
    static let schemaVersion = 1
    /// The advisory lock every write transaction holds (an arbitrary constant: "LBTRUST1").
    static let writerLock: Int64 = 0x4C42_5452_5553_5431
    /// The advisory lock a migration holds, so instances starting together migrate once.
    static let migrationLock: Int64 = 0x4C42_5452_5553_544D
    /// The NOTIFY channel of committed administrative changes.
    public static let changeChannel = "lockbench_trust_changes"
    /// How long `open` waits for the server before it gives up (an unreachable server: exit 3).
    static let connectTimeout: Duration = .seconds(10)

    /// Opens (and migrates) the database named by a `postgres://USER[:PASSWORD]@HOST[:PORT]/DB` URL.
    public static func open(url: String, logger: Logger = defaultLogger) async throws -> PostgresTrustStorage {
        try await open(PostgresURL(parsing: url), logger: logger)
    }

    /// The pool's own reports (each failed connection attempt) only from warnings up.
    public static var defaultLogger: Logger {
        var l = Logger(label: "lockbench.trust.postgres")
        l.logLevel = .warning
        return l
    }

    public static func open(_ target: PostgresURL, logger: Logger = defaultLogger) async throws -> PostgresTrustStorage {
        // A plain TCP connect first: a server that is not there fails now, not after the pool's retries.
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connectTimeout(.seconds(10))
                .connect(host: target.host, port: target.port).get()
            try? await channel.close()
        } catch {
            throw TrustStorageError("cannot reach PostgreSQL at \(target.host):\(target.port) (\(String(describing: error).prefix(200))); is it running and is the URL right?")
        }
        var config = PostgresClient.Configuration(host: target.host, port: target.port, username: target.user,
                                                  password: target.password, database: target.database, tls: target.tls)
        config.options.connectTimeout = connectTimeout
        let client = PostgresClient(configuration: config, backgroundLogger: logger)
        let runner = Task { await client.run() }
        do {
            try await withTimeout(connectTimeout, "PostgreSQL at \(target.host):\(target.port) did not answer within \(connectTimeout); is it running and is the URL right?") {
                try await migrate(client, logger: logger)
            }
        } catch {
            runner.cancel()
            throw Self.environmentError(error, target)
        }
        let feed = ChangeFanOut()
        let ready = ReadySignal()
        let listener = Task { await listen(client, feed: feed, ready: ready, logger: logger) }
        await ready.wait()
        return PostgresTrustStorage(client: client, logger: logger, runner: runner, listener: listener, feed: feed)
    }

    private init(client: PostgresClient, logger: Logger, runner: Task<Void, Never>, listener: Task<Void, Never>, feed: ChangeFanOut) {
        self.client = client; self.logger = logger; self.runner = runner; self.listener = listener; self.feed = feed
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any TrustTransaction) async throws -> T) async throws -> T {
        try await Self.transaction(client, logger, "BEGIN ISOLATION LEVEL READ COMMITTED") { tx in
            _ = try await tx.q("SELECT pg_advisory_xact_lock($1)", [.int(Self.writerLock)])
            return try await body(tx)
        }
    }

    public func read<T: Sendable>(_ body: @Sendable (any TrustTransaction) async throws -> T) async throws -> T {
        try await Self.transaction(client, logger, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { tx in try await body(tx) }
    }

    /// `begin`, `body`, COMMIT on one leased connection; ROLLBACK if anything throws.
    static func transaction<T: Sendable>(_ client: PostgresClient, _ logger: Logger, _ begin: String,
                                         _ body: (PostgresTransaction) async throws -> T) async throws -> T {
        try await client.withConnection { connection in
            let tx = PostgresTransaction(connection: connection, logger: logger)
            _ = try await tx.q(begin)
            do {
                let result = try await body(tx)
                _ = try await tx.q("COMMIT")
                return result
            } catch {
                _ = try? await tx.q("ROLLBACK")
                throw error
            }
        }
    }

    /// Stops listening, ends every subscriber's stream and closes the pool's connections.
    public func close() async throws {
        listener.cancel()
        runner.cancel()
        feed.finish()
        await listener.value
        await runner.value
    }

    public func changes() -> AsyncStream<TrustChange> { feed.subscribe() }

    // MARK: schema

    /// Each entry brings the schema from version i to i + 1. Times are seconds since 1970
    /// (double precision), ids compare bytewise (`COLLATE "C"`, as Swift's `<` orders them).
    static let migrations: [[String]] = [[
        "CREATE TABLE IF NOT EXISTS meta (name text COLLATE \"C\" PRIMARY KEY, value text NOT NULL)",
        "CREATE TABLE IF NOT EXISTS change_sequence (one int PRIMARY KEY CHECK (one = 1), value bigint NOT NULL)",
        "INSERT INTO change_sequence (one, value) VALUES (1, 0) ON CONFLICT DO NOTHING",
        """
        CREATE TABLE IF NOT EXISTS devices (id text COLLATE "C" PRIMARY KEY, user_id text COLLATE "C" NOT NULL,
          credential_key bytea NOT NULL, state text NOT NULL, created_at float8 NOT NULL, updated_at float8 NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS devices_by_user ON devices (user_id)",
        """
        CREATE TABLE IF NOT EXISTS grants (id text COLLATE "C" PRIMARY KEY, user_id text COLLATE "C" NOT NULL, readers text NOT NULL,
          schedules text NOT NULL, state text NOT NULL, reason text, revision bigint NOT NULL, updated_at float8 NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS grants_by_user ON grants (user_id)",
        """
        CREATE TABLE IF NOT EXISTS keys (id text COLLATE "C" PRIMARY KEY, grant_id text COLLATE "C" NOT NULL,
          device text COLLATE "C" NOT NULL, document bytea, document_id bytea NOT NULL, iteration bigint NOT NULL,
          grant_revision bigint NOT NULL, valid_until float8 NOT NULL, expected_update float8 NOT NULL, sequence bigint NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS keys_by_device ON keys (device, sequence)",
        "CREATE INDEX IF NOT EXISTS keys_by_grant ON keys (grant_id)",
        """
        CREATE TABLE IF NOT EXISTS revocations (position bigint PRIMARY KEY, pk_hash bytea, document_id bytea,
          expiry float8 NOT NULL, cause text NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS revocation_list (one int PRIMARY KEY CHECK (one = 1), serial bigint NOT NULL,
          document bytea NOT NULL, sequence bigint NOT NULL)
        """,
        "CREATE TABLE IF NOT EXISTS enrollments (hash bytea PRIMARY KEY, device text NOT NULL, expires_at float8 NOT NULL, used_at float8)",
        """
        CREATE TABLE IF NOT EXISTS families (id text COLLATE "C" PRIMARY KEY, device text COLLATE "C" NOT NULL,
          created_at float8 NOT NULL, revoked_at float8, reason text)
        """,
        "CREATE INDEX IF NOT EXISTS families_by_device ON families (device)",
        """
        CREATE TABLE IF NOT EXISTS refresh_tokens (hash bytea PRIMARY KEY, family text COLLATE "C" NOT NULL, device text NOT NULL,
          state text NOT NULL, issued_at float8 NOT NULL, used_at float8, successor bytea)
        """,
        "CREATE INDEX IF NOT EXISTS refresh_by_family ON refresh_tokens (family)",
    ]]

    /// Creates or migrates the schema in one transaction under `migrationLock`; the version is
    /// `meta.schema_version`. A database from a newer version is refused, not touched.
    static func migrate(_ client: PostgresClient, logger: Logger) async throws {
        try await transaction(client, logger, "BEGIN") { tx in
            _ = try await tx.q("SELECT pg_advisory_xact_lock($1)", [.int(migrationLock)])
            _ = try await tx.q("CREATE TABLE IF NOT EXISTS meta (name text COLLATE \"C\" PRIMARY KEY, value text NOT NULL)")
            let stored = try await tx.q("SELECT value FROM meta WHERE name = 'schema_version'").first
            let version = try stored.map { r -> Int in
                guard let v = Int(try PGRow(r).text("value")) else { throw TrustStorageError("meta.schema_version is not an integer") }
                return v
            } ?? 0
            guard version <= schemaVersion else {
                throw TrustStorageError("the database has schema version \(version); this lockbench knows up to \(schemaVersion): upgrade lockbench")
            }
            for step in migrations[version...] { for s in step { _ = try await tx.q(s) } }
            _ = try await tx.q("INSERT INTO meta (name, value) VALUES ('schema_version', $1) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                               [.text(String(schemaVersion))])
        }
    }

    // MARK: the change feed

    /// One pooled connection LISTENs for the life of the storage and hands each notification to
    /// the subscribers; after a lost connection it listens again (a change committed meanwhile is
    /// not pushed: pushes are hints, phones also poll on their schedule).
    static func listen(_ client: PostgresClient, feed: ChangeFanOut, ready: ReadySignal, logger: Logger) async {
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: changeChannel) { notifications in
                        ready.signal()
                        for try await n in notifications {
                            if let change = ChangePayload.decode(n.payload) { feed.publish(change) }
                        }
                    }
                }
            } catch {
                if Task.isCancelled { break }
                logger.warning("trust change feed: \(error); listening again in 1 s")
                try? await Task.sleep(for: .seconds(1))
            }
        }
        ready.signal()
    }

    // MARK: errors

    static func environmentError(_ error: Error, _ target: PostgresURL) -> Error {
        if error is TrustStorageError { return error }
        if let e = error as? PSQLError, let message = e.serverInfo?[.message] {
            return TrustStorageError("PostgreSQL at \(target.host):\(target.port)/\(target.database): \(message)")
        }
        return TrustStorageError("cannot reach PostgreSQL at \(target.host):\(target.port)/\(target.database) (\(String(describing: error).prefix(200))); is it running and is the URL right?")
    }

    static func withTimeout<T: Sendable>(_ limit: Duration, _ message: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask { try await Task.sleep(for: limit); return nil }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw TrustStorageError(message) }
            return value
        }
    }
}

/// A `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]` URL.
public struct PostgresURL: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var sslMode: String

    public init(parsing url: String) throws(TrustError) {
        let shown = "\"\(url.prefix(80))\""
        let example = "write postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, e.g. postgres://trust:secret@127.0.0.1:5432/trust"
        guard let c = URLComponents(string: url), let scheme = c.scheme, scheme == "postgres" || scheme == "postgresql" else {
            throw TrustError(.invalidRequest, "--db \(shown) is not a postgres:// URL: \(example)")
        }
        guard let host = c.host, !host.isEmpty else { throw TrustError(.invalidRequest, "--db \(shown) names no host: \(example)") }
        guard let user = c.user, !user.isEmpty else { throw TrustError(.invalidRequest, "--db \(shown) names no user: \(example)") }
        let database = String(c.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else { throw TrustError(.invalidRequest, "--db \(shown) names no database: \(example)") }
        if let p = c.port, !(1...65535).contains(p) { throw TrustError(.invalidRequest, "--db \(shown): the port must be 1…65535") }
        var sslMode = "prefer"
        for item in c.queryItems ?? [] {
            guard item.name == "sslmode", let v = item.value, ["disable", "prefer", "require"].contains(v) else {
                throw TrustError(.invalidRequest, "--db \(shown): only ?sslmode=disable|prefer|require is understood, not \"\(item.name.prefix(40))\"")
            }
            sslMode = v
        }
        self.host = host; self.port = c.port ?? 5432; self.user = user.removingPercentEncoding ?? user
        self.password = c.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database; self.sslMode = sslMode
    }

    var tls: PostgresClient.Configuration.TLS {
        switch sslMode {
        case "disable": .disable
        case "require": .require(.makeClientConfiguration())
        default: .prefer(.makeClientConfiguration())
        }
    }
}

/// Set once the listener is listening (or gave up), so `open` returns only when changes are heard.
final class ReadySignal: Sendable {
    private struct State {
        var done = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    func signal() {
        let w = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            if s.done { return [] }
            s.done = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for c in w { c.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.done { return true }
                s.waiters.append(c)
                return false
            }
            if now { c.resume() }
        }
    }
}
