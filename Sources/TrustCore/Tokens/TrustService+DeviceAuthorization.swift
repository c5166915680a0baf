import Codecs
import Crypto
import Foundation
import TrustModel

/// Re-authorization without an administrator (issue 22 §2.4): the device authorization grant
/// (RFC 8628). A registered phone whose login ended asks for a code pair; the user approves the
/// short user code — from the command line (`trust device approve-code`) or from another enrolled
/// phone of theirs — and the phone, polling the token endpoint with the device code, gets a new
/// login. Kept as settings rows (both backends have them): one record per device code, an index by
/// user code, and the device's current request (a new request replaces it, so rows stay bounded by
/// the number of devices).
extension TrustService {
    /// RFC 8628 §3.2: "expires_in … lifetime in seconds of the device_code and user_code".
    public static let deviceCodeLifetime: TimeInterval = 600
    /// The minimum seconds between polls (RFC 8628 §3.2 default 5); polling faster is `slow_down`.
    public static let deviceCodeInterval = 5
    /// RFC 8628 §6.1: base-20 letters without vowels, 8 of them (20^8 ≈ 2^34.6).
    public static let userCodeAlphabet = Array("BCDFGHJKLMNPQRSTVWXZ")

    struct DeviceAuthorizationRecord: Codable {
        var device: String
        var userCodeKey: String
        var expires: Double
        var status: String            // pending, approved, denied
        var lastPoll: Double?
        var answeredBy: String?
    }

    static let recordPrefix = "device-authorization."
    static let userCodePrefix = "device-authorization-code."
    static let currentPrefix = "device-authorization-of."

    static func hex(_ s: String) -> String { SHA256.hash(data: Array(s.utf8)).map { String(format: "%02x", $0) }.joined() }

    /// The user code as typed: letters of the alphabet, any case, dashes and blanks ignored; nil
    /// when it cannot be one.
    public static func normalizedUserCode(_ text: String) -> String? {
        guard text.utf8.count <= 32 else { return nil }
        let letters = text.uppercased().filter { $0 != "-" && $0 != " " }
        guard letters.count == 8, letters.allSatisfy(userCodeAlphabet.contains) else { return nil }
        return String(letters)
    }

    /// RFC 8628 §3.1–3.2: a device code and a user code for `device` (the client_id). The device
    /// must be registered with a credential that may log in; its earlier request is replaced.
    public func requestDeviceAuthorization(device: String, verificationURI: String) async throws -> DeviceAuthorizationResponse {
        guard !device.isEmpty, device.utf8.count <= 128 else { throw TrustError(.invalidClient, "client_id (the device id) is missing or longer than 128 bytes") }
        let now = now()
        let deviceCode = Base64URL.random(32)
        let userCode = String((0..<8).map { _ in Self.userCodeAlphabet[Int(Self.uniform(UInt64(Self.userCodeAlphabet.count)))] })
        try await storage.write { tx in
            guard let d = try await tx.device(device) else { throw TrustError(.invalidClient, "no device \(device.prefix(128)) is registered") }
            try Self.checkDevice(d, device, login: true)
            if let old = try await tx.setting(Self.currentPrefix + device) {
                if let text = try await tx.setting(Self.recordPrefix + old),
                   let r = try? JSONDecoder().decode(DeviceAuthorizationRecord.self, from: Data(text.utf8)) {
                    try await tx.deleteSetting(Self.userCodePrefix + r.userCodeKey)
                }
                try await tx.deleteSetting(Self.recordPrefix + old)
            }
            let key = Self.hex(deviceCode), codeKey = Self.hex(userCode)
            if try await tx.setting(Self.userCodePrefix + codeKey) != nil {
                throw TrustError(.conflict, "the user code drawn is in use; ask again")
            }
            let record = DeviceAuthorizationRecord(device: device, userCodeKey: codeKey, expires: now.addingTimeInterval(Self.deviceCodeLifetime).timeIntervalSince1970,
                                                   status: "pending")
            try await tx.setSetting(Self.recordPrefix + key, String(decoding: try JSONEncoder().encode(record), as: UTF8.self))
            try await tx.setSetting(Self.userCodePrefix + codeKey, key)
            try await tx.setSetting(Self.currentPrefix + device, key)
        }
        return DeviceAuthorizationResponse(device_code: deviceCode, user_code: String(userCode.prefix(4)) + "-" + String(userCode.suffix(4)),
                                           verification_uri: verificationURI, expires_in: Int(Self.deviceCodeLifetime), interval: Self.deviceCodeInterval)
    }

