import Foundation

/// AUTH0's policy byte (tag `42`), as the reference device names it (aliro-actuator `apdu.py`
/// `AuthenticationPolicy`). RD-BLE-AUTH0-1.0 expects `01`, RD-BLE-AUTH0-2.0 `03`.
/// In a lock configuration: `"policy": 3` or `"policy": "force-user-authentication"`.
public enum AuthenticationPolicy: UInt8, Sendable, CaseIterable, Codable {
    case userDevice = 0x01
    case userDeviceSecureAction = 0x02
    case forceUserAuthentication = 0x03

    /// The configuration's words for each value.
    public var name: String {
        switch self {
        case .userDevice: return "user-device"
        case .userDeviceSecureAction: return "secure-action"
        case .forceUserAuthentication: return "force-user-authentication"
        }
    }

    /// A number 1…3 or a name; anything else is refused naming the value and what is accepted.
    public init(parsing text: String) throws(AuthenticationPolicyError) {
        if let n = UInt8(text), let p = AuthenticationPolicy(rawValue: n) { self = p; return }
        if let p = Self.allCases.first(where: { $0.name == text }) { self = p; return }
        throw AuthenticationPolicyError(value: text)
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        let text: String
        if let n = try? c.decode(Int.self) { text = String(n) } else { text = try c.decode(String.self) }
        do { self = try AuthenticationPolicy(parsing: text) } catch {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: error.description)
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(name)
    }
}

public struct AuthenticationPolicyError: Error, CustomStringConvertible, Sendable {
    public var value: String
    public var description: String {
        "policy \(value) is not an AUTH0 authentication policy: give 1 (user-device), 2 (secure-action) or 3 (force-user-authentication)"
    }
}
