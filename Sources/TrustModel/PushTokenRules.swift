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

/// Sends a background data push to every registered token of each device
/// (`TrustPushNotifier.push(_:to:)`): how `trust serve` wakes an approver's phones for a request
/// and the requester's for the answer.
public typealias DevicePush = @Sendable (_ data: [String: String], _ devices: [String]) async -> Void
