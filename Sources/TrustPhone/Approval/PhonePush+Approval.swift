import Foundation
import TrustModel

/// An approval push (`ApprovalPush`) is a hint: the phone fetches its inbox (it may be the
/// approver) and its open requests (it may be the requester, whose request was answered). A
/// dropped push leaves both to the next explicit fetch.
extension PhonePush {
    func receiveApproval(_ data: [String: String]) async -> Bool {
        phone.record(.push, nil, "approval \(data[ApprovalPush.identifier] ?? "")")
        guard phone.isLoggedIn else { return true }
        _ = await phone.fetchApprovals()
        await phone.fetchUnlocks()
        return true
    }
}