    /// The user's answer to a user code: approved or denied, by the administrator (`approver` nil:
    /// the command line) or by `approver`, another device of the same user with an active
    /// credential. Answers the device the code was for. A code of another user's device is
    /// `not_found` (no oracle for codes).
    @discardableResult
    public func answerDeviceAuthorization(userCode: String, approve: Bool, approver: String? = nil) async throws -> String {
        guard let code = Self.normalizedUserCode(userCode) else {
            throw TrustError(.invalidRequest, "a user code is 8 letters of \(String(Self.userCodeAlphabet)), like BCDF-GHJK")
        }
        let now = now().timeIntervalSince1970
        return try await storage.write { tx in
            let missing = TrustError(.notFound, "no pending device authorization has the code \(code.prefix(4))-\(code.suffix(4))")
            guard let key = try await tx.setting(Self.userCodePrefix + Self.hex(code)), let text = try await tx.setting(Self.recordPrefix + key),
                  var r = try? JSONDecoder().decode(DeviceAuthorizationRecord.self, from: Data(text.utf8)), now < r.expires else { throw missing }
            if let approver {
                guard let a = try await tx.device(approver), let target = try await tx.device(r.device), a.user == target.user else { throw missing }
                guard approver != r.device else { throw TrustError(.forbidden, "a device cannot authorize itself; use another phone of \(a.user) or the administrator") }
                guard a.credentialState == .active else { throw TrustError(.forbidden, "device \(approver)'s credential is \(a.credentialState.rawValue)") }
            }
            guard r.status == "pending" else { throw TrustError(.alreadyAnswered, "the code was already \(r.status)") }
            r.status = approve ? "approved" : "denied"
            r.answeredBy = approver ?? "administrator"
            try await tx.setSetting(Self.recordPrefix + key, String(decoding: try JSONEncoder().encode(r), as: UTF8.self))
            return r.device
        }
    }

    enum DeviceCodePoll: Sendable { case pending, slowDown, denied, expired, unknown, approved(device: String, family: String, refresh: String) }

    /// RFC 8628 §3.4–3.5: the phone's poll with its device code. Pending, too fast, denied and
    /// expired are the RFC's errors; approved is a new login (a new token family), once.
    public func exchange(deviceCode: String) async throws -> TokenResponse {
        guard !deviceCode.isEmpty, deviceCode.utf8.count <= 512 else { throw TrustError(.invalidGrant, "unknown device_code") }
        let now = now()
        let key = Self.hex(deviceCode)
        let outcome: DeviceCodePoll = try await storage.write { tx in
            guard let text = try await tx.setting(Self.recordPrefix + key),
                  var r = try? JSONDecoder().decode(DeviceAuthorizationRecord.self, from: Data(text.utf8)) else { return .unknown }
            func forget() async throws {
                try await tx.deleteSetting(Self.recordPrefix + key)
                try await tx.deleteSetting(Self.userCodePrefix + r.userCodeKey)
                if try await tx.setting(Self.currentPrefix + r.device) == key { try await tx.deleteSetting(Self.currentPrefix + r.device) }
            }
            if now.timeIntervalSince1970 >= r.expires { try await forget(); return .expired }
            switch r.status {
            case "denied": try await forget(); return .denied
            case "approved":
                try await forget()
                try await self.checkDevice(r.device, login: true, tx: tx)
                let family = Base64URL.random(12), refresh = Base64URL.random(32)
                try await tx.putFamily(TokenFamilyRecord(id: family, device: r.device, createdAt: now))
                try await tx.putRefreshToken(RefreshTokenRecord(hash: TokenAuthority.hash(refresh), family: family, device: r.device, issuedAt: now))
                return .approved(device: r.device, family: family, refresh: refresh)
            default:
                let tooSoon = r.lastPoll.map { now.timeIntervalSince1970 - $0 < Double(Self.deviceCodeInterval) } ?? false
                r.lastPoll = now.timeIntervalSince1970
                try await tx.setSetting(Self.recordPrefix + key, String(decoding: try JSONEncoder().encode(r), as: UTF8.self))
                return tooSoon ? .slowDown : .pending
            }
        }
        switch outcome {
        case .unknown: throw TrustError(.invalidGrant, "unknown device_code")
        case .expired: throw TrustError(.expiredToken, "the device code expired; ask for a new one (RFC 8628 §3.5)")
        case .denied: throw TrustError(.accessDenied, "the user denied the authorization")
        case .pending: throw TrustError(.authorizationPending, "the user has not approved the code yet")
        case .slowDown: throw TrustError(.slowDown, "poll at most every \(Self.deviceCodeInterval) s; add 5 s to the interval (RFC 8628 §3.5)")
        case .approved(let device, let family, let refresh):
            return try await response(device: device, family: family, refresh: refresh, familyCreated: now, now: now)
        }
    }
}
