import Codecs
import Crypto
import Foundation
import TrustModel

/// What an admin API key may do (issue 22 §3: credentials distinct from phones' tokens, scoped).
public enum AdminScope: String, Sendable, CaseIterable, Codable {
    case devicesRead = "devices:read", devicesWrite = "devices:write"
    case grantsRead = "grants:read", grantsWrite = "grants:write"
    case credentialsWrite = "credentials:write"
    case revocationsRead = "revocations:read"
    case doorsRead = "doors:read"
}

/// Admin API keys: `lbk.ID.SECRET`, shown once at creation; the site stores the id, the name, the
/// scopes and SHA-256 of the secret (a settings row on either backend), never the secret. A phone's
/// access token is never an admin key, nor the other way round (different shapes, different checks).
extension TrustService {
    public struct AdminKey: Codable, Sendable, Equatable {
        public var id: String
        public var name: String
        public var scopes: [AdminScope]
        public var secretHash: String
        public var createdAt: Date
    }

    static let adminKeyPrefix = "admin-key."

    /// A new key with `scopes`; answers the whole key, which is not stored.
    public func createAdminKey(name: String, scopes: [AdminScope]) async throws -> String {
        guard !name.isEmpty, name.utf8.count <= 64, name.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw TrustError(.invalidRequest, "an admin key's name is 1…64 printable characters")
        }
        guard !scopes.isEmpty else { throw TrustError(.invalidRequest, "name at least one scope: \(AdminScope.allCases.map(\.rawValue).joined(separator: ", "))") }
        let id = Base64URL.random(9), secret = Base64URL.random(32)
        let key = AdminKey(id: id, name: name, scopes: Array(Set(scopes)).sorted { $0.rawValue < $1.rawValue },
                           secretHash: Self.hex(secret), createdAt: now())
        let text = String(decoding: try JSONEncoder().encode(key), as: UTF8.self)
        try await storage.write { tx in try await tx.setSetting(Self.adminKeyPrefix + id, text) }
        return "lbk." + id + "." + secret
    }

    public func adminKeys() async throws -> [AdminKey] {
        try await storage.read { tx in try await tx.settings(prefix: Self.adminKeyPrefix, limit: 10_000) }
            .compactMap { try? JSONDecoder().decode(AdminKey.self, from: Data($0.value.utf8)) }
    }

    /// Deletes a key by id; false when there was none.
    @discardableResult
    public func deleteAdminKey(id: String) async throws -> Bool {
        try await storage.write { tx in
            guard id.utf8.count <= 64, try await tx.setting(Self.adminKeyPrefix + id) != nil else { return false }
            try await tx.deleteSetting(Self.adminKeyPrefix + id)
            return true
        }
    }

    /// The key named by `Authorization: Bearer lbk.ID.SECRET`, if it holds `scope`: its name.
    /// `invalid_token` for anything that is not a stored key's secret, `forbidden` for a key
    /// without the scope.
    public func authorizeAdmin(_ presented: String, scope: AdminScope) async throws -> String {
        let parts = presented.split(separator: ".", omittingEmptySubsequences: false)
        guard presented.utf8.count <= 128, parts.count == 3, parts[0] == "lbk" else {
            throw TrustError(.invalidToken, "an admin key looks like lbk.ID.SECRET (`trust admin-key create`); a phone's token is no admin key")
        }
        let id = String(parts[1]), hash = Self.hex(String(parts[2]))
        let stored = try await storage.read { tx in try await tx.setting(Self.adminKeyPrefix + id) }
        guard let stored, let key = try? JSONDecoder().decode(AdminKey.self, from: Data(stored.utf8)),
              Primitives.constantTimeEqual(Array(key.secretHash.utf8), Array(hash.utf8)) else {
            throw TrustError(.invalidToken, "unknown or deleted admin key")
        }
        guard key.scopes.contains(scope) else {
            throw TrustError(.forbidden, "admin key \(key.name) lacks the scope \(scope.rawValue) (it has \(key.scopes.map(\.rawValue).joined(separator: ", ")))")
        }
        return key.name
    }

    /// The entries of the current revocation list (the admin API's view of it).
    public func revocationEntries() async throws -> [RevocationRecord] {
        try await storage.read { tx in try await tx.revocations() }
    }
}
