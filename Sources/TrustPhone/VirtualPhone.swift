import AccessProtocol
import ByteCore
import Codecs
import Crypto
import Foundation
import Synchronization
import OfflineUnlock
import TrustModel

/// A virtual phone: its credential key, the keys (access documents) and revocation list it
/// caches, its OAuth tokens, and its polling — on a schedule (`pollEvery`, Tapkey's 8-hour
/// background fetch; 0 = never, an unconfigured background fetch) and on the triggers Tapkey lists.
/// It reads time from the clock every actor shares.
public final class VirtualPhone: Sendable {
    private struct State {
        var _keys: [String: HeldKey] = [:]
        var _revocation: (serial: UInt64, document: [UInt8])?
        var cursor: String?
        var tokens: Tokens?
        var _online = true
        var _lastPoll: Date?
        var scheduleBase: Date?
        var _events: [Event] = []
        var _lastError: String?
        var fastCache: FastCache?
        /// What the phone saw at doors, waiting to be uploaded (`uploadDoorReports`), newest kept.
        var _doorReports: [DoorReport] = []
    }
    private let state = Mutex(State())

    /// Door reports waiting at most (a phone offline for long keeps its newest taps).
    public static let maxPendingDoorReports = 32

    public struct Options: Sendable, Equatable {
        /// Background poll interval; 0 = never.
        public var pollEvery: TimeInterval = 8 * 3600
        /// On an expired login: raise "re-authorize" and log in again (digi.me
        /// `autoRecoverExpiredCredentials`, default true); false: fail with `token_expired`.
        public var autoRecover = true
        /// Poll when told that a grant changed (Tapkey "manual polling").
        public var pollOnTriggers = true
        public init() {}
    }

    /// A key the phone holds.
    public struct HeldKey: Codable, Sendable, Equatable {
        public var id: String
        public var grant: String
        public var document: [UInt8]
        public var iteration: Int
        public var validUntil: Date
        public var expectedUpdate: Date
    }

    /// Something the phone did, for `show`, scenarios and logs.
    public struct Event: Sendable, Equatable, CustomStringConvertible {
        public enum Kind: String, Sendable { case polled, unchanged, pollFailed = "poll-failed", loggedIn = "logged-in", refreshed
            case reauthorize, tokenExpired = "token-expired", offline, online, keyAdded = "key-added", keyDeleted = "key-deleted"
            case revocation
            // Push approval (ForgeRock): a request reached the approver, was answered, or the
            // requester received its unlock command.
            case approvalReceived = "approval-received", approved, denied, approvalFailed = "approval-failed"
            case unlockReceived = "unlock-received"
            // Push (PhonePush).
            case push, pushNotHandled = "push-not-handled", forceQuit = "force-quit", tokenRotated = "token-rotated"
            case wakeUp = "wake-up", wakeUpRead = "wake-up-read", wakeUpRevoked = "wake-up-revoked" }
        public var at: Date
        public var kind: Kind
        public var trigger: PollTrigger?
        public var detail: String
        public var description: String {
            "\(RFC3339.format(at)) \(kind.rawValue)" + (trigger.map { " (\($0.rawValue))" } ?? "") + (detail.isEmpty ? "" : ": \(detail)")
        }
    }

    public enum PollOutcome: Sendable, Equatable {
        case updated(keys: Int, deleted: Int, revocationSerial: UInt64?)
        case unchanged
        case failed(String)
    }

    struct Tokens: Sendable {
        var access: String
        var accessExpires: Date
        var refresh: String
    }

    public let id: String
    public let key: P256.Signing.PrivateKey
    /// How it polls and recovers; set by its owner, read on every poll.
    public var options: Options {
        get { configured.withLock { $0.options } }
        set { configured.withLock { $0.options = newValue } }
    }
    public let clock: any TrustClock
    let client: TrustClient
    /// Asked for a fresh login code when the login expired and `autoRecover` is on.
    public var reauthorize: (@Sendable (_ device: String) async -> String?)? {
        get { configured.withLock { $0.reauthorize } }
        set { configured.withLock { $0.reauthorize = newValue } }
    }
    private struct Configuration {
        var options: Options
        var reauthorize: (@Sendable (_ device: String) async -> String?)?
    }
    private let configured: Mutex<Configuration>
    /// The schedule counts from the last poll attempt (or the login).
    /// Push approval state: the approver's inbox, the requester's unlock commands, the simulated biometrics.
    public let approvals = PhoneApprovals()

