import AccessProtocol
import BLE
import ByteCore
import Conformance
import Foundation
import NFC
import ReaderSeam
import SocketTransport
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

/// A phone reached through a `CardReader` (the seam under the lock's loop): each transaction
/// takes the next card, and when it ends tells the card (`finish`) and lets it go. (NFC keeps
/// `NFCCardLinks`: a phone left in the field is re-tapped by cycling the field, an operation the
/// seam does not have. BLE drives the channel frame by frame: `BLEPhoneUnderTest`.)
public final class CardReaderLinks<Reader: CardReader> {
    public let reader: Reader
    public var waitForCard: TimeInterval = 30
    public var waitForRemoval: TimeInterval = 2

    public init(_ reader: Reader) throws {
        self.reader = reader
        _ = try reader.open()
    }

    public func open() throws -> (link: APDUTransceiver, close: () -> Void) {
        guard let card = try reader.waitForCard(timeout: waitForCard) else {
            throw ConformanceTransportError("no phone came to \(reader.spec) within \(Int(waitForCard)) s")
        }
        return (card.link, { [reader, waitForRemoval] in
            reader.finish(card, granted: nil)
            _ = try? reader.waitForRemoval(card, timeout: waitForRemoval)
        })
    }
}

/// A transport that could not produce a phone.
public struct ConformanceTransportError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
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
