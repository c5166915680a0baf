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
