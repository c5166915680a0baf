import AccessProtocol
import ByteCore
import Foundation
import SocketTransport
import LockRuntime
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

/// The socket transport (docs/protocol.md): the phone listens on a loopback port as
/// `credential serve` does, the lock connects as `lock transact` does.
public final class SocketTap: TapTransport, @unchecked Sendable {
    public let name = "socket"
    public let interface = RadioInterface.socket
    public init() {}

    public func tap(_ phone: PhoneResponder, on lock: LockService) throws -> TransactionOutcome {
        let server = try SocketCredentialServer(host: "127.0.0.1", port: 0)
        defer { server.close() }
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? server.serveOne(phone)
            done.signal()
        }
        let link = try SocketTransceiver(host: "127.0.0.1", port: server.port)
        let outcome = lock.transact(over: link, interface: .socket)
        link.close()
        done.wait()
        return outcome
    }

    public func close() {}
}

/// No radio: the lock's APDUs are handed to the phone in memory. For many taps in one process
/// (`lockbench fleet`), where what is measured is the protocol, the decision and its journal.
public final class MemoryTap: TapTransport, @unchecked Sendable {
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
