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

/// A provisioned lock (engine, state, audit) on BLE under `LockRunner`, on one Bumble controller.
final class BLELockSite {
    let directory: URL
    let provisioning: LockProvisioning
    let service: LockService
    let runner: LockRunner
    /// The outcomes so far, for the test's thread to wait on.
    private let outcomes = Monitor<[TransactionOutcome]>([])

    init(_ test: XCTestCase, ble spec: String, edit: (inout LockConfiguration) -> Void = { _ in }) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ble-official-\(UUID().uuidString.prefix(8))")
        provisioning = try LockProvisioning(directory: directory)
        var configuration = provisioning.configuration
        edit(&configuration)
        service = try LockService(configuration: configuration)
        runner = LockRunner(service: service, nfc: nil, ble: spec) { _ in }
        runner.onOutcome = { [outcomes] outcome in outcomes.withLock { $0.append(outcome) } }
        try runner.start()
        test.addTeardownBlock { [runner, directory] in
            runner.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// The outcomes so far, once there are at least `count` (bounded wait).
    func outcomes(atLeast count: Int, timeout: TimeInterval = 15) -> [TransactionOutcome] {
        outcomes.wait(until: Date(timeIntervalSinceNow: timeout), for: { $0.count >= count }) { seen, _ in seen }
    }

    /// A BLE phone session (interface `C3`) holding one access document for this lock.
    func phone(id: String, validFor: TimeInterval = 8 * 3600) throws -> (key: P256.Signing.PrivateKey, document: AccessDocument, session: CredentialSession) {
        let key = P256.Signing.PrivateKey()
        let from = Date().addingTimeInterval(-600)
        let document = try provisioning.accessDocument(id: id, credentialKey: key, validFrom: from, validUntil: from.addingTimeInterval(validFor))
        let session = SoftwarePhone.session(key: key, access: [document.encoded()], trusting: [provisioning.trustedReader], interface: .ble)
        return (key, document, session)
    }
}

/// Records what the reader sent a `CredentialSession` over BLE: the phone's opening message, the
/// commands and the reader's messages.
final class RecordingPhone: MessageResponder, @unchecked Sendable {
    let session: CredentialSession
    private let lock = NSLock()
    private(set) var opening: ChannelMessage?
    private(set) var commands: [[UInt8]] = []
    private(set) var messages: [ChannelMessage] = []
    /// Answers AUTH0 only after this long (nil: at once).
    var auth0Delay: TimeInterval?

    init(_ session: CredentialSession) { self.session = session }

    func openingMessage(transportVersions: (supported: [UInt16], selected: UInt16)?) -> ChannelMessage? {
        lock.withLock { commands = []; messages = [] }
        let m = session.openingMessage(transportVersions: transportVersions)
        lock.withLock { opening = m }
        return m
    }
    func received(_ message: ChannelMessage) -> Bool {
        lock.withLock { messages.append(message) }
        return session.received(message)
    }
    var readerReportedUnsecured: Bool? { session.readerReportedUnsecured }
    var hasFollowUp: Bool { session.hasFollowUp }
    func followUp() -> ChannelMessage? { session.followUp() }
    func respond(to command: [UInt8]) -> [UInt8] {
        lock.withLock { commands.append(command) }
        if command.count > 1, command[1] == Instruction.auth0, let auth0Delay { Thread.sleep(forTimeInterval: auth0Delay) }
        return session.respond(to: command)
    }
    func reset() { session.reset() }
    var instructions: [UInt8] { lock.withLock { commands.map { $0[1] } } }
}

/// The official BLE sequence (issue 19 §1.8; docs/ble.md "Frames on the channel"), LockBench's
/// lock against LockBench's phone and against Bumble's host running the Python credential, over
/// Bumble's virtual controllers.
final class OfficialSequenceTests: XCTestCase {
    func testInitiateIsTheReferenceBytes() {
        XCTAssertEqual(InitiateAccessProtocol(versions: [0x0100]).message.encoded(), Hex.decode("0205000c000aa508800200005c020100")!)
        let parsed = try? InitiateAccessProtocol(parsing: Hex.decode("000aa508800200005c020100")!)
        XCTAssertEqual(parsed?.versions, [0x0100])
        XCTAssertEqual(parsed?.applicationType, [0, 0])
        XCTAssertThrowsError(try InitiateAccessProtocol(parsing: Hex.decode("010aa508800200005c020100")!), "attribute 01 is not the proprietary information")
        XCTAssertThrowsError(try InitiateAccessProtocol(parsing: Hex.decode("000aa508800200005c0201")!), "length runs past the payload")
        XCTAssertEqual(AccessProtocolCompleted(unsolicitedReporting: .sendToEachConnected, readerStatus: .secured).encoded(), [0x00, 0x02, 0x20, 0x00])
        XCTAssertEqual(try? AccessProtocolCompleted(parsing: [0x00, 0x02, 0x00, 0x01]).readerStatus, .unsecured)
        XCTAssertThrowsError(try AccessProtocolCompleted(parsing: [0x00, 0x02, 0x00, 0x03]), "reader status 03 is outside the enum")
        XCTAssertThrowsError(try AccessProtocolCompleted(parsing: [0x01]), "the old one-byte completion")
        XCTAssertEqual(BLEEvent.generalError(.unknown).encoded(), [0x01, 0x01, 0x00])
    }

