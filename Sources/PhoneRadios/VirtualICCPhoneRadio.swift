import ByteCore
import Foundation
import PCSC
import PhoneSeam

/// The phone as a card in pcscd's virtual reader (vsmartcard's vpcd): each presentation
/// connects to vpcd (the card is inserted into "Virtual PCD 00 00" for port 35963, "… 00 01" for
/// 35964), answers until the lock ended the transaction, and is pulled (`credential serve --vpicc`).
public final class VirtualICCPhoneRadio: PhoneRadio {
    public let host: String
    public let port: UInt16

    public init(host: String = "127.0.0.1", port: UInt16 = VirtualICC.defaultPort) {
        self.host = host
        self.port = port
    }

    public var spec: String { "vpicc:\(host):\(port)" }
    public var interface: RadioInterface { .nfc }
    public var address: String { "\(host):\(port)" }
    /// The PC/SC reader name vpcd gives this port (its default numbering), for the lock's `pcsc:NAME`.
    public var readerName: String { "Virtual PCD 00 \(String(format: "%02d", Int(port) - Int(VirtualICC.defaultPort)))" }

    public func present(_ phone: APDUResponder, timeout: TimeInterval, entered: () -> Void) throws -> PhoneTap {
        let watcher = TransactionEndWatcher(phone)
        let card = VirtualICC(responder: watcher)
        try card.insert(host: host, port: port)
        entered()
        defer { card.remove() }
        _ = watcher.waitForEnd(timeout: timeout)
        return watcher.tap
    }

    public func close() {}
}