    public init(id: String, key: P256.Signing.PrivateKey = .init(), client: TrustClient, clock: any TrustClock, options: Options = Options()) {
        self.id = id; self.key = key; self.client = client; self.clock = clock
        configured = Mutex(Configuration(options: options))
    }

    public var publicKey: [UInt8] { Primitives.point(of: key) }

    // MARK: state

    private func locked<T, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T { try state.withLock { (s: inout State) throws(E) -> T in try body(&s) } }

    public var keys: [HeldKey] { locked { s in s._keys.values.sorted { $0.id < $1.id } } }
    public var revocationSerial: UInt64? { locked { s in s._revocation?.serial } }
    public var revocationDocument: [UInt8]? { locked { s in s._revocation?.document } }
    public var isOnline: Bool { locked { s in s._online } }
    public var lastPoll: Date? { locked { s in s._lastPoll } }
    public var events: [Event] { locked { s in s._events } }
    public var lastError: String? { locked { s in s._lastError } }
    public var isLoggedIn: Bool { locked { s in s.tokens != nil } }

    func record(_ kind: Event.Kind, _ trigger: PollTrigger? = nil, _ detail: String = "") {
        let e = Event(at: clock.now(), kind: kind, trigger: trigger, detail: detail)
        locked { s in
            s._events.append(e)
            if s._events.count > 10_000 { s._events.removeFirst(s._events.count - 10_000) }
        }
    }

    public func setOnline(_ online: Bool) {
        locked { s in s._online = online }
        record(online ? .online : .offline)
    }

    /// When the background schedule polls next (nil: never).
    public var nextScheduledPoll: Date? {
        locked { s in
            guard options.pollEvery > 0, let base = s.scheduleBase else { return nil }
            return base.addingTimeInterval(options.pollEvery)
        }
    }

    // MARK: login and tokens

    /// Logs in with a one-time code (`authorization_code` grant), then polls (trigger `login`).
    @discardableResult
    public func login(code: String) async -> PollOutcome {
        do {
            let r = try await client.token([("grant_type", "authorization_code"), ("code", code)])
            store(r)
            locked { s in s.scheduleBase = clock.now(); s.cursor = nil; s._lastError = nil }
            record(.loggedIn)
        } catch {
            locked { s in s._lastError = error.description }
            record(.pollFailed, .login, error.description)
            return .failed(error.description)
        }
        return await poll(trigger: .login)
    }

    /// Logs in again without an administrator (RFC 8628): asks for a code pair, hands it to `show`
    /// (the user approves the user code elsewhere), polls the token endpoint every `interval`
    /// seconds (5 more after each `slow_down`) until approved, denied or expired, then polls for
    /// keys (trigger `login`). Never waits past the code's `expires_in` (at most 10 minutes).
    public func authorizeWithUserCode(show: @Sendable (DeviceAuthorizationResponse) -> Void) async -> PollOutcome {
        let pair: DeviceAuthorizationResponse
        do { pair = try await client.deviceAuthorization(device: id) } catch {
            record(.pollFailed, .login, error.description)
            return .failed(error.description)
        }
        show(pair)
        let deadline = Date().addingTimeInterval(TimeInterval(min(max(pair.expires_in, 1), 600)))
        var interval = min(max(pair.interval, 1), 60)
        while Date() < deadline {
            try? await Task.sleep(nanoseconds: UInt64(interval) * 1_000_000_000)
            do {
                let r = try await client.token([("grant_type", DeviceAuthorizationResponse.grantType), ("device_code", pair.device_code)])
                store(r)
                locked { s in s.scheduleBase = clock.now(); s.cursor = nil; s._lastError = nil }
                record(.loggedIn)
                return await poll(trigger: .login)
            } catch {
                guard case .oauth(let code, _) = error, code == "authorization_pending" || code == "slow_down" else {
                    record(.pollFailed, .login, error.description)
                    return .failed(error.description)
                }
                if code == "slow_down" { interval += 5 }
            }
        }
        return .failed("expired_token: the user code was not approved in time")
    }

    /// Logs out: the service revokes the login (RFC 7009), then the phone forgets its tokens and
    /// keys. Returns the error's text, or nil; on an error the phone keeps its login.
    public func logout() async -> String? {
        guard let t = locked({ s in s.tokens }) else { return "not logged in" }
        do { try await client.revoke(t.refresh, hint: "refresh_token") } catch { return error.description }
        locked { s in s.tokens = nil; s._keys = [:]; s.cursor = nil; s.scheduleBase = nil }
        return nil
    }