    /// Items 1, 2, 5: initiate → AUTH0 first (standard, policy 01, the lock meets the phone for the
    /// first time) → AUTH1 → EXCHANGE without `97` → ENVELOPE → completed `00 02 00 01` sealed
    /// under BleSKReader; then FAST: AUTH0 → completed straight away (RD-BLE-FSTTXN-1.0).
    func testSwiftPhoneAndLockRunTheOfficialStandardThenFastSequence() throws {
        let controllers = try bumbleControllers()
        let site = try BLELockSite(self, ble: controllers.spec(0))
        let phone = try startPhone(on: controllers.spec(1), configure: { $0.scanTimeout = 10 })
        let alice = RecordingPhone(try site.phone(id: "alice").session)

        let first = try phone.unlock(with: alice)
        XCTAssertEqual(alice.opening?.encoded(), Hex.decode("0205000c000aa508800200005c020100")!)
        // The lock holds no document for this phone yet: it steps up after the EXCHANGE
        // (BLEUWB_RDR_STEPUP_PHASE: EXCHANGE, then ENVELOPE, then completed; no step-up SELECT).
        XCTAssertEqual(Array(alice.instructions.prefix(4)), [Instruction.auth0, Instruction.auth1, Instruction.exchange, Instruction.envelope],
                       "AUTH0 first, no SELECT: \(alice.instructions)")
        XCTAssertFalse(alice.instructions.contains(Instruction.select))
        let auth0 = try Auth0Command(parsing: try CommandAPDU(parsing: alice.commands[0]).data)
        XCTAssertEqual(auth0.flags, 0x00, "standard: the lock holds no Kpersistent for this phone yet")
        XCTAssertEqual(auth0.policy, 0x01)
        XCTAssertEqual(auth0.version, 0x0100)
        XCTAssertNil(alice.session.lastReaderStatus, "no 97 in the EXCHANGE over BLE")
        XCTAssertEqual(alice.session.lastCompleted, AccessProtocolCompleted(readerStatus: .unsecured), alice.session.lastCompletedProblem ?? "")
        XCTAssertEqual(first.completion?.count, 4 + 16, "00 02 00 01 sealed: ciphertext and GCM tag")
        XCTAssertNotEqual(Array(first.completion?.prefix(4) ?? []), [0x00, 0x02, 0x00, 0x01], "not sent in the clear")
        XCTAssertTrue(first.granted)
        var outcomes = site.outcomes(atLeast: 1)
        XCTAssertTrue(outcomes[0].granted, "\(outcomes[0].decision)")
        XCTAssertEqual(outcomes[0].transcript.first?.label, "AUTH0")
        XCTAssertEqual(outcomes[0].readerStatus, ReaderStatus.unsecured)

        let second = try phone.unlock(with: alice)
        XCTAssertEqual(alice.instructions, [Instruction.auth0], "FAST: completed right after AUTH0")
        XCTAssertEqual(try Auth0Command(parsing: try CommandAPDU(parsing: alice.commands[0]).data).flags, Auth0Command.flagFast)
        XCTAssertEqual(alice.session.lastCompleted?.readerStatus, .unsecured, alice.session.lastCompletedProblem ?? "")
        XCTAssertTrue(second.granted)
        outcomes = site.outcomes(atLeast: 2)
        XCTAssertTrue(outcomes[1].fast && outcomes[1].granted, "\(outcomes[1].decision)")
    }

