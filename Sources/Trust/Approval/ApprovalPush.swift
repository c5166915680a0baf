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
        [identifier: r.id, "pushType": r.pushType.rawValue, "message": r.message,
         "expiresAt": RFC3339.format(r.expiresAt), "requester": r.requester]
    }
}
