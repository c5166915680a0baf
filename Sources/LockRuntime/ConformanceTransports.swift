import AccessProtocol
import BLE
import ByteCore
import Conformance
import Foundation
import NFC
import VirtualPN532

/// The radios under `lockbench conformance`: fresh links to a phone under test (LockBench the
/// reader), and presenters that put a LockBench phone in front of a reader under test.
public enum ConformanceTransports {
    /// A phone listening on TCP (`--connect HOST:PORT`): one connection per transaction.
    public static func socketOpener(host: String, port: UInt16, timeoutMilliseconds: Int32 = 5000) -> LinkOpener {
        {
            let link = try SocketTransceiver(host: host, port: port, timeoutMilliseconds: timeoutMilliseconds)
            return (link, { link.close() })
        }
    }
}

/// A phone on a libnfc reader (`--nfc CONNSTRING`): the device stays open; each transaction
/// re-selects the card, as a new tap would.
public final class NFCCardLinks {
    private let context: NFCContext
    private let device: NFCDevice
    public let connstring: String
    public var waitForCard: TimeInterval = 10

    public init(connstring: String) throws(NFCError) {
        context = try NFCContext()
        device = try context.open(connstring)
        try device.initiatorInit()
        self.connstring = connstring
    }

    public func open() throws -> (link: APDUTransceiver, close: () -> Void) {
        let deadline = Date(timeIntervalSinceNow: waitForCard)
        while true {
            if let target = try device.selectISO14443A(), target.isISODEP {
                return (device.link(target, timeout: 3000), { [device] in try? device.deselect(); try? device.cycleField() })
            }
            guard Date() < deadline else { throw NFCError(.io, "no ISO-DEP card in the field of \(connstring) within \(Int(waitForCard)) s") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    public func close() { device.close() }
}

/// A phone over BLE (`--ble TRANSPORT`): LockBench advertises as a lock; each transaction is
/// one connection of the phone under test, handed to the check that asks next.
public final class BLECentralLinks {
    public let lock: BLELock
    private let condition = NSCondition()
    private var waiting: [BLEReaderSession] = []
    private var released = Set<ObjectIdentifier>()
    public var waitForPhone: TimeInterval = 30

    public init(transport: String, identity: ReaderIdentity, btsnoop: String? = nil) throws {
        var config = BLELock.Configuration(transport: try TransportSpec(parsing: transport))
        config.btsnoop = btsnoop
        config.advertisement.groupID = identity.groupID
        config.advertisement.subID = identity.subID
        config.responseTimeout = 5
        // The lock's closure reaches back to this object weakly (the lock is owned by it).
        weak var me: BLECentralLinks?
        lock = try BLELock(configuration: config) { session in me?.serve(session) }
        me = self
        lock.start()
        guard lock.waitUntilAdvertising(timeout: 15) else { throw BLEError(.timeout, "the BLE controller at \(transport) did not come up") }
    }

    /// On the lock's channel thread: hand the session over, hold it until the check is done.
    private func serve(_ session: BLEReaderSession) {
        condition.lock()
        waiting.append(session)
        condition.broadcast()
        let id = ObjectIdentifier(session)
        let deadline = Date(timeIntervalSinceNow: 120)
        while !released.contains(id), condition.wait(until: deadline) {}
        released.remove(id)
        condition.unlock()
    }

    public func open() throws -> (link: APDUTransceiver, close: () -> Void) {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: waitForPhone)
        while waiting.isEmpty {
            guard condition.wait(until: deadline) else { throw BLEError(.timeout, "no phone opened the access channel within \(Int(waitForPhone)) s") }
        }
        let session = waiting.removeFirst()
        return (session, { [weak self] in
            guard let self else { return }
            self.condition.lock(); self.released.insert(ObjectIdentifier(session)); self.condition.broadcast(); self.condition.unlock()
        })
    }

    public func stop() { lock.stop() }
}

/// Presents the phone on TCP (`--listen PORT`): the reader under test connects once per check.
public final class SocketPhonePresenter: PhonePresenter {
    public let server: SocketCredentialServer
    public init(host: String, port: UInt16) throws { server = try SocketCredentialServer(host: host, port: port) }
    public var description: String { "socket 127.0.0.1:\(server.port)" }
    public func present(_ phone: ObservingPhone) throws { try server.serveOne(phone) }
}

/// Presents the phone as a card in a virtual PN532 (`--nfc virtual[:LINK]`) that the reader
/// under test drives through libnfc: in the field until the reader ends the transaction.
public final class VirtualNFCPhonePresenter: PhonePresenter {
    public let reader: VirtualReader
    public var timeout: TimeInterval = 15
    public init(link: String?) throws { reader = try VirtualReader(link: link) }
    public var description: String { "nfc \(reader.connstring)" }

    /// Waits for the reader under test to open the virtual PN532.
    public func waitForReader(timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !reader.hasSession { if Date() > deadline { return false }; Thread.sleep(forTimeInterval: 0.05) }
        return true
    }

    public func present(_ phone: ObservingPhone) throws {
        try reader.insert(phone)
        let ended = phone.waitUntilEnded(timeout: timeout)
        reader.remove()
        Thread.sleep(forTimeInterval: 0.3)  // let the reader see the card leave before the next tap
        if !ended && phone.observation.commands.isEmpty { throw PN532Error(.timeout, "the reader did not talk to the card within \(Int(timeout)) s") }
    }

    public func stop() { reader.stop() }
}

/// Presents the phone over BLE (`--ble TRANSPORT`): scans for the lock and connects, once per check.
public final class BLEPhonePresenter: PhonePresenter {
    public let phone: BLEPhone
    let spec: String
    public init(transport: String, btsnoop: String? = nil) throws {
        var config = BLEPhone.Configuration(transport: try TransportSpec(parsing: transport))
        config.btsnoop = btsnoop
        config.scanTimeout = 10
        phone = try BLEPhone(configuration: config)
        spec = transport
        try phone.start()
    }
    public var description: String { "ble \(spec)" }
    public func present(_ observing: ObservingPhone) throws { _ = try phone.unlock(with: observing) }
    public func stop() { phone.stop() }
}
