import AccessProtocol
import ByteCore
import Foundation
import SocketTransport
import LockRuntime
import PhoneRadios
import PhoneSeam
import TrustPhone

/// How a phone meets a lock in a scenario: the real transports, the lock's real `LockService`.
public protocol TapTransport: AnyObject, Sendable {
    var name: String { get }
    /// The interface the phone announces (AUTH1's interface byte).
    var interface: RadioInterface { get }
    /// One tap: the phone answers every APDU the lock sends; returns the lock's outcome.
    func tap(_ phone: PhoneResponder, on lock: LockService) throws -> TransactionOutcome
    func close()
}

/// The socket transport (docs/protocol.md): the phone listens on a loopback port through the
/// registry's socket radio, as `credential serve` does; the lock connects as `lock transact` does.
public final class SocketTap: TapTransport, Sendable {
    public let name = "socket"
    public let interface = RadioInterface.socket
    /// How long the phone waits for the lock's connection.
    public let timeout: TimeInterval
    public init(timeout: TimeInterval = 30) { self.timeout = timeout }

    public func tap(_ phone: PhoneResponder, on lock: LockService) throws -> TransactionOutcome {
        guard let radio = try PhoneRadioSpec.socket(host: "127.0.0.1", port: 0).radio() as? SocketPhoneRadio else {
            throw SocketError(.transport, "the registry's socket radio is not a SocketPhoneRadio")
        }
        defer { radio.close() }
        // The phone answers on a thread of its own (its socket reads block) while this thread
        // drives the lock; the tap ends when both have, or the phone's deadline has passed.
        let phoneDone = Monitor(false)
        let timeout = self.timeout
        Thread.detachNewThread {
            _ = try? radio.present(phone, timeout: timeout)
            phoneDone.withLock { $0 = true }
        }
        let link = try SocketTransceiver(host: radio.host, port: radio.server.port)
        let outcome = lock.transact(over: link, interface: .socket)
        link.close()
        phoneDone.wait(until: Date().addingTimeInterval(timeout + 5), for: { $0 }) { _, _ in }
        return outcome
    }

    public func close() {}
}

/// No radio: the lock's APDUs are handed to the phone in memory. For many taps in one process
/// (`lockbench fleet`), where what is measured is the protocol, the decision and its journal.
public final class MemoryTap: TapTransport, Sendable {
    public let name = "memory"
    public let interface = RadioInterface.socket
    public init() {}

    public func tap(_ phone: PhoneResponder, on lock: LockService) throws -> TransactionOutcome {
        phone.reset()
        defer { phone.reset() }     // a new session next time; the FAST keys learnt are kept
        return lock.transact(over: Link(phone), interface: interface)
    }

    public func close() {}

    final class Link: APDUTransceiver {
        let phone: PhoneResponder
        init(_ phone: PhoneResponder) { self.phone = phone }
        func transceive(_ command: [UInt8]) throws -> [UInt8] { phone.respond(to: command) }
    }
}