    func store(_ r: TokenResponse) {
        let now = clock.now()
        locked { s in s.tokens = Tokens(access: r.access_token, accessExpires: now.addingTimeInterval(TimeInterval(r.expires_in)), refresh: r.refresh_token) }
    }

    /// A valid access token: refreshed silently when it has expired; on an expired or revoked
    /// login, re-authorizes (auto-recover) or fails with the OAuth error.
    func accessToken(forceRefresh: Bool = false) async -> Result<String, TrustClientError> {
        guard let t = locked({ s in s.tokens }) else { return await recover("not logged in") }
        if !forceRefresh && clock.now() < t.accessExpires.addingTimeInterval(-5) { return .success(t.access) }
        do {
            let r = try await client.token([("grant_type", "refresh_token"), ("refresh_token", t.refresh)])
            store(r)
            record(.refreshed)
            return .success(r.access_token)
        } catch let e {
            if case .oauth(let code, let description) = e {
                locked { s in s.tokens = nil }
                if code == "token_expired" { record(.tokenExpired, nil, description) }
                return await recover("\(code): \(description)", code: code)
            }
            return .failure(e)
        }
    }

    func recover(_ reason: String, code: String = "token_expired") async -> Result<String, TrustClientError> {
        guard options.autoRecover else { return .failure(.oauth(code: code, description: reason)) }
        record(.reauthorize, nil, reason)
        guard let fresh = await reauthorize?(id) else { return .failure(.oauth(code: code, description: "re-authorize: \(reason)")) }
        do {
            let r = try await client.token([("grant_type", "authorization_code"), ("code", fresh)])
            store(r)
            locked { s in s.scheduleBase = clock.now(); s.cursor = nil }
            record(.loggedIn)
            return .success(r.access_token)
        } catch {
            return .failure(error)
        }
    }

    // MARK: polling

    /// Polls the service: new and re-issued keys are stored, deleted ones removed, a newer
    /// revocation list kept (to carry to every lock). Offline: fails without a request.
    @discardableResult
    public func poll(trigger: PollTrigger) async -> PollOutcome {
        locked { s in s.scheduleBase = clock.now() }
        guard isOnline else {
            record(.pollFailed, trigger, "offline")
            return .failed("offline")
        }
        var token: String
        switch await accessToken() {
        case .success(let t): token = t
        case .failure(let e): return fail(trigger, e)
        }
        let since = locked { s in s.cursor }
        var result: PollResult?
        do {
            result = try await client.keys(accessToken: token, since: since)
        } catch TrustClientError.unauthorized {
            // The access token was refused (expired by the service's clock, or its login revoked): refresh once.
            switch await accessToken(forceRefresh: true) {
            case .success(let t): token = t
            case .failure(let e): return fail(trigger, e)
            }
            do { result = try await client.keys(accessToken: token, since: since) } catch { return fail(trigger, error) }
        } catch {
            return fail(trigger, error)
        }
        let now = clock.now()
        locked { s in s._lastPoll = now; s._lastError = nil }
        guard let result else {
            record(.unchanged, trigger)
            return .unchanged
        }
        return apply(result, trigger: trigger, full: since == nil)
    }

    /// Registers a push token with the service (Tapkey `updateRegistrationToken`), with the
    /// access token refreshed once if the service refuses it. Returns the error's text, or nil.
    public func registerPushToken(_ pushToken: String) async -> String? {
        for force in [false, true] {
            let token: String
            switch await accessToken(forceRefresh: force) {
            case .success(let t): token = t
            case .failure(let e): return e.description
            }
            do { try await client.registerPushToken(pushToken, accessToken: token); return nil }
            catch TrustClientError.unauthorized where !force { continue }
            catch { return error.description }
        }
        return "refused"
    }

    func fail(_ trigger: PollTrigger, _ e: TrustClientError) -> PollOutcome {
        let text: String
        if case .oauth(let code, _) = e { text = code } else { text = e.description }
        locked { s in s._lastError = text }
        record(.pollFailed, trigger, e.description)
        return .failed(text)
    }

