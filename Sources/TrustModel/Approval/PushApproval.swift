import Codecs
import Foundation

// Remote unlock by push approval, after ForgeRock's push authentication ("Receive push
// notifications", ForgeRock SDKs for iOS): a requester asks to open a lock, the approver's phone
// receives a notification with a message, context info and a custom payload, and the user accepts
// or denies it — by a tap (`PushType.default`), by picking the number shown on the requester's
// side among three (`PushType.challenge`), or with biometrics (`PushType.biometric`). An approved
// request gives the requester a signed unlock command for that one lock, valid for a minute.

/// ForgeRock `PushType`: "the type of push notification to present to the user".
public enum PushType: String, Codable, Sendable, CaseIterable {
    /// "Requires the user to tap to accept."
    case `default`
    /// "Requires the user to select one of three numbers displayed on their device. This selected
    /// number must match the code displayed in the browser for the request to be verified."
    case challenge
    /// "Requires the user's biometric authentication to process the notification."
    case biometric
}

/// Where a request stands. `expired` once its time-to-live passed unanswered.
public enum ApprovalStatus: String, Codable, Sendable {
    case pending, approved, denied, expired
}

/// How the approver proved presence when accepting (ForgeRock's three `accept` methods).
public enum ApprovalAuthentication: String, Codable, Sendable {
    /// `accept(onSuccess:onError:)`: a tap.
    case tap
    /// `accept(title:allowDeviceCredentials:…)` answered by a biometric match.
    case biometric
    /// … answered by the device passcode, only when `allowDeviceCredentials` is true.
    case deviceCredentials
}

/// ForgeRock `contextInfo`: "location, userAgent, remoteIp … Ensure you check these attributes
/// for null values". Every field is optional; unknown fields are skipped.
public struct ContextInfo: Codable, Sendable, Equatable {
    public struct Location: Codable, Sendable, Equatable {
        public var latitude: Double
        public var longitude: Double
        public init(latitude: Double, longitude: Double) { self.latitude = latitude; self.longitude = longitude }
    }
    public var location: Location?
    public var userAgent: String?
    public var remoteIp: String?
    public init(location: Location? = nil, userAgent: String? = nil, remoteIp: String? = nil) {
        self.location = location; self.userAgent = userAgent; self.remoteIp = remoteIp
    }

    /// Parses ForgeRock's JSON string; nulls and absent fields are nil. Refuses what is not an
    /// object, a location out of range, or oversized text.
    public init(parsing text: String) throws(TrustError) {
        guard text.utf8.count <= ApprovalRules.maxContextInfo else {
            throw TrustError(.invalidRequest, "contextInfo is longer than \(ApprovalRules.maxContextInfo) bytes")
        }
        do { self = try JSONDecoder().decode(ContextInfo.self, from: Data(text.utf8)) } catch {
            throw TrustError(.invalidRequest, "contextInfo is not a JSON object of location {latitude, longitude}, userAgent, remoteIp (each may be null)")
        }
        if let l = location, !((-90...90).contains(l.latitude) && (-180...180).contains(l.longitude)) {
            throw TrustError(.invalidRequest, "contextInfo.location is outside latitude −90…90, longitude −180…180")
        }
    }
}

/// The limits and defaults of push approval, in one place.
public enum ApprovalRules {
    /// Time-to-live of a request unless the requester asks for another (ForgeRock's Push Sender
    /// node times out after 120 s by default).
    public static let defaultTTL: TimeInterval = 120
    public static let ttlRange: ClosedRange<TimeInterval> = 1...600
    /// How long the unlock command of an approved request is valid (the lock adds its clock leeway).
    public static let unlockLifetime: TimeInterval = 60
    public static let maxMessage = 256
    public static let maxContextInfo = 1024
    public static let maxCustomPayload = 1024
    /// Pending requests one approver may have at once (a requester cannot flood a phone).
    public static let maxPendingPerApprover = 16
    /// Of those, at most this many from one requesting device (approval spam from one enrolled
    /// device leaves room for everyone else's).
    public static let maxPendingPerRequester = 2
    /// How long an answered or expired request is kept after it was settled (answered, or its TTL
    /// ran out): long enough for the requester to fetch the outcome and for someone to look at it
    /// the next day, after which it is deleted (`TrustService.purgeApprovals`).
    public static let retention: TimeInterval = 24 * 3600
    /// Settled requests deleted by one write at the most (the rest by the next): bounded work.
    public static let purgeBatch = 256
    /// The challenge numbers are two-digit, as ForgeRock displays them.
    public static let challengeRange: ClosedRange<Int> = 10...99
}

/// A request for approval, as stored. The challenge answer and the unlock command never reach
/// the approver; the challenge numbers never reach the requester (only the one to show).
public struct ApprovalRecord: Codable, Sendable, Equatable {
    public var id: String
    /// The device that asked (and will carry the unlock command to the lock).
    public var requester: String
    /// The user whose phones are asked.
    public var approver: String
    /// The reader rule to open, `GROUP` or `GROUP:SUB` (hex), as a grant names readers.
    public var lock: String
    public var pushType: PushType
    public var message: String
    /// JSON string (ForgeRock `contextInfo`), nil when the requester shares none.
    public var contextInfo: String?
    /// JSON string (ForgeRock `customPayload`).
    public var customPayload: String?
    /// For `challenge`: the three numbers shown on the approver's phone (`numbersChallengeArray`)…
    public var numbersChallenge: [Int]?
    /// … and the one shown on the requester's side.
    public var challenge: Int?
    /// For `biometric`: whether the device passcode may stand in for biometrics.
    public var allowDeviceCredentials: Bool
    /// ForgeRock `timeAdded`.
    public var timeAdded: Date
    public var ttl: TimeInterval
    public var status: ApprovalStatus
    public var answeredAt: Date?
    /// The approver's device that answered, and how.
    public var answeredBy: String?
    public var authentication: ApprovalAuthentication?
    /// Why a request was denied: `denied` (the user said no) or `wrong_challenge`.
    public var denyReason: String?
    /// The signed unlock command (an access document for the requester's credential, this lock
    /// only, valid `ApprovalRules.unlockLifetime`), once approved.
    public var unlockDocument: [UInt8]?
    public var unlockValidUntil: Date?

