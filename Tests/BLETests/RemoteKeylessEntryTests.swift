import AccessProtocol
import BLE
import ByteCore
import Codecs
import Crypto
import Foundation
import Lock
import LockBenchTestSupport
import LockRuntime
import OfflineUnlock
import XCTest

/// Remote keyless entry over BLE (issue 19; docs/ble.md "Remote keyless entry"): the phone opens
/// with `02 06`, the lock runs a standard transaction (policy 02), reports the bolt unchanged in
/// the completed notification, then acts on the phone's sealed `02 04` and answers `02 02`.
/// LockBench's lock against LockBench's phone over Bumble's virtual controllers.
final class RemoteKeylessEntryTests: XCTestCase {
    func testRKEMessagesAreTheirBytesAndMalformedOnesAreRefusedByByte() throws {
        XCTAssertEqual(InitiateAccessProtocol(versions: [0x0100]).message(remoteAction: true).encoded(), Hex.decode("0206000c000aa508800200005c020100")!)
        XCTAssertEqual(RKERequest(action: .unsecure).message.encoded(), [0x02, 0x04, 0x00, 0x03, 0x00, 0x01, 0x01])
        XCTAssertEqual(RKERequest(action: .secure).encoded(), [0x00, 0x01, 0x00])
        XCTAssertEqual(try RKERequest(parsing: [0x01]).action, .unsecure, "the bare action byte is read too")
        XCTAssertEqual(try RKERequest(parsing: [0x00, 0x01, 0x00]).action, .secure)
        let refusals: [([UInt8], String)] = [
            ([0x00, 0x01, 0x07], "action byte 07 is not 00 (secure) or 01 (unsecure)"),
            ([0x02], "action byte 02"),
            ([0x01, 0x01, 0x00], "byte 0 is attribute 01, not 00"),
            ([0x00, 0x02, 0x00, 0x01], "byte 1, the action's length, is 2, not 1"),
            ([0x00, 0x01, 0x00, 0x00, 0x01, 0x01], "is not one attribute 00 of one byte"),
            ([0x00, 0x05, 0x01], "runs past"),
            ([], "is not one attribute 00 of one byte"),
        ]
        for (bytes, why) in refusals {
            XCTAssertThrowsError(try RKERequest(parsing: bytes), Hex.encode(bytes)) { XCTAssertTrue("\($0)".contains(why), "\(Hex.encode(bytes)): \($0)") }
        }
        XCTAssertEqual(ReaderStatusChanged(readerStatus: .startedSecure).message.encoded(), [0x02, 0x02, 0x00, 0x04, 0x00, 0x02, 0x00, 0x80])
        XCTAssertEqual(try ReaderStatusChanged(parsing: [0x00, 0x02, 0x00, 0x01]).readerStatus, .unsecured)
        XCTAssertThrowsError(try ReaderStatusChanged(parsing: [0x00, 0x02, 0x00, 0x03])) { XCTAssertTrue("\($0)".contains("byte 3"), "\($0)") }
        XCTAssertThrowsError(try ReaderStatusChanged(parsing: [0x01, 0x02, 0x00, 0x01])) { XCTAssertTrue("\($0)".contains("not one attribute 00 of 2 bytes"), "\($0)") }
        // What the lock reports after acting: the statuses the official pass rules accept.
        typealias S = AccessProtocolCompleted.ReaderStatusInformation
        XCTAssertEqual(S(after: .unsecure, bolt: ReaderStatus.unsecured), .unsecured)
        XCTAssertEqual(S(after: .secure, bolt: ReaderStatus.secured), .startedSecure)
        XCTAssertEqual(S(after: .secure, bolt: ReaderStatus.jammed), .jammed)
        XCTAssertEqual(S(after: .unsecure, bolt: ReaderStatus.secured), .secured, "an unsecure the lock could not carry out")
    }