    func apply(_ r: PollResult, trigger: PollTrigger, full: Bool) -> PollOutcome {
        var added = [String](), deleted = [String]()
        var newSerial: UInt64?
        locked { s in
            if full { s._keys.removeAll() }
            for k in r.keys {
                guard let doc = Data(base64Encoded: k.document), let until = RFC3339.parse(k.validUntil),
                      let expected = RFC3339.parse(k.expectedUpdate) else { continue }
                s._keys[k.id] = HeldKey(id: k.id, grant: k.grant, document: Array(doc), iteration: k.iteration, validUntil: until, expectedUpdate: expected)
                added.append(k.id)
            }
            for id in r.deleted where s._keys.removeValue(forKey: id) != nil { deleted.append(id) }
            if let rev = r.revocation, let doc = Data(base64Encoded: rev.document), rev.serial > (s._revocation?.serial ?? 0) {
                s._revocation = (rev.serial, Array(doc))
                newSerial = rev.serial
            }
            s.cursor = r.cursor
        }
        record(.polled, trigger, "\(added.count) key(s), \(deleted.count) deleted" + (newSerial.map { ", revocation serial \($0)" } ?? ""))
        for id in added { record(.keyAdded, trigger, id) }
        for id in deleted { record(.keyDeleted, trigger, id) }
        return .updated(keys: added.count, deleted: deleted.count, revocationSerial: newSerial)
    }

    // MARK: serving the lock

    /// The credential session the lock talks to: this phone's key, every key it holds (an
    /// expired one too, so the lock says `expired`, not `unknown_credential`) and its revocation
    /// list, with their signed times in AUTH1 (`91`/`92`) so a lock holding older ones asks for them.
    /// With `readerGroup` (learnt from AUTH0), the documents naming that group come first: the lock
    /// takes the first presented document bound to this key (docs/documents.md, row 5).
    public func session(trusting readers: [TrustedReader], interface: RadioInterface, readerGroup: [UInt8]? = nil) -> CredentialSession {
        let (keyDocs, revocation, fast) = locked { s in (s._keys.values.sorted { $0.id < $1.id }.map(\.document), s._revocation?.document, s.fastCache) }
        var docs = approvals.unlockDocuments(now: clock.now()) + keyDocs
        if let readerGroup {
            let names = { (doc: [UInt8]) in (try? AccessDocument(parsing: doc))?.access.readers.contains { $0.groupID == readerGroup } ?? false }
            docs = docs.filter(names) + docs.filter { !names($0) }
        }
        return CredentialSession(configuration: CredentialConfiguration(
            signingKey: key, trustedReaders: readers, accessDocuments: docs,
            revocationDocuments: revocation.map { [$0] } ?? [], interface: interface).withDocumentTimestamps(readerGroup: readerGroup),
            fastCache: fast)
    }

    func keep(fastCache: FastCache) { locked { s in s.fastCache = fastCache } }

    // MARK: door reports

    /// Notes what a finished transaction showed of its door (nil: it named no door): the decision
    /// from the reader status (`granted` overrides it where the radio says, as BLE's completed
    /// notification does), the list this phone held, and whether the lock asked for it.
    @discardableResult
    public func noteDoor(_ session: CredentialSession, granted: Bool? = nil) -> DoorReport? {
        guard let id = session.lastReaderID.flatMap(DoorReport.doorID(readerID:)) else { return nil }
        let serial = revocationSerial
        let asked = session.lastDeviceRequest?.docTypes.contains(DocType.revocation) ?? false
        let decision: DoorReport.Decision = granted.map { $0 ? .granted : .denied }
            ?? DoorReport.decision(readerStatus: session.lastReaderStatus, failed: session.lastControlFlow.map { $0.s1 == ControlFlow.finishedWithFailure } ?? false)
        let report = DoorReport(door: id, decision: decision, readerStatus: session.lastReaderStatus.map { Hex.encode($0.bigEndianBytes) },
                                at: clock.now(), revocationSerial: serial, revocationDelivered: asked && serial != nil && !session.configuration.revocationDocuments.isEmpty)
        locked { s in s._doorReports = Array((s._doorReports + [report]).suffix(Self.maxPendingDoorReports)) }
        return report
    }

    public var pendingDoorReports: [DoorReport] { locked { s in s._doorReports } }

    /// Uploads the waiting door reports, oldest first (`POST /v1/doors/{id}/reports`). A report the
    /// service refuses (403: no grant on that door any more; 400) is dropped; a network failure
    /// keeps the rest for next time. Returns how many were stored and the first error.
    public func uploadDoorReports() async -> (sent: Int, error: String?) {
        var sent = 0
        while let report = locked({ s in s._doorReports.first }) {
            let token: String
            switch await accessToken() {
            case .success(let t): token = t
            case .failure(let e): return (sent, e.description)
            }
            do {
                try await client.reportDoor(report, accessToken: token)
                sent += 1
                locked { s in if s._doorReports.first == report { s._doorReports.removeFirst() } }
            } catch {
                if case .oauth = error { locked { s in if s._doorReports.first == report { s._doorReports.removeFirst() } }; return (sent, error.description) }
                return (sent, error.description)
            }
        }
        return (sent, nil)
    }
}