    public var expiresAt: Date { timeAdded.addingTimeInterval(ttl) }

    /// When it stopped (or will stop) being pending: its answer, or its expiry.
    public var settledAt: Date { answeredAt ?? expiresAt }

    /// The status as of `now`: a pending request past its TTL is expired.
    public func status(at now: Date) -> ApprovalStatus {
        status == .pending && now >= expiresAt ? .expired : status
    }

    public init(id: String, requester: String, approver: String, lock: String, pushType: PushType, message: String, contextInfo: String? = nil, customPayload: String? = nil, numbersChallenge: [Int]? = nil, challenge: Int? = nil, allowDeviceCredentials: Bool, timeAdded: Date, ttl: TimeInterval, status: ApprovalStatus, answeredAt: Date? = nil, answeredBy: String? = nil, authentication: ApprovalAuthentication? = nil, denyReason: String? = nil, unlockDocument: [UInt8]? = nil, unlockValidUntil: Date? = nil) {
        self.id = id
        self.requester = requester
        self.approver = approver
        self.lock = lock
        self.pushType = pushType
        self.message = message
        self.contextInfo = contextInfo
        self.customPayload = customPayload
        self.numbersChallenge = numbersChallenge
        self.challenge = challenge
        self.allowDeviceCredentials = allowDeviceCredentials
        self.timeAdded = timeAdded
        self.ttl = ttl
        self.status = status
        self.answeredAt = answeredAt
        self.answeredBy = answeredBy
        self.authentication = authentication
        self.denyReason = denyReason
        self.unlockDocument = unlockDocument
        self.unlockValidUntil = unlockValidUntil
    }
}

/// What a requester sends (`POST /v1/approvals`).
public struct ApprovalRequest: Codable, Sendable, Equatable {
    public var approver: String
    public var lock: String
    public var pushType: PushType?
    public var message: String?
    public var contextInfo: String?
    public var customPayload: String?
    public var ttl: Int?
    public var allowDeviceCredentials: Bool?
    public init(approver: String, lock: String, pushType: PushType? = nil, message: String? = nil, contextInfo: String? = nil,
                customPayload: String? = nil, ttl: Int? = nil, allowDeviceCredentials: Bool? = nil) {
        self.approver = approver; self.lock = lock; self.pushType = pushType; self.message = message; self.contextInfo = contextInfo
        self.customPayload = customPayload; self.ttl = ttl; self.allowDeviceCredentials = allowDeviceCredentials
    }
}

/// An approver's answer (`POST /v1/approvals/{id}/accept|deny`).
public enum ApprovalAnswer: Sendable, Equatable {
    case accept(challengeResponse: Int?, authentication: ApprovalAuthentication)
    case deny
}

/// A request as one party sees it over HTTP. The approver gets the notification (message,
/// context, custom payload, the three numbers); the requester gets the number to show and, once
/// approved, the unlock command.
public struct ApprovalView: Codable, Sendable, Equatable {
    public var id: String
    public var status: ApprovalStatus
    public var pushType: PushType
    public var lock: String
    public var requester: String
    public var timeAdded: String
    public var expiresAt: String
    public var ttl: Int
    // Approver's side.
    public var message: String?
    public var contextInfo: String?
    public var customPayload: String?
    public var numbersChallenge: [Int]?
    public var allowDeviceCredentials: Bool?
    // Requester's side.
    public var challenge: Int?
    public var unlockDocument: String?
    public var unlockValidUntil: String?
    public var denyReason: String?

    public enum Role: Sendable { case approver, requester }

    public init(_ r: ApprovalRecord, as role: Role, now: Date) {
        id = r.id; status = r.status(at: now); pushType = r.pushType; lock = r.lock; requester = r.requester
        timeAdded = RFC3339.format(r.timeAdded); expiresAt = RFC3339.format(r.expiresAt); ttl = Int(r.ttl)
        denyReason = r.denyReason
        switch role {
        case .approver:
            message = r.message; contextInfo = r.contextInfo; customPayload = r.customPayload
            numbersChallenge = r.numbersChallenge
            allowDeviceCredentials = r.pushType == .biometric ? r.allowDeviceCredentials : nil
        case .requester:
            challenge = r.challenge
            unlockDocument = r.unlockDocument.map { Data($0).base64EncodedString() }
            unlockValidUntil = r.unlockValidUntil.map(RFC3339.format)
        }
    }
}

/// `GET /v1/approvals`: the approver's pending requests.
public struct ApprovalInbox: Codable, Sendable, Equatable {
    public var approvals: [ApprovalView]
    public init(approvals: [ApprovalView]) { self.approvals = approvals }
}
