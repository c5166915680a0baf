import Foundation
import TrustModel
import Logging
import NIOCore
import PostgresNIO

/// One transaction on one leased connection (`PostgresTrustStorage.write`/`read`): the records of
/// `Records.swift` in tables shaped like the SQLite ones, the hot composite operations as one
/// statement each.
struct PostgresTransaction: TrustTransaction {
    let connection: PostgresConnection
    let logger: Logger

    /// A bind value. NULL is sent untyped: every statement here puts it where PostgreSQL knows the type.
    enum Value {
        case text(String), texts([String]), int(Int64), real(Double), bytes([UInt8]), null

        static func maybeText(_ s: String?) -> Value { s.map { .text($0) } ?? .null }
        static func maybeBytes(_ b: [UInt8]?) -> Value { b.map { .bytes($0) } ?? .null }
        static func time(_ d: Date) -> Value { .real(d.timeIntervalSince1970) }
        static func maybeTime(_ d: Date?) -> Value { d.map { .real($0.timeIntervalSince1970) } ?? .null }
    }

    /// At most this many rows in one multi-row statement (PostgreSQL allows 65535 parameters).
    static let maxRows = 5_000

    func q(_ sql: String, _ values: [Value] = []) async throws -> [PostgresRandomAccessRow] {
        var binds = PostgresBindings(capacity: values.count)
        for v in values {
            switch v {
            case .text(let s): binds.append(s)
            case .texts(let s): binds.append(s)
            case .int(let i): binds.append(i)
            case .real(let d): binds.append(d)
            case .bytes(let b): binds.append(ByteBuffer(bytes: b))
            case .null: binds.appendNull()
            }
        }
        var out = [PostgresRandomAccessRow]()
        for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) {
            out.append(row.makeRandomAccess())
        }
        return out
    }

    /// `($1, $2, …), ($n+1, …)` for `rows` rows of `columns` parameters.
    static func placeholders(rows: Int, columns: Int) -> String {
        (0..<rows).map { r in "(" + (1...columns).map { "$\(r * columns + $0)" }.joined(separator: ", ") + ")" }.joined(separator: ", ")
    }

    // MARK: sequence and settings

    func nextSequence() async throws -> Int64 { try await reserveSequences(1) }

    func reserveSequences(_ count: Int) async throws -> Int64 {
        guard count > 0, count <= 1_000_000 else { throw TrustStorageError("reserveSequences: \(count) is not 1…1000000") }
        guard let r = try await q("UPDATE change_sequence SET value = value + $1 WHERE one = 1 RETURNING value - $1 + 1 AS first",
                                  [.int(Int64(count))]).first else { throw TrustStorageError("change_sequence has no row") }
        return try PGRow(r).int("first")
    }

    func currentSequence() async throws -> Int64 {
        guard let r = try await q("SELECT value FROM change_sequence WHERE one = 1").first else { return 0 }
        return try PGRow(r).int("value")
    }

    func setting(_ name: String) async throws -> String? {
        try await q("SELECT value FROM meta WHERE name = $1", [.text("setting." + name)]).first.map { try PGRow($0).text("value") }
    }

    func setSetting(_ name: String, _ value: String) async throws {
        _ = try await q("INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                        [.text("setting." + name), .text(value)])
    }

    func deleteSetting(_ name: String) async throws {
        _ = try await q("DELETE FROM meta WHERE name = $1", [.text("setting." + name)])
    }

    func settings(prefix: String, limit: Int) async throws -> [(name: String, value: String)] {
        // In byte order (COLLATE "C"), whatever the database's collation: the entries' names sort
        // by their zero-padded numbers.
        try await q("SELECT name, value FROM meta WHERE starts_with(name, $1) ORDER BY name COLLATE \"C\" LIMIT $2",
                    [.text("setting." + prefix), .int(Int64(max(0, min(limit, 100_000))))])
            .map { let row = PGRow($0); return (String(try row.text("name").dropFirst("setting.".count)), try row.text("value")) }
    }

    // MARK: devices

    static let deviceColumns = ["id", "user_id", "credential_key", "state", "created_at", "updated_at"]

    func device(_ id: String) async throws -> DeviceRecord? {
        try await q("SELECT * FROM devices WHERE id = $1", [.text(id)]).first.map { try PGRow($0).device() }
    }

    func devices(user: String?) async throws -> [DeviceRecord] {
        let rows = if let user { try await q("SELECT * FROM devices WHERE user_id = $1 ORDER BY id", [.text(user)]) }
            else { try await q("SELECT * FROM devices ORDER BY id") }
        return try rows.map { try PGRow($0).device() }
    }

    func putDevice(_ d: DeviceRecord) async throws {
        _ = try await q("""
            INSERT INTO devices (id, user_id, credential_key, state, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, credential_key = excluded.credential_key,
              state = excluded.state, updated_at = excluded.updated_at
            """, [.text(d.id), .text(d.user), .bytes(d.credentialKey), .text(d.credentialState.rawValue), .time(d.createdAt), .time(d.updatedAt)])
    }

    func deleteDevice(_ id: String) async throws {
        _ = try await q("DELETE FROM devices WHERE id = $1", [.text(id)])
    }

    // MARK: grants

    func grant(_ id: String) async throws -> GrantRecord? {
        try await q("SELECT * FROM grants WHERE id = $1", [.text(id)]).first.map { try PGRow($0).grant() }
    }

    func grants(user: String?) async throws -> [GrantRecord] {
        let rows = if let user { try await q("SELECT * FROM grants WHERE user_id = $1 ORDER BY id", [.text(user)]) }
            else { try await q("SELECT * FROM grants ORDER BY id") }
        return try rows.map { try PGRow($0).grant() }
    }

    func putGrant(_ g: GrantRecord) async throws {
        _ = try await q("""
            INSERT INTO grants (id, user_id, readers, schedules, state, reason, revision, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, readers = excluded.readers, schedules = excluded.schedules,
              state = excluded.state, reason = excluded.reason, revision = excluded.revision, updated_at = excluded.updated_at
            """, [.text(g.id), .text(g.user), .text(StoredList.encode(g.readers)), .text(StoredList.encode(g.schedules)),
                  .text(g.state.rawValue), .maybeText(g.reason), .int(Int64(g.revision)), .time(g.updatedAt)])
    }

    // MARK: keys

    func keys(device: String) async throws -> [KeyRecord] {
        try await q("SELECT * FROM keys WHERE device = $1 ORDER BY id", [.text(device)]).map { try PGRow($0).key() }
    }

    func keys(grant: String) async throws -> [KeyRecord] {
        try await q("SELECT * FROM keys WHERE grant_id = $1 ORDER BY id", [.text(grant)]).map { try PGRow($0).key() }
    }

    func keys(device: String, after sequence: Int64) async throws -> [KeyRecord] {
        try await q("SELECT * FROM keys WHERE device = $1 AND sequence > $2 ORDER BY sequence", [.text(device), .int(sequence)])
            .map { try PGRow($0).key() }
    }

    func putKey(_ k: KeyRecord) async throws { try await putKeys([k]) }

    /// Every key in one multi-row upsert (chunks of `maxRows`).
    func putKeys(_ keys: [KeyRecord]) async throws {
        for start in stride(from: 0, to: keys.count, by: Self.maxRows) {
            let chunk = keys[start..<min(keys.count, start + Self.maxRows)]
            _ = try await q("""
                INSERT INTO keys (id, grant_id, device, document, document_id, iteration, grant_revision, valid_until,
                  expected_update, sequence) VALUES \(Self.placeholders(rows: chunk.count, columns: 10))
                ON CONFLICT (id) DO UPDATE SET document = excluded.document, document_id = excluded.document_id,
                  iteration = excluded.iteration, grant_revision = excluded.grant_revision, valid_until = excluded.valid_until,
                  expected_update = excluded.expected_update, sequence = excluded.sequence
                """, chunk.flatMap { k in
                    [.text(k.id), .text(k.grant), .text(k.device), .maybeBytes(k.document), .bytes(k.documentID), .int(Int64(k.iteration)),
                     .int(Int64(k.grantRevision)), .time(k.validUntil), .time(k.expectedUpdate), .int(k.sequence)] as [Value]
                })
        }
    }

    // MARK: revocations

    func revocations() async throws -> [RevocationRecord] {
        try await q("SELECT * FROM revocations ORDER BY position").map { r in
            let row = PGRow(r)
            return RevocationRecord(publicKeyHash: try row.optionalBytes("pk_hash"), documentID: try row.optionalBytes("document_id"),
                                    expiry: try row.date("expiry"), cause: try row.text("cause"))
        }
    }

    func replaceRevocations(_ entries: [RevocationRecord]) async throws {
        _ = try await q("DELETE FROM revocations")
        for start in stride(from: 0, to: entries.count, by: Self.maxRows) {
            let chunk = Array(entries[start..<min(entries.count, start + Self.maxRows)])
            _ = try await q("INSERT INTO revocations (position, pk_hash, document_id, expiry, cause) VALUES \(Self.placeholders(rows: chunk.count, columns: 5))",
                            chunk.enumerated().flatMap { i, e in
                                [.int(Int64(start + i)), .maybeBytes(e.publicKeyHash), .maybeBytes(e.documentID), .time(e.expiry), .text(e.cause)] as [Value]
                            })
        }
    }

    func revocationList() async throws -> RevocationListRecord? {
        try await q("SELECT serial, document, sequence FROM revocation_list WHERE one = 1").first.map { try PGRow($0).list() }
    }

    func putRevocationList(_ l: RevocationListRecord) async throws {
        guard let serial = Int64(exactly: l.serial) else { throw TrustStorageError("revocation serial \(l.serial) does not fit a bigint") }
        _ = try await q("""
            INSERT INTO revocation_list (one, serial, document, sequence) VALUES (1, $1, $2, $3)
            ON CONFLICT (one) DO UPDATE SET serial = excluded.serial, document = excluded.document, sequence = excluded.sequence
            """, [.int(serial), .bytes(l.document), .int(l.sequence)])
    }

    // MARK: tokens

    func enrollment(hash: [UInt8]) async throws -> EnrollmentRecord? {
        try await q("SELECT * FROM enrollments WHERE hash = $1", [.bytes(hash)]).first.map { r in
            let row = PGRow(r)
            return EnrollmentRecord(hash: try row.bytes("hash"), device: try row.text("device"), expiresAt: try row.date("expires_at"),
                                    usedAt: try row.optionalDate("used_at"))
        }
    }

    func putEnrollment(_ e: EnrollmentRecord) async throws {
        _ = try await q("""
            INSERT INTO enrollments (hash, device, expires_at, used_at) VALUES ($1, $2, $3, $4)
            ON CONFLICT (hash) DO UPDATE SET used_at = excluded.used_at
            """, [.bytes(e.hash), .text(e.device), .time(e.expiresAt), .maybeTime(e.usedAt)])
    }

    func family(_ id: String) async throws -> TokenFamilyRecord? {
        try await q("SELECT * FROM families WHERE id = $1", [.text(id)]).first.map { try PGRow($0).family() }
    }

    func putFamily(_ f: TokenFamilyRecord) async throws {
        _ = try await q("""
            INSERT INTO families (id, device, created_at, revoked_at, reason) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (id) DO UPDATE SET revoked_at = excluded.revoked_at, reason = excluded.reason
            """, [.text(f.id), .text(f.device), .time(f.createdAt), .maybeTime(f.revokedAt), .maybeText(f.revokedReason)])
    }

    func refreshToken(hash: [UInt8]) async throws -> RefreshTokenRecord? {
        try await q("SELECT * FROM refresh_tokens WHERE hash = $1", [.bytes(hash)]).first.map { try PGRow($0).token() }
    }

    func refreshTokens(family: String) async throws -> [RefreshTokenRecord] {
        try await q("SELECT * FROM refresh_tokens WHERE family = $1 ORDER BY issued_at, hash", [.text(family)]).map { try PGRow($0).token() }
    }

    func putRefreshToken(_ t: RefreshTokenRecord) async throws { try await putRefreshTokens([t]) }

    /// Every token in one multi-row upsert (chunks of `maxRows`).
    func putRefreshTokens(_ tokens: [RefreshTokenRecord]) async throws {
        for start in stride(from: 0, to: tokens.count, by: Self.maxRows) {
            let chunk = tokens[start..<min(tokens.count, start + Self.maxRows)]
            _ = try await q("""
                INSERT INTO refresh_tokens (hash, family, device, state, issued_at, used_at, successor)
                VALUES \(Self.placeholders(rows: chunk.count, columns: 7))
                ON CONFLICT (hash) DO UPDATE SET state = excluded.state, used_at = excluded.used_at, successor = excluded.successor
                """, chunk.flatMap { t in
                    [.bytes(t.hash), .text(t.family), .text(t.device), .text(t.state.rawValue), .time(t.issuedAt), .maybeTime(t.usedAt),
                     .maybeBytes(t.successor)] as [Value]
                })
        }
    }

    /// Device events in two statements per chunk: one multi-row upsert, one delete of every named
    /// device's rows older than its `keep`-th newest (in byte order, as `settings(prefix:)` reads them).
    func appendDeviceEvents(_ events: [DeviceEvent], keep: Int) async throws {
        guard !events.isEmpty else { return }
        for start in stride(from: 0, to: events.count, by: 500) {
            let chunk = events[start..<min(events.count, start + 500)]
            _ = try await q("""
                INSERT INTO meta (name, value) VALUES \(Self.placeholders(rows: chunk.count, columns: 2))
                ON CONFLICT (name) DO UPDATE SET value = excluded.value
                """, chunk.flatMap { e in [.text("setting." + e.rowName), .text(e.encoded())] as [Value] })
        }
        let devices = Set(events.map(\.device)).sorted()
        for start in stride(from: 0, to: devices.count, by: 200) {
            let chunk = Array(devices[start..<min(devices.count, start + 200)])
            let clauses = chunk.indices.map { i in
                "(starts_with(name, $\(2 * i + 1)) AND name COLLATE \"C\" < (SELECT name FROM meta WHERE starts_with(name, $\(2 * i + 1)) "
                    + "ORDER BY name COLLATE \"C\" DESC LIMIT 1 OFFSET $\(2 * i + 2)))"
            }
            _ = try await q("DELETE FROM meta WHERE " + clauses.joined(separator: " OR "), chunk.flatMap { d in
                [.text("setting." + DeviceEvent.rowPrefix(device: d)), .int(Int64(max(0, keep - 1)))] as [Value]
            })
        }
    }

    func revokeFamilies(device: String, at: Date, reason: String) async throws {
        _ = try await q("UPDATE families SET revoked_at = $1, reason = $2 WHERE device = $3 AND revoked_at IS NULL",
                        [.time(at), .text(reason), .text(device)])
    }

    // MARK: composite operations: one statement each

    /// The poll's whole read as one statement, so one round trip: tagged rows in generic columns
    /// c1…c13 like the SQLite one — the device, its keys, its user's grants, the revocation list,
    /// the family's revocation and the change sequence.
    func pollState(device: String, family: String?) async throws -> PollState {
        let rows = try await q("""
            SELECT 'd' AS t, id AS c1, user_id AS c2, credential_key AS c3, state AS c4, created_at AS c5, updated_at AS c6,
                   NULL::bigint AS c7, NULL::bigint AS c8, NULL::bytea AS c9, NULL::text AS c10, NULL::bigint AS c11,
                   NULL::text AS c12, NULL::text AS c13
              FROM devices WHERE id = $1
            UNION ALL SELECT 'k', id, grant_id, document, device, valid_until, expected_update, iteration, grant_revision, document_id,
                   NULL, sequence, NULL, NULL FROM keys WHERE device = $1
            UNION ALL SELECT 'g', id, user_id, NULL, state, updated_at, NULL, revision, NULL, NULL, schedules, NULL, readers, reason
                   FROM grants WHERE user_id = (SELECT user_id FROM devices WHERE id = $1)
            UNION ALL SELECT 'l', NULL, NULL, document, NULL, NULL, NULL, serial, sequence, NULL, NULL, NULL, NULL, NULL
                   FROM revocation_list WHERE one = 1
            UNION ALL SELECT 'f', NULL, NULL, NULL, NULL, revoked_at, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
                   FROM families WHERE id = $2
            UNION ALL SELECT 's', NULL, NULL, NULL, NULL, NULL, NULL, value, NULL, NULL, NULL, NULL, NULL, NULL
                   FROM change_sequence WHERE one = 1
            """, [.text(device), .text(family ?? "")])
        // A named family with no row is treated as revoked (a token naming a login that does not exist).
        var state = PollState(device: nil, keys: [], grants: [], list: nil, familyRevoked: family != nil, sequence: 0)
        for r in rows {
            let row = PGRow(r)
            switch try row.text("t") {
            case "d":
                state.device = try row.device(["c1", "c2", "c3", "c4", "c5", "c6"])
            case "k":
                state.keys.append(KeyRecord(id: try row.text("c1"), grant: try row.text("c2"), device: try row.text("c4"),
                                            document: try row.optionalBytes("c3"), documentID: try row.bytes("c9"),
                                            iteration: try row.intValue("c7"), grantRevision: try row.intValue("c8"),
                                            validUntil: try row.date("c5"), expectedUpdate: try row.date("c6"), sequence: try row.int("c11")))
            case "g":
                guard let s = GrantRecord.State(rawValue: try row.text("c4")) else { throw TrustStorageError("grants.state: unknown value") }
                state.grants.append(GrantRecord(id: try row.text("c1"), user: try row.text("c2"),
                                                readers: try StoredList.decode(try row.text("c12")),
                                                schedules: try StoredList.decode(try row.text("c10")), state: s,
                                                reason: try row.optionalText("c13"), revision: try row.intValue("c7"),
                                                updatedAt: try row.date("c5")))
            case "l":
                guard let serial = UInt64(exactly: try row.int("c7")) else { throw TrustStorageError("revocation_list.serial is negative") }
                state.list = RevocationListRecord(serial: serial, document: try row.bytes("c3"), sequence: try row.int("c8"))
            case "f": state.familyRevoked = try row.optionalDouble("c5") != nil
            case "s": state.sequence = try row.int("c7")
            default: throw TrustStorageError("pollState: unknown row tag")
            }
        }
        state.keys.sort { $0.id < $1.id }
        state.grants.sort { $0.id < $1.id }
        return state
    }

    func pollVersions(devices: [String]) async throws -> PollVersions {
        let unique = Array(Set(devices))
        guard unique.count <= 10_000 else { throw TrustStorageError("pollVersions: too many devices at once") }
        var versions = PollVersions(keys: [:], list: nil)
        for r in try await q("""
            SELECT 'k' AS t, device AS d, max(sequence) AS s FROM keys WHERE device = ANY($1) GROUP BY device
            UNION ALL SELECT 'l', NULL, sequence FROM revocation_list WHERE one = 1
            """, [.texts(unique)]) {
            let row = PGRow(r)
            if try row.text("t") == "l" { versions.list = try row.int("s") } else { versions.keys[try row.text("d")] = try row.int("s") }
        }
        return versions
    }

    func rotationStates(hashes: [[UInt8]]) async throws -> [RotationState] {
        let unique = Array(Set(hashes))
        guard !unique.isEmpty else { return [] }
        guard unique.count <= 10_000 else { throw TrustStorageError("rotationStates: too many tokens at once") }
        return try await q("""
            SELECT t.*, f.id AS f_id, f.device AS f_device, f.created_at AS f_created_at, f.revoked_at AS f_revoked_at,
                   f.reason AS f_reason, d.id AS d_id, d.user_id AS d_user_id, d.credential_key AS d_credential_key, d.state AS d_state,
                   d.created_at AS d_created_at, d.updated_at AS d_updated_at
            FROM refresh_tokens t LEFT JOIN families f ON f.id = t.family LEFT JOIN devices d ON d.id = t.device
            WHERE t.hash IN (\(unique.indices.map { "$\($0 + 1)" }.joined(separator: ", ")))
            """, unique.map { .bytes($0) }).map { r in
            let row = PGRow(r)
            return RotationState(token: try row.token(),
                                 family: try row.optionalText("f_id") == nil ? nil : try row.family(Self.familyColumns.map { "f_" + $0 }),
                                 device: try row.optionalText("d_id") == nil ? nil : try row.device(Self.deviceColumns.map { "d_" + $0 }))
        }
    }

    static let familyColumns = ["id", "device", "created_at", "revoked_at", "reason"]

    // MARK: the change feed

    /// Announces a committed change on `PostgresTrustStorage.changeChannel`: NOTIFY inside the
    /// transaction is delivered at COMMIT and never if it rolls back.
    func announce(_ change: TrustChange) async throws {
        for payload in ChangePayload.encode(change) {
            _ = try await q("SELECT pg_notify($1, $2)", [.text(PostgresTrustStorage.changeChannel), .text(payload)])
        }
    }
}

