import Codecs
import Foundation

/// The data of an approval push (a background data message through the relay). Like every
/// LockBench push it is a hint: the phone answers it by fetching its inbox, and a dropped push
/// leaves the request to the next fetch. It names the request and what the lock screen would
/// show (ForgeRock's message and type); the challenge numbers and context stay behind the fetch.
/// Every value is a string (FCM data) and the whole stays far under the 4096-byte payload limit.
public enum ApprovalPush {
    /// The data key that marks an approval push (as `lockbench-trust` marks a key push).
    public static let identifier = "lockbench-approval"

    public static func data(_ r: ApprovalRecord) -> [String: String] {
        data(id: r.id, pushType: r.pushType, message: r.message, expiresAt: RFC3339.format(r.expiresAt), requester: r.requester)
    }

    public static func data(id: String, pushType: PushType, message: String?, expiresAt: String, requester: String) -> [String: String] {
        var d = [identifier: id, "pushType": pushType.rawValue, "expiresAt": expiresAt, "requester": requester]
        if let message { d["message"] = message }
        return d
    }
}
