@preconcurrency import BLE
import ByteCore
import Foundation
import PhoneSeam

/// The phone as a BLE central on an HCI controller (`tcp:HOST:PORT` for Bumble's virtual
/// controllers, `hci0`…): each presentation scans for the lock, connects, runs the transaction
/// over the L2CAP channel and disconnects. The one `BLEPhone` stays up between presentations;
/// frame-level conformance checks drive it directly (`phone`).
public final class BLEPhoneRadio: PhoneRadio {
    /// The central: wrapped as it is (its host runs its own threads), never driven around.
    public let phone: BLEPhone
    public let transport: String

    /// Starts the central on `transport`; throws when its controller does not answer.
    public init(transport: String, btsnoop: String? = nil, scanTimeout: TimeInterval = 10) throws(BLEError) {
        var config = BLEPhone.Configuration(transport: try TransportSpec(parsing: transport))
        config.btsnoop = btsnoop
        config.scanTimeout = max(0.1, min(scanTimeout, 600))
        phone = try BLEPhone(configuration: config)
        self.transport = transport
        try phone.start()
    }

    public var spec: String { "ble:\(transport)" }
    public var interface: RadioInterface { .ble }
    public var address: String { transport }

    /// Bounded by the central's own timeouts (the scan: `scanTimeout`; connect and each response: 5 s).
    public func present(_ phone: APDUResponder, timeout: TimeInterval, entered: () -> Void) throws -> PhoneTap {
        entered()
        let outcome = try self.phone.unlock(with: phone)
        return PhoneTap(commands: outcome.commandsAnswered, ended: true, granted: outcome.granted)
    }

    public func close() { phone.stop() }
}
