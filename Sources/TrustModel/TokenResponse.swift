import Foundation

/// The token endpoint's success answer (RFC 6749 §5.1).
public struct TokenResponse: Codable, Sendable, Equatable {
    public var access_token: String
    public var token_type: String
    public var expires_in: Int
    public var refresh_token: String
    /// Seconds until the login (token family) ends and the user must authorize again.
    public var refresh_token_expires_in: Int

    public init(access_token: String, token_type: String, expires_in: Int, refresh_token: String, refresh_token_expires_in: Int) {
        self.access_token = access_token
        self.token_type = token_type
        self.expires_in = expires_in
        self.refresh_token = refresh_token
        self.refresh_token_expires_in = refresh_token_expires_in
    }
}

/// The device authorization endpoint's answer (RFC 8628 §3.2): the phone shows `user_code`, the
/// user approves it (`trust device approve-code`, or an enrolled phone of theirs), and the phone
/// polls the token endpoint with `device_code` every `interval` seconds until `expires_in`.
public struct DeviceAuthorizationResponse: Codable, Sendable, Equatable {
    public var device_code: String
    public var user_code: String
    public var verification_uri: String
    public var expires_in: Int
    public var interval: Int

    public init(device_code: String, user_code: String, verification_uri: String, expires_in: Int, interval: Int) {
        self.device_code = device_code; self.user_code = user_code; self.verification_uri = verification_uri
        self.expires_in = expires_in; self.interval = interval
    }

    /// The grant type the phone polls with (RFC 8628 §3.4).
    public static let grantType = "urn:ietf:params:oauth:grant-type:device_code"
}
