import ByteCore
import Foundation
import PhoneSeam
@preconcurrency import VirtualPN532
import Synchronization

/// The phone as a card in a virtual PN532's field, on a pty that a lock opens through libnfc
/// (`pn532_uart:LINK`): `phone run --transport pn532`, `conformance reader --nfc virtual`,
/// scenarios over pn532. Each presentation is a new entry into the field with a new UID, so the
/// lock sees a new card; the card leaves once the lock ended the transaction.
public final class VirtualPN532PhoneRadio: PhoneRadio {
    /// The chip: wrapped as it is (its own threads and locks), never driven around.
    public let reader: VirtualReader
    /// The UID's first six bytes; the last one counts entries.
    public let uidPrefix: [UInt8]
    private let entries = Mutex<UInt8>(0)
    /// Pause after the card left, so that the lock sees it gone before the next entry.
    public let leavePause: TimeInterval

    public init(link: String? = nil, uidPrefix: [UInt8] = [0x08, 0x50, 0x48, 0x4F, 0x4E, 0x45], leavePause: TimeInterval = 0.3) throws(PN532Error) {
        reader = try VirtualReader(link: link)
        self.uidPrefix = Array(uidPrefix.prefix(6))
        self.leavePause = max(0, min(leavePause, 5))
    }

    public var spec: String { reader.linkPath.map { "pn532:\($0)" } ?? "pn532" }
    public var interface: RadioInterface { .nfc }
    /// The libnfc connstring the lock opens.
    public var address: String { reader.connstring }

    public func present(_ phone: APDUResponder, timeout: TimeInterval, entered: () -> Void) throws -> PhoneTap {
        let watcher = TransactionEndWatcher(phone)
        try enter(watcher)
        entered()
        defer { leave() }
        _ = watcher.waitForEnd(timeout: timeout)
        return watcher.tap
    }

    /// The phone enters the field (a new UID each time) and stays until `leave()`:
    /// `phone run`'s `insert`.
    public func enter(_ phone: APDUResponder) throws(PN532Error) {
        let n = entries.withLock { $0 &+= 1; return $0 }
        try reader.insert(phone, uid: uidPrefix + [n])
    }

    /// The phone leaves the field: `phone run`'s `remove`.
    public func leave() {
        reader.remove()
        if leavePause > 0 { Thread.sleep(forTimeInterval: leavePause) }
    }

    /// True once a lock opened the virtual PN532 (libnfc's session), within `timeout`.
    public func waitForLock(timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: max(0, timeout))
        while !reader.hasSession {
            if Date() > deadline { return false }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return true
    }

    public func close() { reader.stop() }
}