    /// Item 3: `"protocol": {"policy": 3}` makes AUTH0 carry `42 01 03` (RD-BLE-AUTH0-2.0); the
    /// configuration refuses a policy it does not know, naming it.
    func testConfiguredPolicyGoesInAUTH0() throws {
        let controllers = try bumbleControllers()
        let site = try BLELockSite(self, ble: controllers.spec(0)) { $0.protocol.policy = .forceUserAuthentication }
        let phone = try startPhone(on: controllers.spec(1), configure: { $0.scanTimeout = 10 })
        let bob = RecordingPhone(try site.phone(id: "bob").session)
        _ = try phone.unlock(with: bob)
        XCTAssertEqual(try Auth0Command(parsing: try CommandAPDU(parsing: bob.commands[0]).data).policy, 0x03)

        for (json, expected) in [("3", AuthenticationPolicy.forceUserAuthentication), ("\"secure-action\"", .userDeviceSecureAction), ("1", .userDevice)] {
            let options = try JSONDecoder().decode(LockConfiguration.ProtocolOptions.self, from: Data("{\"policy\": \(json)}".utf8))
            XCTAssertEqual(options.policy, expected, json)
        }
        XCTAssertEqual(try JSONDecoder().decode(LockConfiguration.ProtocolOptions.self, from: Data("{}".utf8)).policy, .userDevice)
        for bad in ["4", "\"strict\"", "0"] {
            XCTAssertThrowsError(try JSONDecoder().decode(LockConfiguration.ProtocolOptions.self, from: Data("{\"policy\": \(bad)}".utf8))) {
                XCTAssertTrue("\($0)".contains("is not an AUTH0 authentication policy"), "\($0)")
            }
        }
    }

    /// Item 7: a phone that initiates and then leaves AUTH0 unanswered gets `02 00 00 03 01 01 00`
    /// (BLEUWB_RDR_NEG_TIMEOUT_BEFORE_AUTH0); one whose AUTH0 answer carries the key under tag `88`
    /// gets the same event (BLEUWB_RDR_CONTROL_FLOW_RDR_DESCRIPTOR_TAG), never CONTROL FLOW.
    func testFailuresAreTheGeneralErrorEvent() throws {
        let controllers = try bumbleControllers()
        let site = try BLELockSite(self, ble: controllers.spec(0))
        let phone = try startPhone(on: controllers.spec(1), configure: { $0.scanTimeout = 10 })

        let session = try phone.connectToLock()
        defer { session.disconnect() }
        try session.discover()
        let channel = try session.openChannel()
        try channel.send(Hex.decode("0205000c000aa508800200005c020100")!)
        let auth0 = try AliroFrame(parsing: try channel.receive(timeout: 5))
        XCTAssertEqual([auth0.type, auth0.id], [0x00, 0x00])
        XCTAssertEqual(auth0.payload[1], Instruction.auth0, "the lock's first command is AUTH0")
        let t0 = Date()
        let event = try AliroFrame(parsing: try channel.receive(timeout: 10))
        XCTAssertEqual(event.encoded(), [0x02, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00])
        XCTAssertGreaterThan(Date().timeIntervalSince(t0), 3, "the lock waited past the case's 3 s sleep")
        XCTAssertEqual(site.outcomes(atLeast: 1).first?.granted, false)
        session.disconnect()

        let key = P256.Signing.PrivateKey()
        let wrongTag = SoftwarePhone.session(key: key, trusting: [site.provisioning.trustedReader], faults: [.auth0WrongTag], interface: .ble)
        let recorder = RecordingPhone(wrongTag)
        _ = try phone.unlock(with: recorder)
        XCTAssertEqual(recorder.instructions, [Instruction.auth0], "no CONTROL FLOW after the bad answer")
        XCTAssertEqual(recorder.messages.map { $0.encoded() }, [[0x02, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00]])
        XCTAssertEqual(wrongTag.lastEvent, .generalError(.unknown))
    }

