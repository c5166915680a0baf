import ByteCore
import Foundation
import PhoneSeam
import SocketTransport

/// The phone on the socket transport (docs/protocol.md "Socket transport"): it listens, the
/// lock connects, one connection is one transaction (`credential serve`, `phone run --transport
/// socket`, `conformance reader --listen`).
public final class SocketPhoneRadio: PhoneRadio {
    public let server: SocketCredentialServer
    public let host: String
    public var spec: String { "socket:\(host):\(server.port)" }
    public var interface: RadioInterface { .socket }
    public var address: String { "\(host):\(server.port)" }

    /// Listens on host:port (port 0 picks a free one: see `address`).
    public init(host: String = "127.0.0.1", port: UInt16, framing: SocketFraming = .raw) throws(SocketError) {
        server = try SocketCredentialServer(host: host, port: port, framing: framing)
        self.host = host
    }

    /// Waits (at most `timeout`) for the lock to connect, then serves that connection to its end.
    public func present(_ phone: APDUResponder, timeout: TimeInterval, entered: () -> Void) throws -> PhoneTap {
        guard server.listener.fd >= 0 else { throw SocketError(.transport, "the phone's socket radio is closed") }
        entered()
        let ms = Int32(clamping: Int64((max(0, min(timeout, 86_400)) * 1000).rounded()))
        guard try server.listener.hasPendingConnection(timeoutMilliseconds: ms) else {
            guard server.listener.fd >= 0 else { throw SocketError(.transport, "the phone's socket radio is closed") }
            return PhoneTap(commands: 0, ended: false)
        }
        let commands = try server.serveOne(phone)
        return PhoneTap(commands: commands, ended: true)
    }

    public func close() { server.close() }
}