    /// `ble phone --rke`: unsecure opens the bolt only on the request (audited `rke`), secure
    /// throws it again; each RKE transaction is standard (AUTH1 every time, never FAST) with
    /// policy 02, and the completed notification reports the bolt before the request.
    func testPhoneUnsecuresThenSecuresTheLock() throws {
        let controllers = try bumbleControllers()
        let site = try BLELockSite(self, ble: controllers.spec(0))
        let phone = try startPhone(on: controllers.spec(1), configure: { $0.scanTimeout = 10 })
        let alice = RecordingPhone(try site.phone(id: "alice").session)

        alice.session.remoteAction = .unsecure
        _ = try phone.unlock(with: alice)
        XCTAssertEqual(alice.opening?.encoded().prefix(2), [0x02, 0x06])
        XCTAssertEqual(alice.session.lastCompleted?.readerStatus, .secured, "the grant alone does not move the bolt: \(alice.session.lastCompletedProblem ?? "")")
        XCTAssertEqual(alice.session.lastStatusChanged?.readerStatus, .unsecured, alice.session.lastStatusChangedProblem ?? "")
        XCTAssertEqual(site.service.lock.boltName, "unsecured")
        let auth0 = try Auth0Command(parsing: try CommandAPDU(parsing: alice.commands[0]).data)
        XCTAssertEqual(auth0.policy, AuthenticationPolicy.userDeviceSecureAction.rawValue)
        XCTAssertEqual(auth0.flags, 0x00)
        var outcomes = site.outcomes(atLeast: 1)
        XCTAssertEqual(outcomes[0].remote, RemoteActionRecord(action: .unsecure, readerStatus: .unsecured))
        XCTAssertTrue(LockEvent(outcome: outcomes[0]).line.hasSuffix("rke unsecure → unsecured"), LockEvent(outcome: outcomes[0]).line)

        alice.session.remoteAction = .secure
        _ = try phone.unlock(with: alice)
        XCTAssertTrue(alice.instructions.contains(Instruction.auth1), "RKE is never FAST (BLERKE_RDR_NEG_FAST): \(alice.instructions)")
        XCTAssertEqual(try Auth0Command(parsing: try CommandAPDU(parsing: alice.commands[0]).data).flags, 0x00)
        XCTAssertEqual(alice.session.lastCompleted?.readerStatus, .unsecured, "the bolt as the first request left it")
        XCTAssertEqual(alice.session.lastStatusChanged?.readerStatus, .startedSecure)
        XCTAssertEqual(site.service.lock.boltName, "secured")
        outcomes = site.outcomes(atLeast: 2)
        XCTAssertEqual(outcomes[1].remote?.action, .secure)

        let (entries, _) = try AuditLog.verify(directory: site.directory.appendingPathComponent(site.service.configuration.stateDirectory).path)
        let rke = entries.filter { $0.decision == AuditEntry.remoteActionEvent }.map { $0.detail ?? "" }
        XCTAssertEqual(rke, ["unsecure: unsecured", "secure: secured"])
        let granted = entries.first { $0.decision == "grant" }?.credential
        XCTAssertNotNil(granted)
        XCTAssertEqual(Set(entries.filter { $0.decision == AuditEntry.remoteActionEvent }.map(\.credential)), [granted], "the granted document's id")
    }

    /// The lock refuses what is not a sealed, well-formed RKE request, naming the byte and the
    /// rule (audited `rke_refused`), answers the GENERAL_ERROR event (wrong parameters), and does
    /// not move the bolt; a phone that sends none leaves the bolt as the grant found it.
    func testLockRefusesUnauthenticatedOrMalformedRequests() throws {
        let controllers = try bumbleControllers()
        let site = try BLELockSite(self, ble: controllers.spec(0))
        let phone = try startPhone(on: controllers.spec(1), configure: { $0.scanTimeout = 10 })
        let cases: [(String, (CredentialSession) -> ChannelMessage?, String)] = [
            ("clear", { _ in RKERequest(action: .unsecure).message }, "does not open under this transaction's BleSKDevice"),
            ("bad action", { $0.sealForReader(ChannelMessage(type: 0x02, id: 0x04, payload: [0x00, 0x01, 0x07])) }, "action byte 07 is not 00 (secure) or 01 (unsecure)"),
            ("other message", { $0.sealForReader(ChannelMessage(type: 0x02, id: 0x05, payload: [0x00, 0x01, 0x01])) }, "not the RKE request (02 04)"),
        ]
        for (i, (name, request, why)) in cases.enumerated() {
            let credential = try site.phone(id: "p\(i)").session
            credential.remoteAction = .unsecure
            let reply = try runByHand(phone, credential, request: request)
            XCTAssertEqual(reply?.type, 0x02, name)
            XCTAssertEqual(reply?.id, 0x00, "\(name): the GENERAL_ERROR event, not reader status changed")
            let outcome = site.outcomes(atLeast: i + 1)[i]
            XCTAssertTrue(outcome.granted, name)
            XCTAssertTrue(outcome.remote?.refusal?.contains(why) == true, "\(name): \(String(describing: outcome.remote))")
            XCTAssertEqual(site.service.lock.boltName, "secured", name)
        }
        let (entries, _) = try AuditLog.verify(directory: site.directory.appendingPathComponent(site.service.configuration.stateDirectory).path)
        XCTAssertEqual(entries.filter { $0.decision == AuditEntry.remoteActionRefusedEvent }.count, 3)
        XCTAssertFalse(entries.contains { $0.decision == AuditEntry.remoteActionEvent })

        // No request at all (`--fault no-rke-request`): the phone gets no status, the bolt stays.
        let quiet = try site.phone(id: "quiet")
        let quietSession = SoftwarePhone.session(key: quiet.key, access: [quiet.document.encoded()], trusting: [site.provisioning.trustedReader],
                                                 faults: [.noRKERequest], interface: .ble)
        quietSession.remoteAction = .unsecure
        _ = try phone.unlock(with: quietSession)
        XCTAssertFalse(quietSession.sentRemoteRequest)
        XCTAssertNil(quietSession.lastStatusChanged)
        let last = site.outcomes(atLeast: 4)[3]
        XCTAssertTrue(last.remote?.refusal?.contains("no RKE request (02 04)") == true, "\(String(describing: last.remote))")
        XCTAssertEqual(site.service.lock.boltName, "secured")
    }

