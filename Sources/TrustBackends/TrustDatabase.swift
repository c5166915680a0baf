import TrustCore
import TrustModel
import TrustPostgres
import TrustSQLite

/// Where the storage backends are chosen: a `--db` URL names one. A new backend is a module
/// implementing `TrustStorage` and one case here.
extension TrustSite {
    /// Opens the service on this site's database (or `database`: `sqlite:PATH`).
    public func service(database: String? = nil, clock: any TrustClock = SystemClock()) async throws -> TrustService {
        let storage = try await TrustSite.storage(database ?? "sqlite:" + databasePath)
        return try await TrustService(storage: storage, issuerKey: issuerKey, tokenKey: tokenKey, settings: settings, clock: clock)
    }

    /// `sqlite:PATH` (one instance), or `postgres://USER[:PASSWORD]@HOST[:PORT]/DB` (any number
    /// of instances on one database). A malformed URL is a `TrustError` (usage); a server that
    /// cannot be reached a `TrustStorageError` (environment).
    public static func storage(_ url: String) async throws -> any TrustStorage {
        if url.hasPrefix("sqlite:") {
            let path = String(url.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw TrustError(.invalidRequest, "--db sqlite:PATH needs a path") }
            return try await SQLiteTrustStorage.open(path: path)
        }
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            return try await PostgresTrustStorage.open(try PostgresURL(parsing: url))
        }
        throw TrustError(.invalidRequest, "--db \"\(url.prefix(80))\" is neither sqlite:PATH nor postgres://USER[:PASSWORD]@HOST[:PORT]/DB")
    }
}