/// Typed reads of one row: a missing or mistyped column is a `TrustStorageError` naming it, never a trap.
struct PGRow {
    let row: PostgresRandomAccessRow
    init(_ row: PostgresRandomAccessRow) { self.row = row }

    private func cell(_ c: String) throws -> PostgresCell {
        guard row.contains(c) else { throw TrustStorageError("column \(c) is missing") }
        return row[c]
    }
    private func decode<T: PostgresDecodable>(_ c: String, _ type: T.Type, _ what: String) throws -> T? {
        let cell = try cell(c)
        guard cell.bytes != nil else { return nil }
        do { return try cell.decode(T.self) } catch { throw TrustStorageError("column \(c) is not \(what)") }
    }
    private func required<T>(_ v: T?, _ c: String) throws -> T {
        guard let v else { throw TrustStorageError("column \(c) is NULL") }
        return v
    }

    func optionalText(_ c: String) throws -> String? { try decode(c, String.self, "text") }
    func text(_ c: String) throws -> String { try required(try optionalText(c), c) }
    func int(_ c: String) throws -> Int64 { try required(try decode(c, Int64.self, "an integer"), c) }
    func intValue(_ c: String) throws -> Int {
        guard let i = Int(exactly: try int(c)) else { throw TrustStorageError("column \(c) is out of range") }
        return i
    }
    func optionalDouble(_ c: String) throws -> Double? { try decode(c, Double.self, "a number") }
    func optionalDate(_ c: String) throws -> Date? { try optionalDouble(c).map(Date.init(timeIntervalSince1970:)) }
    func date(_ c: String) throws -> Date { try required(try optionalDate(c), c) }
    func optionalBytes(_ c: String) throws -> [UInt8]? { try decode(c, ByteBuffer.self, "bytes").map { Array($0.readableBytesView) } }
    func bytes(_ c: String) throws -> [UInt8] { try required(try optionalBytes(c), c) }