    /// Item 4 and 6 against Bumble's host (an independent central): the advertisement's first
    /// service-data byte is `40` (version 0, BLE only); after `01FF` — 2 or 4 bytes — the lock
    /// refuses the LE credit-based connection (BLERKE_RDR_NEG_FAILED_L2CAP); SPSM `0x0081` gets
    /// result `0x0002` (BLERKE_RDR_NEG_FAILED_SPSM_L2CAP); `01 00 01 03` opens the channel.
    func testVersionWriteAndWrongSPSMAgainstBumble() throws {
        let controllers = try bumbleControllers()
        let lock = try startLock(on: controllers.spec(0))
        let port = controllers.ports[1]

        for bad in ["01ff", "01ff0103"] {
            let r = try BumblePhoneScript.run(port: port, credential: "echo", extra: ["--version-write", bad])
            XCTAssertEqual(r["ok"] as? Bool, true, "\(r)")
            XCTAssertEqual((r["service_data"] as? String)?.prefix(2), "40", "advertisement version 0, BLE only")
            let result = r["channel_result"] as? Int
            XCTAssertNotNil(result, "\(r)")
            XCTAssertNotEqual(result, 0, "the lock opened the channel after version \(bad): \(r)")
            XCTAssertEqual(result.map(UInt16.init), BLELock.unsupportedVersionRefusal)
        }
        let wrongPSM = try BumblePhoneScript.run(port: port, credential: "echo", extra: ["--version-write", "01000103", "--psm-offset", "1"])
        XCTAssertEqual(wrongPSM["channel_result"] as? Int, 0x0002, "LE_PSM not supported: \(wrongPSM)")
        let newest = try BumblePhoneScript.run(port: port, credential: "echo", extra: ["--version-write", "01000103"])
        XCTAssertEqual(newest["channel_result"] as? Int, 0, "a 4-byte write of 0100 is accepted: \(newest)")
        XCTAssertEqual(lock.transactionCount, 1, "the accepted probe channel ran one (empty) transaction; the refused ones none")
    }

    /// Item 6, phone side: a lock advertising version 1 is connected to and left at once
    /// (BLERKE_UD_NEG_FAILED_L2CAP), no channel opened.
    func testPhoneLeavesALockAdvertisingAnotherVersion() throws {
        let controllers = try bumbleControllers()
        final class Events: @unchecked Sendable { var list: [BLELockEvent] = []; let lock = NSLock() }
        let events = Events()
        _ = try startLock(on: controllers.spec(0), configure: { $0.advertisement.advertisingVersion = 1 },
                          onEvent: { e in events.lock.withLock { events.list.append(e) } })
        let phone = try startPhone(on: controllers.spec(1))
        XCTAssertThrowsError(try phone.unlock(with: EchoCredential())) {
            XCTAssertEqual(($0 as? BLEError)?.code, .connectionFailed)
            XCTAssertTrue("\($0)".contains("advertises version 1"), "\($0)")
        }
        let deadline = Date(timeIntervalSinceNow: 5)
        while Date() < deadline, !events.lock.withLock({ events.list.contains { if case .disconnected = $0 { return true } else { return false } } }) {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let seen = events.lock.withLock { events.list }
        XCTAssertTrue(seen.contains { if case .connected = $0 { return true } else { return false } }, "the phone connected first")
        XCTAssertTrue(seen.contains { if case .disconnected = $0 { return true } else { return false } }, "then disconnected")
        XCTAssertFalse(seen.contains { if case .transactionFinished = $0 { return true } else { return false } }, "no channel, no transaction")
    }

    /// The lock against Bumble's host running the Python credential (written from the docs): the
    /// same official sequence, the completed notification opened by an independent implementation.
    func testBumblePhoneRunsTheOfficialSequenceAgainstTheLock() throws {
        let controllers = try bumbleControllers()
        let site = try BLELockSite(self, ble: controllers.spec(0))
        let key = P256.Signing.PrivateKey()
        let from = Date().addingTimeInterval(-600)
        let document = try site.provisioning.accessDocument(id: "carol", credentialKey: key, validFrom: from, validUntil: from.addingTimeInterval(3600))
        try site.provisioning.writePrivateKey("carol.key.pem", key)
        try site.provisioning.write("carol.cbor", Data(document.encoded()))
        let args = ["--key", site.directory.appendingPathComponent("carol.key.pem").path,
                    "--document", site.directory.appendingPathComponent("carol.cbor").path,
                    "--lock-config", site.directory.appendingPathComponent("lock.json").path]
        let r = try BumblePhoneScript.run(port: controllers.ports[1], credential: "protocol", extra: args)
        XCTAssertEqual(r["ok"] as? Bool, true, "\(r)")
        XCTAssertEqual(r["initiate"] as? String, "0205000c000aa508800200005c020100")
        let transcript = (r["transcript"] as? [[String: String]]) ?? []
        XCTAssertEqual(Array(transcript.map { String(($0["command"] ?? "").dropFirst(2).prefix(2)) }.prefix(4)), ["80", "81", "c9", "c3"],
                       "AUTH0, AUTH1, EXCHANGE, ENVELOPE")
        let credential = r["credential"] as? [String: Any]
        XCTAssertNil(credential?["exchange_status"] as? String, "no 97 over BLE: \(String(describing: credential))")
        let completed = credential?["completed"] as? [String: Any]
        XCTAssertEqual(completed?["plaintext"] as? String, "00020001", "\(r)")
        XCTAssertTrue(site.outcomes(atLeast: 1).first?.granted == true)
    }
}