/// The phone as a radio sees it: each transaction (`reset`) starts a session with the keys the
/// phone holds at that moment, and the FAST keys it learnt are kept for the next. Driven by one
/// radio's thread at a time (the seam that owns it hands it between transactions); the
/// transaction's state is under a mutex all the same, so the compiler checks that.
public final class PhoneResponder: MessageResponder, Sendable {
    public let phone: VirtualPhone
    public let readers: [TrustedReader]
    public let interface: RadioInterface

    /// One transaction's state.
    private struct Transaction {
        var current: CredentialSession
        /// Whether this transaction's door was noted (`VirtualPhone.noteDoor`, once the lock's answer came).
        var doorNoted = false
        /// Over BLE: the transport versions of the initiate this transaction opened with (a session
        /// rebuilt at AUTH0 is initiated again, as SELECT is replayed).
        var initiated: (supported: [UInt16], selected: UInt16)?? = nil
        /// The commands of this transaction before AUTH0 (SELECT), to replay into a reordered session.
        var beforeAuth0: [[UInt8]]? = []
    }
    private let transaction: Mutex<Transaction>

    public init(phone: VirtualPhone, trusting readers: [TrustedReader], interface: RadioInterface) {
        self.phone = phone; self.readers = readers; self.interface = interface
        transaction = Mutex(Transaction(current: phone.session(trusting: readers, interface: interface)))
    }

    public func reset() {
        transaction.withLock { t in
            phone.keep(fastCache: t.current.fastCache)
            t = Transaction(current: phone.session(trusting: readers, interface: interface))
        }
    }

    /// Notes this transaction's door now (a radio that learns the outcome its own way, as BLE's
    /// completed notification does); once per transaction.
    @discardableResult
    public func noteDoor(granted: Bool? = nil) -> DoorReport? {
        transaction.withLock { t in noteDoor(&t, granted: granted) }
    }

    private func noteDoor(_ t: inout Transaction, granted: Bool?) -> DoorReport? {
        guard !t.doorNoted else { return nil }
        t.doorNoted = true
        return phone.noteDoor(t.current, granted: granted)
    }

    public func openingMessage(transportVersions: (supported: [UInt16], selected: UInt16)?) -> ChannelMessage? {
        transaction.withLock { t in
            t.initiated = .some(transportVersions)
            return t.current.openingMessage(transportVersions: transportVersions)
        }
    }

    public func received(_ message: ChannelMessage) -> Bool { lastSession.received(message) }

    public var readerReportedUnsecured: Bool? { lastSession.readerReportedUnsecured }

    /// While the phone holds unlock commands, AUTH0 names the reader: the session is rebuilt with
    /// the documents for that reader first and the earlier commands (SELECT, whose answer does not
    /// depend on the documents) replayed into it, so a command for one door never shadows the key
    /// for another.
    public func respond(to command: [UInt8]) -> [UInt8] {
        transaction.withLock { t in
            if var earlier = t.beforeAuth0 {
                if let apdu = try? CommandAPDU(parsing: command), apdu.ins == Instruction.auth0 {
                    t.beforeAuth0 = nil
                    if phone.approvals.unlockCount > 0, let auth0 = try? Auth0Command(parsing: apdu.data) {
                        t.current = phone.session(trusting: readers, interface: interface, readerGroup: Array(auth0.readerID.prefix(16)))
                        if let versions = t.initiated { _ = t.current.openingMessage(transportVersions: versions) }
                        for c in earlier { _ = t.current.respond(to: c) }
                    }
                } else if earlier.count < 8 {
                    earlier.append(command)
                    t.beforeAuth0 = earlier
                } else {
                    t.beforeAuth0 = nil
                }
            }
            let answer = t.current.respond(to: command)
            // The lock's last word (EXCHANGE with its reader status, or CONTROL FLOW): the door's report.
            if !t.doorNoted, t.current.lastReaderStatus != nil || t.current.lastControlFlow != nil { _ = noteDoor(&t, granted: nil) }
            return answer
        }
    }

    public var lastSession: CredentialSession { transaction.withLock { $0.current } }
}
