import AccessProtocol
import ByteCore
import Crypto
import Foundation
import LockBenchTestSupport
import Lock
import LockRuntime
import Conformance
@testable import NFC
import ReaderSeam
import PhoneRadios
import PhoneSeam
import SocketTransport
import Synchronization
import XCTest

/// The phone-side seam: each radio of the registry (`PhoneRadioSpec`) presents a software phone
/// to a real lock (`LockRunner` on its real reader: the socket transport, libnfc on the virtual
/// PN532's pty, BLE between two Bumble controllers; PC/SC through pcscd is in `PCSCTests`, which
/// owns vpcd's reader), and the lock decides. Every wait is bounded.
final class PhoneRadioTests: XCTestCase {
    /// A provisioned lock on `reader` (nil: none; BLE passes `ble`), its events typed as the runner emits them.
    final class Site: @unchecked Sendable {
        let provisioning: LockProvisioning
        let service: LockService
        let runner: LockRunner
        /// The outcomes and radio events so far, for the test's thread to wait on.
        private let heard = Monitor<(outcomes: [TransactionOutcome], radioEvents: [LockEvent.RadioEvent])>(([], []))

        init(_ test: XCTestCase, nfc: LockRunner.NFCSource? = nil, ble: String? = nil, socket: SocketReader.Configuration? = nil) throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("phone-radio-\(UUID().uuidString.prefix(8))")
            provisioning = try LockProvisioning(directory: directory)
            service = try LockService(configuration: provisioning.configuration)
            let heard = self.heard
            runner = LockRunner(service: service, nfc: nfc, ble: ble, socket: socket) { event in
                if let r = event.radioEvent { heard.withLock { $0.radioEvents.append(r) } }
            }
            runner.startGrace = { _ in 10 }
            runner.onOutcome = { outcome in heard.withLock { $0.outcomes.append(outcome) } }
            try runner.start()
            test.addTeardownBlock { [runner] in
                runner.stop()
                try? FileManager.default.removeItem(at: directory)
            }
        }

        /// A phone holding a document for this lock, announcing `interface`.
        func phone(_ id: String, interface: RadioInterface) throws -> CredentialSession {
            let key = P256.Signing.PrivateKey()
            let from = Date().addingTimeInterval(-600)
            let document = try provisioning.accessDocument(id: id, credentialKey: key, validFrom: from, validUntil: from.addingTimeInterval(8 * 3600))
            return SoftwarePhone.session(key: key, access: [document.encoded()], trusting: [provisioning.trustedReader], interface: interface)
        }

        /// The first outcome after `count` outcomes, waiting at most `timeout`.
        func outcome(after count: Int, timeout: TimeInterval = 20) throws -> TransactionOutcome {
            try heard.wait(until: Date(timeIntervalSinceNow: timeout), for: { $0.outcomes.count > count }) { h, ready in
                guard ready else { throw Timeout(what: "a decision", seen: h.radioEvents) }
                return h.outcomes[count]
            }
        }

        /// Waits (bounded) until the runner reported `event` `count` times.
        func wait(for event: LockEvent.RadioEvent, count: Int = 1, timeout: TimeInterval = 20) throws {
            try heard.wait(until: Date(timeIntervalSinceNow: timeout), for: { $0.radioEvents.filter({ $0 == event }).count >= count }) { h, ready in
                if !ready { throw Timeout(what: "\(count)× \(event.rawValue)", seen: h.radioEvents) }
            }
        }

