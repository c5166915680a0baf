import Foundation

/// A grant: a user may open some readers (a lock's group, or one reader), optionally on weekly
/// schedules. Grants are what the administrator manages; keys (access documents) are derived
/// from them per credential.
public struct GrantRecord: Codable, Equatable, Sendable {
    public enum State: String, Codable, Sendable { case active, revoked }
    public var id: String
    public var user: String
    /// Reader rules, `GROUP` or `GROUP:SUB` in hex (as `doc issue --reader`).
    public var readers: [String]
    /// Weekly windows, as `doc issue --schedule` ("mon-fri 08:00-18:00").
    public var schedules: [String]
    public var state: State
    /// Why it was revoked (the administrator's words), kept for the audit.
    public var reason: String?
    /// Bumped on every modification: a changed grant re-issues its keys.
    public var revision: Int
    public var updatedAt: Date

    public init(id: String, user: String, readers: [String], schedules: [String] = [], state: State = .active,
                reason: String? = nil, revision: Int = 1, updatedAt: Date) {
        self.id = id; self.user = user; self.readers = readers; self.schedules = schedules; self.state = state
        self.reason = reason; self.revision = revision; self.updatedAt = updatedAt
    }
}

/// The states of a credential (Schlage guide: a credential can be suspended and resumed,
/// deactivated — final — or deleted from the device).
public enum CredentialState: String, Codable, Sendable, CaseIterable {
    case active, suspended, deactivated, deleted

    /// Whether the credential may hold keys.
    public var holdsKeys: Bool { self == .active }
}

/// A device (a phone) of a user, with the credential it carries: its long-term P-256 key.
public struct DeviceRecord: Codable, Equatable, Sendable {
    public var id: String
    public var user: String
    /// The credential's 65-byte public key.
    public var credentialKey: [UInt8]
    public var credentialState: CredentialState
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: String, user: String, credentialKey: [UInt8], credentialState: CredentialState = .active,
                createdAt: Date, updatedAt: Date) {
        self.id = id; self.user = user; self.credentialKey = credentialKey; self.credentialState = credentialState
        self.createdAt = createdAt; self.updatedAt = updatedAt
    }
}

/// A key: the access document issued for one grant on one device's credential. Re-issued (with
/// the next `validityIteration`) when its `expectedUpdate` has passed at a poll, or when the grant
/// changes; a tombstone (`document == nil`) tells polling phones to delete it.
public struct KeyRecord: Codable, Equatable, Sendable {
    public var id: String            // "<grant>/<device>"
    public var grant: String
    public var device: String
    public var document: [UInt8]?    // nil: deleted
    public var documentID: [UInt8]
    public var iteration: Int
    public var grantRevision: Int
    public var validUntil: Date
    public var expectedUpdate: Date
    /// The change sequence this version was written at (the poll cursor).
    public var sequence: Int64

    public init(id: String, grant: String, device: String, document: [UInt8]?, documentID: [UInt8], iteration: Int,
                grantRevision: Int, validUntil: Date, expectedUpdate: Date, sequence: Int64) {
        self.id = id; self.grant = grant; self.device = device; self.document = document; self.documentID = documentID
        self.iteration = iteration; self.grantRevision = grantRevision; self.validUntil = validUntil
        self.expectedUpdate = expectedUpdate; self.sequence = sequence
    }

    public static func id(grant: String, device: String) -> String { grant + "/" + device }
}

/// One entry of the issuer's revocation list, as the store keeps it until it lapses.
public struct RevocationRecord: Codable, Equatable, Sendable {
    public var publicKeyHash: [UInt8]?
    public var documentID: [UInt8]?
    public var expiry: Date
    /// What caused it: `grant:<id>` or `credential:<device>` (so a resume can lift it).
    public var cause: String

    public init(publicKeyHash: [UInt8]? = nil, documentID: [UInt8]? = nil, expiry: Date, cause: String) {
        self.publicKeyHash = publicKeyHash; self.documentID = documentID; self.expiry = expiry; self.cause = cause
    }
}

/// The latest revocation document (a complete list) the issuer published.
public struct RevocationListRecord: Codable, Equatable, Sendable {
    public var serial: UInt64
    public var document: [UInt8]
    public var sequence: Int64
    public init(serial: UInt64, document: [UInt8], sequence: Int64) {
        self.serial = serial; self.document = document; self.sequence = sequence
    }
}

/// A refresh token, stored as the SHA-256 of its value. Tokens of one login form a family; each
/// use rotates (the used token gets a successor); at most one token of a family is ever active.
public struct RefreshTokenRecord: Codable, Equatable, Sendable {
    public enum State: String, Codable, Sendable {
        /// May be used once.
        case active
        /// Used: it has a successor (`successor`).
        case used
        /// Replaced by a retry inside the grace window before it was ever used.
        case superseded
    }
    public var hash: [UInt8]
    public var family: String
    public var device: String
    public var state: State
    public var issuedAt: Date
    public var usedAt: Date?
    public var successor: [UInt8]?

    public init(hash: [UInt8], family: String, device: String, state: State = .active, issuedAt: Date,
                usedAt: Date? = nil, successor: [UInt8]? = nil) {
        self.hash = hash; self.family = family; self.device = device; self.state = state; self.issuedAt = issuedAt
        self.usedAt = usedAt; self.successor = successor
    }
}

/// A login's token family: all its refresh tokens die together (reuse detection, RFC 9700 §4.14.2)
/// and none outlives `createdAt` + the absolute lifetime.
public struct TokenFamilyRecord: Codable, Equatable, Sendable {
    public var id: String
    public var device: String
    public var createdAt: Date
    public var revokedAt: Date?
    public var revokedReason: String?
    public init(id: String, device: String, createdAt: Date, revokedAt: Date? = nil, revokedReason: String? = nil) {
        self.id = id; self.device = device; self.createdAt = createdAt; self.revokedAt = revokedAt; self.revokedReason = revokedReason
    }
}

/// A one-time enrollment code (the OAuth authorization code of a device's first login).
public struct EnrollmentRecord: Codable, Equatable, Sendable {
    public var hash: [UInt8]
    public var device: String
    public var expiresAt: Date
    public var usedAt: Date?
    public init(hash: [UInt8], device: String, expiresAt: Date, usedAt: Date? = nil) {
        self.hash = hash; self.device = device; self.expiresAt = expiresAt; self.usedAt = usedAt
    }
}
