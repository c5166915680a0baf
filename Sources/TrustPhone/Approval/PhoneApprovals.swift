import Codecs
import Foundation
import Synchronization
import TrustModel

/// The phone's push-approval state: the approver's inbox (ForgeRock `PushNotification`s), the
/// requester's own requests and the unlock commands they yielded, and the simulated biometrics.
///
/// Notifications enter through one seam, `receive(_:)`: today the phone's explicit fetch of its
/// inbox (`VirtualPhone.fetchApprovals`, on `poll` and on demand); a push relay hands its payload
/// to the same entry point — push is a hint, the fetch is the truth.
public final class PhoneApprovals: Sendable {
    private struct State {
        var _inbox: [String: ApprovalView] = [:]
        var _requests: [String: ApprovalView] = [:]
        var _unlocks: [String: (document: [UInt8], validUntil: Date)] = [:]
        var _biometrics: Biometrics = .match
        var _passcodeSet = true
        var _wallet = WalletState()
        var _lastAnswer: ApprovalOutcome?
        var _lastRequestID: String?
    }
    private let state = Mutex(State())

    /// What the simulated user's finger does at `LAContext.evaluatePolicy` (ForgeRock's biometric accept).
    public enum Biometrics: String, Sendable, CaseIterable {
        case match
        /// The finger or face is not recognised.
        case noMatch = "no-match"
        /// No biometrics enrolled on the device.
        case none
    }

    /// Held at most this many of each (the service bounds pending requests per approver too).
    static let limit = 64
    /// An unlock command is still presented this long past its expiry, so the lock — not the
    /// phone — is seen to refuse it; then it is forgotten.
    static let unlockRetention: TimeInterval = 3600

    public init() {}

    private func locked<T, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T { try state.withLock { (s: inout State) throws(E) -> T in try body(&s) } }

    /// The pending notifications, oldest first.
    public var inbox: [ApprovalView] { locked { s in s._inbox.values.sorted { ($0.timeAdded, $0.id) < ($1.timeAdded, $1.id) } } }
    public var requests: [ApprovalView] { locked { s in s._requests.values.sorted { ($0.timeAdded, $0.id) < ($1.timeAdded, $1.id) } } }
    public var biometrics: Biometrics {
        get { locked { s in s._biometrics } }
        set { locked { s in s._biometrics = newValue } }
    }
    /// Whether the device has a passcode (the device credentials ForgeRock may allow instead of biometrics).
    public var passcodeSet: Bool {
        get { locked { s in s._passcodeSet } }
        set { locked { s in s._passcodeSet = newValue } }
    }
    /// The Wallet as the Schlage guide's decision tree reads it.
    public var wallet: WalletState {
        get { locked { s in s._wallet } }
        set { locked { s in s._wallet = newValue } }
    }

    /// What came of the user's last `approve` or `deny`.
    public internal(set) var lastAnswer: ApprovalOutcome? {
        get { locked { s in s._lastAnswer } }
        set { locked { s in s._lastAnswer = newValue } }
    }

    /// The id of this phone's latest request.
    public internal(set) var lastRequestID: String? {
        get { locked { s in s._lastRequestID } }
        set { locked { s in s._lastRequestID = newValue } }
    }

    /// The seam every delivery channel uses. A pending notification joins the inbox; one that is
    /// no longer pending leaves it. Returns whether it was new.
    @discardableResult
    public func receive(_ view: ApprovalView) -> Bool {
        locked { s in
            guard view.status == .pending else { s._inbox[view.id] = nil; return false }
            let new = s._inbox[view.id] == nil
            if new && s._inbox.count >= Self.limit { return false }
            s._inbox[view.id] = view
            return new
        }
    }

    /// Replaces the inbox with the service's list (what is not listed is no longer pending).
    func replaceInbox(_ views: [ApprovalView]) -> [ApprovalView] {
        locked { s in
            let before = Set(s._inbox.keys)
            s._inbox = Dictionary(views.filter { $0.status == .pending }.prefix(Self.limit).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            return s._inbox.values.filter { !before.contains($0.id) }
        }
    }

    func answered(_ id: String) { locked { s in s._inbox[id] = nil } }

    func track(_ view: ApprovalView, now: Date) -> Bool {
        locked { s in
            if s._requests[view.id] == nil && s._requests.count >= Self.limit {
                // Forget the oldest answered request.
                if let old = s._requests.values.filter({ $0.status != .pending }).min(by: { $0.timeAdded < $1.timeAdded }) { s._requests[old.id] = nil }
            }
            s._requests[view.id] = view
            guard view.status == .approved, s._unlocks[view.id] == nil, let b64 = view.unlockDocument, let doc = Data(base64Encoded: b64),
                  let until = view.unlockValidUntil.flatMap(RFC3339.parse) else { return false }
            s._unlocks[view.id] = (Array(doc), until)
            return true
        }
    }

    /// The unlock commands to present to a lock, newest first (expired ones too, for an hour).
    public func unlockDocuments(now: Date) -> [[UInt8]] {
        locked { s in
            s._unlocks = s._unlocks.filter { now < $0.value.validUntil.addingTimeInterval(Self.unlockRetention) }
            return s._unlocks.values.sorted { $0.validUntil > $1.validUntil }.map(\.document)
        }
    }

    public var unlockCount: Int { locked { s in s._unlocks.count } }
}
