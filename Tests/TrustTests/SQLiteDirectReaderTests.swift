import Foundation
import LockBenchTestSupport
import NIOCore
import SQLiteNIO
@testable import TrustModel
@testable import TrustCore
@testable import TrustSQLite
@testable import TrustPostgres
@testable import TrustBackends
@testable import TrustHTTP
import XCTest

/// The poll's read goes through SQLite's C API on the caller's thread (`SQLiteDirectReader`): it
/// must read every type as sqlite-nio does, see each commit at once, and fail with a message.
final class SQLiteDirectReaderTests: XCTestCase {
    func testItReadsEveryTypeAsSQLiteNIODoesAndSeesEachCommitAtOnce() async throws {
        let path = try temporaryDirectory("lockbench-direct").path + "/t.sqlite"
        let writer = try await SQLiteConnection.open(storage: .file(path: path))
        _ = try await writer.query("PRAGMA journal_mode=WAL")
        _ = try await writer.query("CREATE TABLE t (i INTEGER, f REAL, s TEXT, b BLOB, n TEXT)")
        let reader = try SQLiteDirectReader(path: path)
        defer { reader.close() }
        let sql = "SELECT i, f, s, b, n FROM t WHERE s = ?1 OR i = ?2 ORDER BY i"
        for (k, text) in ["é \"quoted\" \\ \n", "", "鍵"].enumerated() {
            _ = try await writer.query("INSERT INTO t VALUES (?, ?, ?, ?, NULL)",
                                       [.integer(-7 + k), .float(2.5 * Double(k)), .text(text), .blob(ByteBuffer(bytes: [0, 1, 255, UInt8(k)]))])
            let binds: [SQLiteData] = [.text(text), .integer(-7)]
            let direct = try reader.rows(sql, binds)                                       // the statement is prepared once
            let free = try XCTUnwrap(try reader.rowsIfFree(sql, binds), "no other caller holds the reader")
            XCTAssertEqual(free.map(\.values), direct.map(\.values))
            let nio = try await writer.query(sql, binds)
            XCTAssertEqual(direct.count, nio.count, "after insert \(k)")
            for (d, n) in zip(direct, nio) {
                for column in ["i", "f", "s", "b", "n"] { XCTAssertEqual(d.column(column), n.column(column), "\(column) after insert \(k)") }
            }
        }
        XCTAssertThrowsError(try reader.rows("SELECT x FROM nowhere", [])) {
            XCTAssertTrue("\($0)".contains("no such table: nowhere"), "\($0)")
        }
        try await writer.close()
        reader.close()
        XCTAssertThrowsError(try reader.rows(sql, [])) { XCTAssertTrue("\($0)".contains("closed")) }
    }
}
