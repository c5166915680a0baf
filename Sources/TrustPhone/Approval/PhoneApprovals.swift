import Codecs
import Foundation
import TrustModel

/// The phone's push-approval state: the approver's inbox (ForgeRock `PushNotification`s), the
/// requester's own requests and the unlock commands they yielded, and the simulated biometrics.
///
/// Notifications enter through one seam, `receive(_:)`: today the phone's explicit fetch of its
/// inbox (`VirtualPhone.fetchApprovals`, on `poll` and on demand); a push relay hands its payload
/// to the same entry point — push is a hint, the fetch is the truth.
public final class PhoneApprovals: @unchecked Sendable {
    /// What the simulated user's finger does at `LAContext.evaluatePolicy` (ForgeRock's biometric accept).
    public enum Biometrics: String, Sendable, CaseIterable {
        case match
        /// The finger or face is not recognised.
        case noMatch = "no-match"
        /// No biometrics enrolled on the device.
        case none
    }

    private let lock = NSLock()
    private var _inbox: [String: ApprovalView] = [:]
    private var _requests: [String: ApprovalView] = [:]
    private var _unlocks: [String: (document: [UInt8], validUntil: Date)] = [:]
    private var _biometrics: Biometrics = .match
    private var _passcodeSet = true
    private var _wallet = WalletState()
    private var _lastAnswer: ApprovalOutcome?
    private var _lastRequestID: String?

    /// Held at most this many of each (the service bounds pending requests per approver too).
    static let limit = 64
    /// An unlock command is still presented this long past its expiry, so the lock — not the
    /// phone — is seen to refuse it; then it is forgotten.
    static let unlockRetention: TimeInterval = 3600

    public init() {}

    private func locked<T>(_ body: () -> T) -> T { lock.lock(); defer { lock.unlock() }; return body() }

    /// The pending notifications, oldest first.
    public var inbox: [ApprovalView] { locked { _inbox.values.sorted { ($0.timeAdded, $0.id) < ($1.timeAdded, $1.id) } } }
    public var requests: [ApprovalView] { locked { _requests.values.sorted { ($0.timeAdded, $0.id) < ($1.timeAdded, $1.id) } } }
    public var biometrics: Biometrics {
        get { locked { _biometrics } }
        set { locked { _biometrics = newValue } }
    }
    /// Whether the device has a passcode (the device credentials ForgeRock may allow instead of biometrics).
    public var passcodeSet: Bool {
        get { locked { _passcodeSet } }
        set { locked { _passcodeSet = newValue } }
    }
    /// The Wallet as the Schlage guide's decision tree reads it.
    public var wallet: WalletState {
        get { locked { _wallet } }
        set { locked { _wallet = newValue } }
    }

    /// What came of the user's last `approve` or `deny`.
    public internal(set) var lastAnswer: ApprovalOutcome? {
        get { locked { _lastAnswer } }
        set { locked { _lastAnswer = newValue } }
    }

    /// The id of this phone's latest request.
    public internal(set) var lastRequestID: String? {
        get { locked { _lastRequestID } }
        set { locked { _lastRequestID = newValue } }
    }

    /// The seam every delivery channel uses. A pending notification joins the inbox; one that is
    /// no longer pending leaves it. Returns whether it was new.
    @discardableResult
    public func receive(_ view: ApprovalView) -> Bool {
        locked {
            guard view.status == .pending else { _inbox[view.id] = nil; return false }
            let new = _inbox[view.id] == nil
            if new && _inbox.count >= Self.limit { return false }
            _inbox[view.id] = view
            return new
        }
    }

    /// Replaces the inbox with the service's list (what is not listed is no longer pending).
    func replaceInbox(_ views: [ApprovalView]) -> [ApprovalView] {
        locked {
            let before = Set(_inbox.keys)
            _inbox = Dictionary(views.filter { $0.status == .pending }.prefix(Self.limit).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            return _inbox.values.filter { !before.contains($0.id) }
        }
    }

    func answered(_ id: String) { locked { _inbox[id] = nil } }

    func track(_ view: ApprovalView, now: Date) -> Bool {
        locked {
            if _requests[view.id] == nil && _requests.count >= Self.limit {
                // Forget the oldest answered request.
                if let old = _requests.values.filter({ $0.status != .pending }).min(by: { $0.timeAdded < $1.timeAdded }) { _requests[old.id] = nil }
            }
            _requests[view.id] = view
            guard view.status == .approved, _unlocks[view.id] == nil, let b64 = view.unlockDocument, let doc = Data(base64Encoded: b64),
                  let until = view.unlockValidUntil.flatMap(RFC3339.parse) else { return false }
            _unlocks[view.id] = (Array(doc), until)
            return true
        }
    }

    /// The unlock commands to present to a lock, newest first (expired ones too, for an hour).
    public func unlockDocuments(now: Date) -> [[UInt8]] {
        locked {
            _unlocks = _unlocks.filter { now < $0.value.validUntil.addingTimeInterval(Self.unlockRetention) }
            return _unlocks.values.sorted { $0.validUntil > $1.validUntil }.map(\.document)
        }
    }

    public var unlockCount: Int { locked { _unlocks.count } }
}
