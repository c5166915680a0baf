import AccessProtocol
import BLE
import ByteCore
import Codecs
import Conformance
import Foundation

/// A phone under test on BLE, as the certification tool's `Reader` meets it in the
/// ble_user_device cases: LockBench's lock advertises (`BLELock`) with the reader identity the
/// phone trusts, and the phone connects once per transaction. Kpersistent learned in a standard
/// transaction is kept for the run's FAST checks (the tool's reader keeps it across cases).
public final class BLEPhoneUnderTest {
    public let lock: BLELock
    public let identity: ReaderSigningIdentity
    /// Every wait on the phone under test is bounded by this.
    public let timeout: TimeInterval
    let recorder: TranscriptRecorder?
    /// Kpersistent of the last standard transaction (for FAST).
    var persistent: (credentialKey: [UInt8], key: [UInt8])?
    /// Issuer public keys the phone's documents must verify under (`--issuer`; BLERKE_UD_STEPUP_PHASE).
    public var issuerKeys: [[UInt8]] = []
    /// The element the step-up's DeviceRequest asks for (`--element-id`).
    public var elementID = DocType.accessElement
    /// The phone was provisioned as the reader-certificate cases' prompt says (`--reader-certificates`).
    public var readerCertificates = false
    /// When a check last ended a link: a channel of a link made before then belongs to a phone
    /// being let go (its disconnection may not have completed yet) and is not used.
    private var lastEnded = Date.distantPast
    /// A channel older than this when a check starts is dropped rather than used: the phone that
    /// opened it may be about to give up waiting for AUTH0.
    static let freshness: TimeInterval = 1

    public init(lock: BLELock, identity: ReaderSigningIdentity, timeout: TimeInterval, recorder: TranscriptRecorder? = nil) {
        self.lock = lock
        self.identity = identity
        self.timeout = timeout
        self.recorder = recorder
        recorder?.readerKey(group: identity.groupID, publicKey: identity.publicKey)
    }

    /// LockBench as the lock on BLE, advertising the reader identity's group and sub id, started
    /// and advertising.
    public convenience init(ble transport: String, identity: ReaderSigningIdentity, btsnoop: String? = nil, timeout: TimeInterval,
                            recorder: TranscriptRecorder? = nil) throws {
        var config = BLELock.Configuration(transport: try TransportSpec(parsing: transport))
        config.btsnoop = btsnoop
        config.advertisement.groupID = identity.groupID
        config.advertisement.subID = identity.subID
        // The checks hold the phone's channel as long as a case needs (3 s without AUTH0, a Busy).
        config.transactionTimeout = nil
        let lock = try BLELock(configuration: config)
        _ = try lock.open()
        self.init(lock: lock, identity: identity, timeout: timeout, recorder: recorder)
    }

    public func stop() { lock.stop() }

    /// The next phone's channel, opened after this call or at most `freshness` before it.
    func connection(_ label: String, as reader: ReaderSigningIdentity? = nil, groupKey: [UInt8]? = nil) throws -> BLELockStep {
        let asked = Date()
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0, let card = try lock.waitForCard(timeout: left) else {
                throw CheckStop(.fail("no phone opened the access-protocol channel within \(Int(timeout)) s"))
            }
            let made = card.channel.link.connectedAt
            if made < asked.addingTimeInterval(-Self.freshness) || made < lastEnded || !card.channel.isOpen {
                card.channel.close()
                continue
            }
            recorder?.begin(["check": label, "interface": RadioInterface.ble.rawValue])
            return BLELockStep(card, phone: self, as: reader, groupKey: groupKey)
        }
    }

    /// Lets go of `link` (its channel too); later checks take only links made after this.
    func end(_ link: BLEConnection) {
        lastEnded = Date()
        link.disconnect()
        _ = link.waitUntilDisconnected(timeout: 1)
    }

    /// Waits up to `timeout` for a phone to connect after `since` (a link made before it is
    /// ignored: it chose on an older advertisement).
    func newLink(since: Date) throws -> BLEConnection {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if let l = lock.links.first(where: { $0.connectedAt > since && $0.isOpen }) { return l }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw CheckStop(.fail("BLE GAP connection establishment failure: no phone connected within \(Int(timeout)) s"))
    }

    /// Changes what the lock announces, then lets go of every phone that may have chosen on the
    /// old announcement; returns the moment after which connections count.
    func reconfigure(_ change: (BLELock) -> Void) -> Date {
        change(lock)
        Thread.sleep(forTimeInterval: 0.3)
        lastEnded = Date()
        lock.dropPhones()
        return lastEnded
    }
}

