import Foundation

/// Why a phone polls (Tapkey "Manual polling": after login, after a grant is issued, after a grant
/// affecting the user is modified or revoked, after grants on locks the user can open are revoked;
/// plus the background schedule).
public enum PollTrigger: String, Codable, Sendable, CaseIterable {
    case schedule, login, manual
    case grantIssued = "grant-issued"
    case grantModified = "grant-modified"
    case grantRevoked = "grant-revoked"
    case lockGrantsRevoked = "lock-grants-revoked"
    case credentialChanged = "credential-changed"
}

/// What an administrative change means for phones: who should poll, and why.
public struct TrustChange: Sendable, Equatable {
    public var affected: [Affected]
    public struct Affected: Sendable, Equatable {
        public var device: String
        public var trigger: PollTrigger

        public init(device: String, trigger: PollTrigger) {
            self.device = device
            self.trigger = trigger
        }
    }
    /// The revocation serial published by this change, if any.
    public var revocationSerial: UInt64?

    public init(affected: [Affected], revocationSerial: UInt64? = nil) {
        self.affected = affected
        self.revocationSerial = revocationSerial
    }
}

/// The answer to a poll (`GET /v1/keys?since=`): the keys written since the cursor (new,
/// re-issued, and deleted ones) and the latest revocation list if it changed. `nil` from
/// `poll` means nothing changed (HTTP 204).
public struct PollResult: Codable, Sendable, Equatable {
    public struct Key: Codable, Sendable, Equatable {
        public var id: String
        public var grant: String
        /// The access document (CBOR), base64.
        public var document: String
        public var iteration: Int
        public var validUntil: String
        public var expectedUpdate: String

        public init(id: String, grant: String, document: String, iteration: Int, validUntil: String, expectedUpdate: String) {
            self.id = id
            self.grant = grant
            self.document = document
            self.iteration = iteration
            self.validUntil = validUntil
            self.expectedUpdate = expectedUpdate
        }
    }
    public struct Revocation: Codable, Sendable, Equatable {
        public var serial: UInt64
        public var document: String

        public init(serial: UInt64, document: String) {
            self.serial = serial
            self.document = document
        }
    }
    public var cursor: String
    public var keys: [Key]
    public var deleted: [String]
    public var revocation: Revocation?

    public init(cursor: String, keys: [Key], deleted: [String], revocation: Revocation? = nil) {
        self.cursor = cursor
        self.keys = keys
        self.deleted = deleted
        self.revocation = revocation
    }
}