    /// A denied RKE transaction (a phone with no document for this lock) ends at the completed
    /// notification: the request that follows is not waited for, nothing moves, nothing is audited as `rke`.
    func testDeniedTransactionDoesNotActOnTheRequest() throws {
        let controllers = try bumbleControllers()
        let site = try BLELockSite(self, ble: controllers.spec(0))
        let phone = try startPhone(on: controllers.spec(1), configure: { $0.scanTimeout = 10; $0.responseTimeout = 2 })
        let stranger = SoftwarePhone.session(key: P256.Signing.PrivateKey(), trusting: [site.provisioning.trustedReader], interface: .ble)
        stranger.remoteAction = .unsecure
        _ = try phone.unlock(with: stranger)
        XCTAssertEqual(stranger.lastCompleted?.readerStatus, .secured)
        XCTAssertNil(stranger.lastStatusChanged)
        let outcome = site.outcomes(atLeast: 1)[0]
        XCTAssertFalse(outcome.granted)
        XCTAssertNil(outcome.remote)
        XCTAssertEqual(site.service.lock.boltName, "secured")
        let (entries, _) = try AuditLog.verify(directory: site.directory.appendingPathComponent(site.service.configuration.stateDirectory).path)
        XCTAssertFalse(entries.contains { $0.decision == AuditEntry.remoteActionEvent || $0.decision == AuditEntry.remoteActionRefusedEvent })
    }

    /// `--fault ignore-rke`: the lock ends at the completed notification; the phone's request gets
    /// no reader status changed (the ble.rdr RKE checks fail on it).
    func testLockIgnoringRKESendsNoStatus() throws {
        let controllers = try bumbleControllers()
        let site = try BLELockSite(self, ble: controllers.spec(0))
        site.service.withReader { $0.configuration.faults = [.ignoreRKE] }
        let phone = try startPhone(on: controllers.spec(1), configure: { $0.scanTimeout = 10; $0.responseTimeout = 2 })
        let bob = try site.phone(id: "bob").session
        bob.remoteAction = .unsecure
        _ = try phone.unlock(with: bob)
        XCTAssertNotNil(bob.lastCompleted)
        XCTAssertTrue(bob.sentRemoteRequest)
        XCTAssertNil(bob.lastStatusChanged)
        XCTAssertNil(site.outcomes(atLeast: 1)[0].remote)
        XCTAssertEqual(site.service.lock.boltName, "secured")
    }

    /// One transaction driven frame by frame: the phone's commands answered by `credential`, then
    /// after the completed notification `request` (nil: nothing); the lock's next frame.
    private func runByHand(_ phone: BLEPhone, _ credential: CredentialSession, request: (CredentialSession) -> ChannelMessage?) throws -> ChannelMessage? {
        let session = try phone.connectToLock()
        defer { session.disconnect() }
        try session.discover()
        let channel = try session.openChannel()
        defer { channel.close() }
        if let m = credential.openingMessage(transportVersions: session.transportVersions) { try channel.send(m.encoded()) }
        while true {
            let f = try AliroFrame(parsing: try channel.receive(timeout: 5))
            if f.type == AliroFrame.Kind.apdu {
                try channel.send(AliroFrame.response(credential.respond(to: f.payload)).encoded())
                continue
            }
            XCTAssertEqual(f.id, AliroFrame.ID.completed)
            _ = credential.received(f)
            break
        }
        guard let m = request(credential) else { return nil }
        try channel.send(m.encoded())
        return try AliroFrame(parsing: try channel.receive(timeout: 5))
    }
}