/// One phone connection driven step by step, as the tool's `Reader` does: wait for the
/// initiate, then commands one at a time through a `ReaderProbe` (interface byte `C3`, the
/// initiate's `A5` bound into the keys), notifications sealed under BleSKReader.
final class BLELockStep {
    let card: BLEReaderSession
    let probe: ReaderProbe
    let phone: BLEPhoneUnderTest

    /// `reader`: play another reader than the lock's (the certificate cases' official key material).
    init(_ card: BLEReaderSession, phone: BLEPhoneUnderTest, as reader: ReaderSigningIdentity? = nil, groupKey: [UInt8]? = nil) {
        self.card = card
        self.phone = phone
        let link: APDUTransceiver = phone.recorder.map { RecordingLink(card, recorder: $0) } ?? card
        probe = ReaderProbe(link: link, identity: reader ?? phone.identity, groupKey: groupKey, interfaceByte: 0xC3, recorder: phone.recorder)
    }

    /// `wait_for_initiate_access_protocol_notification`: the phone's first frame must be `02 05`
    /// (`ids`: `02 06` for `rke=True`) with application type `0000` and version `0100` listed.
    @discardableResult
    func initiate(ids: [UInt8] = [ChannelMessage.Notification.initiateAccessProtocol]) throws -> InitiateAccessProtocol {
        let f: ChannelMessage
        do { f = try card.receiveMessage(timeout: phone.timeout) } catch {
            throw CheckStop(.fail("no initiate access protocol notification (02 \(Hex.encode(ids))) within \(Int(phone.timeout)) s: \(error)"))
        }
        guard f.type == ChannelMessage.Kind.notification, ids.contains(f.id) else {
            throw CheckStop(.fail("Received unexpected ble message while waiting for initiate_access_protocol message: \(f)",
                                  expected: [0x02] + ids.prefix(1), actual: f.encoded()))
        }
        let initiate: InitiateAccessProtocol
        do { initiate = try InitiateAccessProtocol(parsing: f.payload) } catch {
            throw CheckStop(.fail("the initiate does not parse: \(error)", actual: f.payload))
        }
        guard initiate.applicationType == [0x00, 0x00] else {
            throw CheckStop(.fail("User send unknown application type", expected: [0x00, 0x00], actual: initiate.applicationType))
        }
        guard initiate.versions.contains(ProtocolVersion.v1_0) else {
            throw CheckStop(.fail("the initiate does not list protocol version 0100", actual: initiate.versions.flatMap(\.bigEndianBytes)))
        }
        try probe.initiated(proprietaryTLV: initiate.proprietaryTLV, versions: initiate.versions)
        return initiate
    }

    /// `handle_auth0`: a standard or FAST AUTH0 (policy as given) that must be answered 9000 with a
    /// valid `86`; FAST opens the cryptogram with the run's Kpersistent when it has one.
    @discardableResult
    func auth0(fast: Bool = false, policy: UInt8 = 0x01) throws -> (answer: Auth0Response, response: ResponseAPDU) {
        let r = try probe.send(probe.makeAuth0(fast: fast, policy: policy))
        try ReaderProbe.expect(r, .success, "AUTH0")
        let answer = try probe.acceptAuth0(r)
        return (answer, r)
    }

    /// `handle_auth1` (credential public key): 9000 that opens; remembers Kpersistent.
    func auth1() throws {
        try probe.auth1()
        if let p = probe.persistentKey() { phone.persistent = p }
    }

