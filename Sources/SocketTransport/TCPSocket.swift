#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ByteCore
import Synchronization

/// The one file that calls the C socket API: a blocking IPv4 TCP socket with timeouts.
/// Every failure names the call and errno. Sendable: the descriptor is atomic, so `close` from
/// another thread (how a server or a pulled card stops a blocked reader) closes it exactly once.
public final class TCPSocket: Sendable {
    private let descriptor: Atomic<Int32>
    /// The descriptor, or -1 once closed.
    public var fd: Int32 { descriptor.load(ordering: .acquiring) }

    init(fd: Int32) { descriptor = Atomic(fd) }

    deinit { close() }

    public func close() {
        let old = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        if old >= 0 { _ = Glibc.close(old) }
    }

    static func error(_ call: String) -> SocketError {
        SocketError(.transport, "\(call): \(String(cString: strerror(errno))) (errno \(errno))")
    }

    static func address(host: String, port: UInt16) throws(SocketError) -> sockaddr_in {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        let name = host == "localhost" ? "127.0.0.1" : host
        guard inet_pton(AF_INET, name, &addr.sin_addr) == 1 else {
            throw SocketError(.transport, "inet_pton: \(host) is not an IPv4 address")
        }
        return addr
    }

    /// Connects to host:port (IPv4 dotted quad or "localhost").
    public static func connect(host: String, port: UInt16) throws(SocketError) -> TCPSocket {
        var addr = try address(host: host, port: port)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw error("socket") }
        let s = TCPSocket(fd: fd)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { throw error("connect \(host):\(port)") }
        s.setNoDelay()
        return s
    }

    /// Listens on host:port; port 0 picks a free port (see `localPort`).
    public static func listen(host: String = "127.0.0.1", port: UInt16) throws(SocketError) -> TCPSocket {
        var addr = try address(host: host, port: port)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw error("socket") }
        let s = TCPSocket(fd: fd)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { throw error("bind \(host):\(port)") }
        guard Glibc.listen(fd, 8) == 0 else { throw error("listen") }
        return s
    }

    public var localPort: UInt16 {
        var addr = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        return UInt16(bigEndian: addr.sin_port)
    }

    public func accept() throws(SocketError) -> TCPSocket {
        while true {
            let c = Glibc.accept(fd, nil, nil)
            if c >= 0 {
                let s = TCPSocket(fd: c)
                s.setNoDelay()
                return s
            }
            if errno == EINTR { continue }
            throw TCPSocket.error("accept")
        }
    }

    /// True once a connection is waiting to be accepted (a listening socket), false after
    /// `timeoutMilliseconds`: lets a server bound its wait for a peer that may never come.
    public func hasPendingConnection(timeoutMilliseconds: Int32) throws(SocketError) -> Bool {
        try isReadable(within: timeoutMilliseconds)
    }

    /// `poll` for input (a connection to accept, bytes, or the end of the stream) up to
    /// `timeoutMilliseconds` (-1: forever); false on timeout.
    private func isReadable(within timeoutMilliseconds: Int32) throws(SocketError) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let r = poll(&p, 1, timeoutMilliseconds)
            if r < 0 {
                if errno == EINTR { continue }
                throw TCPSocket.error("poll")
            }
            return r > 0
        }
    }

    /// Acknowledges at once instead of delaying the ACK (Linux TCP_QUICKACK; the kernel clears it
    /// again, so call it after each receive). A peer that writes one message in two sends without
    /// TCP_NODELAY (vpcd: length, then body) otherwise waits out Nagle against our delayed ACK, ~40 ms.
    public func acknowledgeQuickly() {
        #if os(Linux)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    private func setNoDelay() {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Writes all bytes in one `send` where the kernel allows (one APDU per write).
    public func sendAll(_ bytes: [UInt8]) throws(SocketError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw TCPSocket.error("send")
            }
            offset += n
        }
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) for bytes; returns what one `recv` gives,
    /// an empty array at end of stream, nil on timeout.
    public func receive(timeoutMilliseconds: Int32) throws(SocketError) -> [UInt8]? {
        guard try isReadable(within: timeoutMilliseconds) else { return nil }
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == ECONNRESET { return [] }
                throw TCPSocket.error("recv")
            }
            return Array(buf.prefix(n))
        }
    }
}
