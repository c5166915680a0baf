import Foundation
import TrustModel
import NIOCore
import SQLiteNIO
import Synchronization
import VaporCSQLite

/// A connection to the trust database driven through the C API of the SQLite that sqlite-nio
/// builds, on the calling thread, with its statements prepared once. Read-only for the poll's one
/// read, the hottest statement the service runs (a WAL reader does not wait for the writer, so the
/// read is short and never blocks on a commit; the store keeps several), and read-write for the
/// one writer, whose batches are a chain of statements on the serialized write path. Through
/// sqlite-nio every statement is a hand-off to its thread pool and back (thread switches, a large
/// part of a key refresh's CPU and of each batch's latency on a small machine) and is parsed
/// anew. One caller at a time (`connection`).
final class SQLiteDirectReader: Sendable {
    /// A result row: its values by column name, as sqlite-nio would give them.
    struct Row: SQLiteColumns {
        let names: [String: Int]
        let values: [SQLiteData]
        func column(_ name: String) -> SQLiteData? { names[name].map { values[$0] } }

        init(names: [String: Int], values: [SQLiteData]) { self.names = names; self.values = values }

        /// A row sqlite-nio read.
        init(_ row: SQLiteRow) {
            let columns = row.columns
            names = Dictionary(columns.enumerated().map { ($1.name, $0) }) { first, _ in first }
            values = columns.map(\.data)
        }
    }

    /// The C handle (`sqlite3*`) and its prepared statements: reached only with the mutex held (a
    /// try-lock lets the store pick a free reader).
    private struct Connection {
        var db: OpaquePointer?
        var statements: [String: (OpaquePointer, [String: Int])] = [:]
    }
    private let connection: Mutex<Connection>
    private let path: String

    /// At most this many statements stay prepared; others (multi-row statements of unusual
    /// sizes) are prepared for one use.
    static let maxPrepared = 256

    /// `writable`: read-write (the file must exist: the store creates and migrates it first).
    init(path: String, writable: Bool = false) throws {
        self.path = path
        var handle: OpaquePointer?
        let rc = sqlite_nio_sqlite3_open_v2(path, &handle, (writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "code \(rc)"
            sqlite_nio_sqlite3_close(handle)
            throw TrustStorageError("opening \(path) for \(writable ? "writing" : "reading"): \(message)")
        }
        sqlite_nio_sqlite3_busy_timeout(handle, 10_000)
        connection = Mutex(Connection(db: handle))
    }

    /// Runs a statement that answers no rows (BEGIN, COMMIT, a PRAGMA).
    func execute(_ sql: String) throws {
        _ = try rows(sql, [])
    }

    deinit { close() }

    func close() {
        connection.withLock { c in
            for (statement, _) in c.statements.values { sqlite_nio_sqlite3_finalize(statement) }
            c.statements = [:]
            if let db = c.db { sqlite_nio_sqlite3_close(db) }
            c.db = nil
        }
    }

    /// Runs `sql` (prepared once per connection) with `binds` and returns its rows; waits while
    /// another caller uses this connection.
    func rows(_ sql: String, _ binds: [SQLiteData]) throws -> [Row] {
        try connection.withLock { c throws(any Error) in try rows(sql, binds, &c) }
    }

    /// The same when this reader is free now; nil (nothing run) when another caller has it.
    func rowsIfFree(_ sql: String, _ binds: [SQLiteData]) throws -> [Row]? {
        try connection.withLockIfAvailable { c throws(any Error) in try rows(sql, binds, &c) }
    }

    private func rows(_ sql: String, _ binds: [SQLiteData], _ c: inout Connection) throws -> [Row] {
        guard let db = c.db else { throw TrustStorageError("the connection to \(path) is closed") }
        let (statement, names, kept) = try prepared(sql, db, &c.statements)
        defer {
            if kept {
                sqlite_nio_sqlite3_reset(statement)
                sqlite_nio_sqlite3_clear_bindings(statement)
            } else {
                sqlite_nio_sqlite3_finalize(statement)
            }
        }
        for (i, value) in binds.enumerated() {
            let index = Int32(i + 1)
            let rc: Int32
            switch value {
            case .integer(let n): rc = sqlite_nio_sqlite3_bind_int64(statement, index, Int64(n))
            case .float(let d): rc = sqlite_nio_sqlite3_bind_double(statement, index, d)
            case .text(let t): rc = sqlite_nio_sqlite3_bind_text64(statement, index, t, UInt64(t.utf8.count), Self.transient, UInt8(SQLITE_UTF8))
            case .blob(let b):
                rc = b.withUnsafeReadableBytes { sqlite_nio_sqlite3_bind_blob64(statement, index, $0.baseAddress, UInt64($0.count), Self.transient) }
            case .null: rc = sqlite_nio_sqlite3_bind_null(statement, index)
            }
            guard rc == SQLITE_OK else { throw error(db, "binding parameter \(index)") }
        }
        var out = [Row]()
        let count = sqlite_nio_sqlite3_column_count(statement)
        while true {
            let rc = sqlite_nio_sqlite3_step(statement)
            if rc == SQLITE_DONE { return out }
            guard rc == SQLITE_ROW else { throw error(db, "running a statement on") }
            var values = [SQLiteData]()
            values.reserveCapacity(Int(count))
            for c in 0..<count {
                switch sqlite_nio_sqlite3_column_type(statement, c) {
                case SQLITE_INTEGER: values.append(.integer(Int(sqlite_nio_sqlite3_column_int64(statement, c))))
                case SQLITE_FLOAT: values.append(.float(sqlite_nio_sqlite3_column_double(statement, c)))
                case SQLITE_TEXT:
                    let length = Int(sqlite_nio_sqlite3_column_bytes(statement, c))
                    let text = sqlite_nio_sqlite3_column_text(statement, c).map { String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""
                    values.append(.text(text))
                case SQLITE_BLOB:
                    let length = Int(sqlite_nio_sqlite3_column_bytes(statement, c))
                    let base = sqlite_nio_sqlite3_column_blob(statement, c)
                    values.append(.blob(base.map { ByteBuffer(bytes: UnsafeRawBufferPointer(start: $0, count: length)) } ?? ByteBuffer()))
                default: values.append(.null)
                }
            }
            out.append(Row(names: names, values: values))
        }
    }

    /// The statement, its columns by name, and whether it stays prepared (false: finalize after use).
    private func prepared(_ sql: String, _ db: OpaquePointer,
                          _ statements: inout [String: (OpaquePointer, [String: Int])]) throws -> (OpaquePointer, [String: Int], Bool) {
        if let known = statements[sql] { return (known.0, known.1, true) }
        let keep = statements.count < Self.maxPrepared
        var statement: OpaquePointer?
        guard sqlite_nio_sqlite3_prepare_v3(db, sql, -1, keep ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0, &statement, nil) == SQLITE_OK,
              let statement else {
            throw error(db, "preparing a statement for")
        }
        var names = [String: Int]()
        for c in 0..<sqlite_nio_sqlite3_column_count(statement) {
            if let name = sqlite_nio_sqlite3_column_name(statement, c) { names[String(cString: name)] = Int(c) }
        }
        if keep { statements[sql] = (statement, names) }
        return (statement, names, keep)
    }

    private func error(_ db: OpaquePointer, _ doing: String) -> TrustStorageError {
        TrustStorageError("\(doing) \(path): \(String(cString: sqlite_nio_sqlite3_errmsg(db)))")
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
