import Foundation

/// Hands a device's push token to whatever pushes for this service
/// (`TrustPushNotifier.registerDurably`); returns once it is kept, throws when it could not be.
public typealias PushTokenRegistration = @Sendable (_ device: String, _ token: String) async throws -> Void

/// A push token as the trust API accepts it: what APNs and FCM hand an app, printable ASCII.
public enum PushTokenRules {
    public static let maxBytes = 4096
    public static func isValid(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= maxBytes && token.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