        var seen: [LockEvent.RadioEvent] { heard.withLock { $0.radioEvents } }
    }

    struct Timeout: Error, CustomStringConvertible {
        var what: String
        var seen: [LockEvent.RadioEvent]
        var description: String { "timed out waiting for \(what); radio events: \(seen.map(\.rawValue))" }
    }

    /// Presents `phone` on `radio` from another thread (the lock drives the transaction), bounded.
    func present(_ phone: CredentialSession, on radio: any PhoneRadio, timeout: TimeInterval = 20) throws -> PhoneTap {
        let result = Mutex<Result<PhoneTap, Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let r = Result { try radio.present(phone, timeout: timeout) }
            result.withLock { $0 = r }
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout + 10) == .success else { throw Timeout(what: "the presentation on \(radio.spec)", seen: []) }
        return try XCTUnwrap(result.withLock { $0 }).get()
    }

    // MARK: Each radio, through the registry, to a real lock

    func testSocketRadioFromTheRegistryIsGrantedByTheLockConnectingToIt() throws {
        let radio = try PhoneRadioSpec(parsing: "socket:0").radio()
        defer { radio.close() }
        XCTAssertEqual(radio.interface, .socket)
        let port = try XCTUnwrap(UInt16(radio.address.split(separator: ":").last ?? ""))
        XCTAssertNotEqual(port, 0, "port 0 picked a free port: \(radio.address)")
        let site = try Site(self, socket: .init(host: "127.0.0.1", port: port, rearmDelay: 0.2))
        let tap = try present(try site.phone("alice", interface: .socket), on: radio)
        XCTAssertTrue(tap.ended, "the lock closed the connection")
        XCTAssertGreaterThanOrEqual(tap.commands, 3, "SELECT, AUTH0, AUTH1 at least")
        let outcome = try site.outcome(after: 0)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertEqual(outcome.credentialID, Array("alice".utf8).hex)
    }

    func testSocketRadioWithNoLockReturnsAnUnendedTapWithinItsTimeout() throws {
        let radio = try PhoneRadioSpec.socket(host: "127.0.0.1", port: 0).radio()
        defer { radio.close() }
        let started = Date()
        let tap = try radio.present(SimplePhone(), timeout: 0.3)
        XCTAssertEqual(tap, PhoneTap(commands: 0, ended: false))
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
        radio.close()
        XCTAssertThrowsError(try radio.present(SimplePhone(), timeout: 0.3), "a closed radio refuses") { error in
            XCTAssertTrue("\(error)".contains("closed"), "\(error)")
        }
    }

    func testVirtualPN532RadioFromTheRegistryIsGrantedByTheLockThroughLibnfc() throws {
        let radio = try PhoneRadioSpec(parsing: "pn532").radio()
        defer { radio.close() }
        XCTAssertTrue(radio.address.hasPrefix("pn532_uart:"), radio.address)
        XCTAssertEqual(radio.interface, .nfc)
        let site = try Site(self, nfc: .connstring(radio.address))
        XCTAssertTrue(radio.waitForLock(timeout: 20), "libnfc opened the virtual PN532")
        let phone = try site.phone("bob", interface: .nfc)
        let tap = try present(phone, on: radio)
        XCTAssertTrue(tap.ended, "the lock ended the transaction (EXCHANGE or CONTROL FLOW)")
        let outcome = try site.outcome(after: 0)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertEqual(outcome.credentialID, Array("bob".utf8).hex)
        // The phone left the field: the lock's typed event, not its log text, says so.
        try site.wait(for: .cardRemoved)
        // A second presentation is a new entry (new UID): a second decision.
        _ = try present(phone, on: radio)
        XCTAssertTrue(try site.outcome(after: 1).granted)
        try site.wait(for: .cardArrived, count: 2)
    }

    func testVirtualPN532RadioWithNoLockTalkingReturnsAnUnendedTap() throws {
        let radio = try PhoneRadioSpec.pn532(link: nil).radio()
        defer { radio.close() }
        XCTAssertFalse(radio.waitForLock(timeout: 0.2), "nothing opened the pty")
        let tap = try radio.present(SimplePhone(), timeout: 0.3)
        XCTAssertEqual(tap, PhoneTap(commands: 0, ended: false))
    }

    func testBLERadioFromTheRegistryIsGrantedByTheLockOnBumble() throws {
        let controllers = try bumbleControllers()
        let site = try Site(self, ble: controllers.spec(0))
        try site.wait(for: .advertising)
        let radio = try PhoneRadioSpec(parsing: "ble:\(controllers.spec(1))").radio()
        defer { radio.close() }
        XCTAssertEqual(radio.interface, .ble)
        let tap = try present(try site.phone("carol", interface: .ble), on: radio)
        XCTAssertTrue(tap.ended)
        XCTAssertEqual(tap.granted, true, "the completed notification carried the grant")
        let outcome = try site.outcome(after: 0)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertEqual(outcome.credentialID, Array("carol".utf8).hex)
    }

    // MARK: Conformance through the lock's seam: cycling the field

    /// `conformance credential --nfc`: LockBench the reader takes one link per transaction from
    /// `LibNFCReader` (`CardReaderLinks`); between two, `cycleField` turns the field off and on, so
    /// a phone that stays on the reader is selected afresh (a new session) for the next check.
    func testNFCConformanceLinksCycleTheFieldSoAPhoneLeftOnTheReaderIsTappedAfresh() throws {
        let radio = try VirtualPN532PhoneRadio(link: nil)
        defer { radio.close() }
        let phone = CountingPhone()
        try radio.enter(phone)
        let reader = LibNFCReader(configuration: .init(connstring: radio.address, apduTimeout: 3000))
        let links = try CardReaderLinks(reader, waitForCard: 10)
        defer { links.close() }
        let select: [UInt8] = [0x00, 0xA4, 0x04, 0x00, 0x09, 0xA0, 0x00, 0x00, 0x09, 0x09, 0xAC, 0xCE, 0x55, 0x01, 0x00]
        for n in 1...2 {
            let (link, close) = try links.open()
            XCTAssertEqual(try link.transceive(select), [0x90, 0x00], "transaction \(n)")
            let resetsBefore = phone.resets
            close()
            // The field went off: the chip resets the card's session (on its queue: bounded wait).
            let deadline = Date(timeIntervalSinceNow: 5)
            while phone.resets == resetsBefore && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            XCTAssertGreaterThan(phone.resets, resetsBefore, "cycling the field after transaction \(n) reset the phone")
        }
        XCTAssertEqual(phone.commands, 2, "one SELECT per transaction, the phone never left the field")
    }

    func testOnlyAReaderWithAFieldCyclesIt() throws {
        let server = try SocketCredentialServer(host: "127.0.0.1", port: 0)
        defer { server.close() }
        let socket = SocketReader(configuration: .init(host: "127.0.0.1", port: server.port))
        let connected = try XCTUnwrap(try socket.waitForCard(timeout: 2), "the listening server is a card for the socket reader")
        defer { socket.finish(connected, granted: nil) }
        XCTAssertFalse(try socket.cycleField(connected), "no field on TCP: wait for the card to leave instead")
        let closed = LibNFCReader(connstring: "pn532_uart:/nonexistent")
        let card = LibNFCReader.Card(target: TargetInfo(uid: [1, 2, 3, 4], atqa: 0x0004, sak: 0x20, ats: []), link: connected.link)
        XCTAssertThrowsError(try closed.cycleField(card), "a reader that is not open refuses") { error in
            XCTAssertEqual((error as? NFCError)?.code, .closed, "\(error)")
        }
    }

    // MARK: The registry's parse: every form, every refusal

    func testTheRegistryParsesEveryForm() throws {
        XCTAssertEqual(try PhoneRadioSpec(parsing: "socket"), .socket(host: "127.0.0.1", port: 5000))
        XCTAssertEqual(try PhoneRadioSpec(parsing: "socket:6000"), .socket(host: "127.0.0.1", port: 6000))
        XCTAssertEqual(try PhoneRadioSpec(parsing: "socket:0.0.0.0:6000"), .socket(host: "0.0.0.0", port: 6000))
        XCTAssertEqual(try PhoneRadioSpec(parsing: "pn532"), .pn532(link: nil))
        XCTAssertEqual(try PhoneRadioSpec(parsing: "pn532:/tmp/lockbench-phone"), .pn532(link: "/tmp/lockbench-phone"))
        XCTAssertEqual(try PhoneRadioSpec(parsing: "vpicc"), .vpicc(host: "127.0.0.1", port: 35963))
        XCTAssertEqual(try PhoneRadioSpec(parsing: "vpicc:35964"), .vpicc(host: "127.0.0.1", port: 35964))
        XCTAssertEqual(try PhoneRadioSpec(parsing: "ble:tcp:127.0.0.1:9101"), .ble(transport: "tcp:127.0.0.1:9101"))
        for text in ["socket:127.0.0.1:6000", "pn532:/tmp/x", "vpicc:127.0.0.1:35964", "ble:hci0"] {
            XCTAssertEqual(try PhoneRadioSpec(parsing: text).description, text, "round trip")
        }
        XCTAssertEqual(try PhoneRadioSpec(parsing: "vpicc:35964").interface, .nfc)
        XCTAssertEqual(VirtualICCPhoneRadio(port: 35964).readerName, "Virtual PCD 00 01")
    }

    func testTheRegistryRefusesEachMalformedSpecNamingTheRule() {
        let cases: [(String, String)] = [
            ("usb", "unknown phone radio \"usb\""),
            ("", "unknown phone radio"),
            ("socket:70000", "is not 0…65535"),
            ("socket:a:b:c", "is not PORT or HOST:PORT"),
            ("socket::5000", "empty host"),
            ("pn532:", "names no link path"),
            ("ble", "needs a controller transport"),
            ("ble:", "needs a controller transport"),
            ("vpicc:port", "is not 0…65535"),
            (String(repeating: "x", count: 2000), "longer than 1024 bytes"),
        ]
        for (text, rule) in cases {
            XCTAssertThrowsError(try PhoneRadioSpec(parsing: text), text) { error in
                XCTAssertTrue("\(error)".contains(rule), "\(text.prefix(20)): \(error)")
            }
        }
    }

    func testTheEndWatcherEndsOnExchangeAndControlFlowOnly() {
        let select = TransactionEndWatcher(SimplePhone())
        _ = select.respond(to: [0x00, 0xA4, 0x04, 0x00, 0x00])
        XCTAssertEqual(select.tap, PhoneTap(commands: 1, ended: false))
        XCTAssertFalse(select.waitForEnd(timeout: 0.05, settle: 0))
        let exchange = TransactionEndWatcher(SimplePhone())
        _ = exchange.respond(to: [0x80, Instruction.exchange, 0x00, 0x00])
        XCTAssertTrue(exchange.waitForEnd(timeout: 1, settle: 0))
        let controlFlow = TransactionEndWatcher(SimplePhone())
        _ = controlFlow.respond(to: [0x80, Instruction.controlFlow, 0x00, 0x00])
        XCTAssertTrue(controlFlow.ended)
        _ = controlFlow.respond(to: [0x80])   // too short to carry an INS: counted, no trap
        XCTAssertEqual(controlFlow.commands, 2)
    }
}

/// Answers `90 00` to everything.
final class SimplePhone: APDUResponder, @unchecked Sendable {
    func respond(to command: [UInt8]) -> [UInt8] { [0x90, 0x00] }
    func reset() {}
}

/// Counts commands and session resets (the field dropping).
final class CountingPhone: APDUResponder, @unchecked Sendable {
    private let lock = NSLock()
    private var _commands = 0, _resets = 0
    var commands: Int { lock.withLock { _commands } }
    var resets: Int { lock.withLock { _resets } }
    func respond(to command: [UInt8]) -> [UInt8] { lock.withLock { _commands += 1 }; return [0x90, 0x00] }
    func reset() { lock.withLock { _resets += 1 } }
}
