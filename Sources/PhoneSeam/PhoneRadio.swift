import ByteCore
import Foundation

/// The seam every radio implements on the phone's side, twin of the lock's `CardReader`: put a
/// phone (an `APDUResponder`, the phone's credential session) where a lock can reach it for one
/// transaction. The TCP socket, a virtual PN532 that libnfc drives, a card in pcscd's virtual
/// reader (vpicc) and a BLE central are each one `PhoneRadio`; `PhoneRadioSpec` names them, so
/// `credential serve`, `phone run`, scenarios and `conformance reader` wire none themselves.
///
/// A radio is ready once made (listening, its pty open, its controller up) and says where a
/// lock finds it (`address`). `present` is bounded by its `timeout`; presentations do not overlap.
public protocol PhoneRadio: AnyObject, Sendable {
    /// What the radio is, in the registry's words (`socket:127.0.0.1:5000`, `pn532:/tmp/r`).
    var spec: String { get }
    /// The interface the phone announces (AUTH1's interface byte) on this radio.
    var interface: RadioInterface { get }
    /// Where a lock finds the phone: the listening address, the connstring, the vpcd address…
    var address: String { get }
    /// One transaction: the phone enters the lock's reach (`entered` is called once it is there),
    /// answers until the lock ends the transaction or `timeout` passes, then leaves.
    /// Throws when the radio failed (not when the lock merely said nothing: see `PhoneTap`).
    func present(_ phone: APDUResponder, timeout: TimeInterval, entered: () -> Void) throws -> PhoneTap
    /// Waits (at most `timeout`) until a lock is there to be presented to — a reader that opened
    /// the virtual PN532; true at once for radios where the lock comes with each presentation.
    func waitForLock(timeout: TimeInterval) -> Bool
    /// Releases the radio; no `present` follows.
    func close()
}

extension PhoneRadio {
    public func present(_ phone: APDUResponder, timeout: TimeInterval) throws -> PhoneTap {
        try present(phone, timeout: timeout, entered: {})
    }
    public func waitForLock(timeout: TimeInterval) -> Bool { true }
}