    func device(_ c: [String] = PostgresTransaction.deviceColumns) throws -> DeviceRecord {
        guard let state = CredentialState(rawValue: try text(c[3])) else { throw TrustStorageError("devices.state: unknown value") }
        return DeviceRecord(id: try text(c[0]), user: try text(c[1]), credentialKey: try bytes(c[2]), credentialState: state,
                            createdAt: try date(c[4]), updatedAt: try date(c[5]))
    }

    func grant() throws -> GrantRecord {
        guard let state = GrantRecord.State(rawValue: try text("state")) else { throw TrustStorageError("grants.state: unknown value") }
        return GrantRecord(id: try text("id"), user: try text("user_id"), readers: try StoredList.decode(try text("readers")),
                           schedules: try StoredList.decode(try text("schedules")), state: state, reason: try optionalText("reason"),
                           revision: try intValue("revision"), updatedAt: try date("updated_at"))
    }

    func key() throws -> KeyRecord {
        KeyRecord(id: try text("id"), grant: try text("grant_id"), device: try text("device"), document: try optionalBytes("document"),
                  documentID: try bytes("document_id"), iteration: try intValue("iteration"), grantRevision: try intValue("grant_revision"),
                  validUntil: try date("valid_until"), expectedUpdate: try date("expected_update"), sequence: try int("sequence"))
    }

    func list() throws -> RevocationListRecord {
        guard let serial = UInt64(exactly: try int("serial")) else { throw TrustStorageError("revocation_list.serial is negative") }
        return RevocationListRecord(serial: serial, document: try bytes("document"), sequence: try int("sequence"))
    }

    func family(_ c: [String] = PostgresTransaction.familyColumns) throws -> TokenFamilyRecord {
        TokenFamilyRecord(id: try text(c[0]), device: try text(c[1]), createdAt: try date(c[2]), revokedAt: try optionalDate(c[3]),
                          revokedReason: try optionalText(c[4]))
    }

    func token() throws -> RefreshTokenRecord {
        guard let state = RefreshTokenRecord.State(rawValue: try text("state")) else { throw TrustStorageError("refresh_tokens.state: unknown value") }
        return RefreshTokenRecord(hash: try bytes("hash"), family: try text("family"), device: try text("device"), state: state,
                                  issuedAt: try date("issued_at"), usedAt: try optionalDate("used_at"), successor: try optionalBytes("successor"))
    }
}
