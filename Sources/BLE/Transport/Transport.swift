import ByteCore
import Foundation
import Synchronization

/// The transport seam (STYLE 9; Zephyr's HCI driver API, Bumble's `open_transport`): whole H4
/// packets in and out. `receive` blocks; it throws `.transportClosed` at end of stream or after
/// `close()`.
/// Sendable: the host's reader thread receives while other threads send and close.
public protocol HCITransport: AnyObject, Sendable {
    func send(_ packet: H4Packet) throws(BLEError)
    func receive() throws(BLEError) -> H4Packet
    func close()
}

/// A `--ble` value: `hci0`/`hciN`, `uart:/dev/ttyACM0[:baud]`, `tcp:HOST:PORT`, `unix:PATH`.
public enum TransportSpec: Equatable, Sendable, CustomStringConvertible {
    case userChannel(index: UInt16)
    case uart(path: String, baud: Int)
    case tcp(host: String, port: UInt16)
    case unix(path: String)

    public static let defaultUARTBaud = 1_000_000

    public init(parsing text: String) throws(BLEError) {
        if text.hasPrefix("hci"), let n = UInt16(text.dropFirst(3)), n < 0xFFFF {
            self = .userChannel(index: n)
            return
        }
        guard let colon = text.firstIndex(of: ":") else {
            throw BLEError(.badTransportSpec, "unknown BLE transport '\(text)': use hci0, uart:/dev/ttyACM0:1000000, tcp:HOST:PORT or unix:PATH")
        }
        let scheme = String(text[..<colon])
        let spec = String(text[text.index(after: colon)...])
        switch scheme {
        case "uart", "serial":
            let parts = spec.split(separator: ":", omittingEmptySubsequences: false)
            guard let path = parts.first, !path.isEmpty, parts.count <= 2 else {
                throw BLEError(.badTransportSpec, "uart transport needs a device: uart:/dev/ttyACM0:1000000")
            }
            var baud = TransportSpec.defaultUARTBaud
            if parts.count == 2 {
                guard let b = Int(parts[1]), Syscalls.baudConstant(b) != nil else {
                    throw BLEError(.badTransportSpec, "unsupported UART speed '\(parts[1])': use one of \(Syscalls.supportedBauds.map(String.init).joined(separator: ", "))")
                }
                baud = b
            }
            self = .uart(path: String(path), baud: baud)
        case "tcp", "tcp-client":
            guard let portColon = spec.lastIndex(of: ":"),
                  let port = UInt16(spec[spec.index(after: portColon)...]), port > 0 else {
                throw BLEError(.badTransportSpec, "tcp transport needs HOST:PORT, e.g. tcp:127.0.0.1:9101")
            }
            var host = String(spec[..<portColon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            if host.isEmpty || host == "_" { host = "127.0.0.1" }
            self = .tcp(host: host, port: port)
        case "unix":
            guard !spec.isEmpty else { throw BLEError(.badTransportSpec, "unix transport needs a path: unix:/tmp/controller.sock") }
            self = .unix(path: spec)
        default:
            throw BLEError(.badTransportSpec, "unknown BLE transport scheme '\(scheme)': use hci0, uart:…, tcp:… or unix:…")
        }
    }

    public var description: String {
        switch self {
        case .userChannel(let i): return "hci\(i)"
        case .uart(let p, let b): return "uart:\(p):\(b)"
        case .tcp(let h, let p): return "tcp:\(h):\(p)"
        case .unix(let p): return "unix:\(p)"
        }
    }

    /// Opens the transport, optionally capturing everything to a btsnoop file.
    public func open(btsnoop: String? = nil) throws(BLEError) -> HCITransport {
        try open(capture: try btsnoop.map { path throws(BLEError) in try BTSnoopWriter(path: path) })
    }

    /// Opens the transport, capturing into an already open btsnoop writer (kept across reconnects).
    public func open(capture: BTSnoopWriter?) throws(BLEError) -> HCITransport {
        let base: HCITransport
        switch self {
        case .userChannel(let index):
            base = FileDescriptorTransport(fd: try Syscalls.openUserChannel(index: index), name: description)
        case .uart(let path, let baud):
            base = FileDescriptorTransport(fd: try Syscalls.openUART(path: path, baud: baud), name: description)
        case .tcp(let host, let port):
            base = FileDescriptorTransport(fd: try Syscalls.connectTCP(host: host, port: port), name: description)
        case .unix(let path):
            base = FileDescriptorTransport(fd: try Syscalls.connectUnix(path: path), name: description)
        }
        guard let capture else { return base }
        return BTSnoopTransport(wrapping: base, writer: capture)
    }
}

/// H4 over any byte-stream or packet file descriptor (TCP, unix socket, UART, user channel).
final class FileDescriptorTransport: HCITransport {
    private let fd: Int32
    let name: String
    /// The reader thread's decoder and buffer (one reader at a time; the lock is uncontended).
    private struct Reading {
        var decoder = H4Decoder()
        var buffer = [UInt8](repeating: 0, count: 4096)
    }
    private let reading = Mutex(Reading())
    /// Serialises writers so packets are not interleaved.
    private let writing = Mutex(())
    private struct Closing {
        var closed = false
        var descriptorClosed = false
    }
    private let closing = Mutex(Closing())

    init(fd: Int32, name: String) {
        self.fd = fd
        self.name = name
    }

    deinit { closeDescriptor() }

    private var isClosed: Bool { closing.withLock { $0.closed } }

    func send(_ packet: H4Packet) throws(BLEError) {
        let bytes = packet.encoded()
        try writing.withLock { _ throws(BLEError) in
            guard !isClosed else { throw BLEError(.transportClosed, "\(name): closed") }
            try Syscalls.writeAll(fd, bytes, name: name)
        }
    }

    func receive() throws(BLEError) -> H4Packet {
        try reading.withLock { r throws(BLEError) -> H4Packet in
            while true {
                if let packet = try r.decoder.next() { return packet }
                guard !isClosed else {
                    closeDescriptor()
                    throw BLEError(.transportClosed, "\(name): closed")
                }
                let n = try Syscalls.readAvailable(fd, into: &r.buffer, timeoutMilliseconds: 200, name: name)
                if n < 0 { continue }  // poll timeout: check for close
                if n == 0 { throw BLEError(.transportClosed, "\(name): the controller closed the connection") }
                r.decoder.feed(r.buffer[0..<n])
            }
        }
    }

    /// Marks the transport closed and wakes a blocked reader; the descriptor itself is closed
    /// by the reader (or at deinit) so its number cannot be reused under a poll in progress.
    func close() {
        let wasOpen: Bool = closing.withLock { c in
            defer { c.closed = true }
            return !c.closed
        }
        if wasOpen { Syscalls.shutdown(fd) }
    }

    private func closeDescriptor() {
        let mustClose: Bool = closing.withLock { c in
            defer { c.descriptorClosed = true }
            return !c.descriptorClosed
        }
        if mustClose { Syscalls.close(fd) }
    }
}