    /// `handle_exchange` without the reader status (BLE): the answer must be `00 02 00 00`.
    func exchange(ursk: Bool = false, step: String) throws {
        let plain = ExchangeCommandPlaintext(readerStatus: nil, urskRequest: ursk).encoded()
        let reply = try probe.exchange(plain)
        guard reply == ExchangeResponsePlaintext.success else {
            throw CheckStop(.fail("\(step): the EXCHANGE answer plaintext is not 00 02 00 00", expected: ExchangeResponsePlaintext.success, actual: reply))
        }
    }

    /// `reader_status_access_protocol_completed`: `02 03` with `00 02 <u << 5> <status>`, sealed
    /// under BleSKReader.
    func completed(_ reporting: AccessProtocolCompleted.UnsolicitedReporting, _ status: AccessProtocolCompleted.ReaderStatusInformation) throws {
        let plain = ChannelMessage(type: ChannelMessage.Kind.notification, id: ChannelMessage.Notification.accessProtocolCompleted,
                                   payload: AccessProtocolCompleted(unsolicitedReporting: reporting, readerStatus: status).encoded())
        try card.sendMessage(try sealed(plain))
    }

    /// This connection's BLE secure messaging: one per BleSK, its counters running across the
    /// lock's notifications and the phone's RKE request.
    private var messaging: (bleSK: [UInt8], value: BLESecureMessaging)?

    private func withMessaging<T>(_ body: (inout BLESecureMessaging) throws -> T) throws -> T {
        guard let bleSK = probe.bleSK else { throw CheckStop(.fail("a BLE notification before any key")) }
        var m = messaging?.bleSK == bleSK ? messaging!.value : BLESecureMessaging(role: .reader, bleSK: bleSK, transportVersions: card.transportVersions)
        defer { messaging = (bleSK, m) }
        return try body(&m)
    }

    func sealed(_ plain: ChannelMessage) throws -> ChannelMessage { try withMessaging { try $0.seal(plain) } }

    /// `handle_rke_request`: the phone's next frame must be the RKE request `02 04`, opening under
    /// BleSKDevice, with a known action.
    func rkeRequest() throws -> RKERequest {
        let f: ChannelMessage
        do { f = try card.receiveMessage(timeout: phone.timeout) } catch {
            throw CheckStop(.fail("no RKE request (02 04) within \(Int(phone.timeout)) s after the completed notification: \(error)"))
        }
        guard f.type == ChannelMessage.Kind.notification, f.id == ChannelMessage.Notification.rkeRequest else {
            throw CheckStop(.fail("Received unexpected ble message while waiting for the RKE request: \(f)", expected: [0x02, 0x04], actual: f.encoded()))
        }
        let plain: [UInt8]
        do { plain = try withMessaging { try $0.open(f) } } catch let stop as CheckStop { throw stop } catch {
            throw CheckStop(.fail("the RKE request does not open under BleSKDevice: \(error)", actual: f.payload))
        }
        do { return try RKERequest(parsing: plain) } catch {
            throw CheckStop(.fail("\(error)", actual: plain))
        }
    }

    /// `reader_status_status_changed(UNSPECIFIED, status)`, sealed under BleSKReader.
    func statusChanged(_ status: AccessProtocolCompleted.ReaderStatusInformation) throws {
        try card.sendMessage(try sealed(ReaderStatusChanged(readerStatus: status).message))
    }

    /// The next frame from the phone, or nil when it closed the channel; throws after `within`.
    func nextFrame(within: TimeInterval) throws -> ChannelMessage? {
        do { return try AliroFrame(parsing: try card.channel.receive(timeout: within)) } catch where error.code == .channelClosed {
            return nil
        }
    }

    /// Ends the connection (the tool's `transaction_termination`): 0.1 s for the phone, then the
    /// channel and the link go.
    func close() {
        Thread.sleep(forTimeInterval: 0.1)
        card.channel.close()
        phone.end(card.channel.link)
    }
}
