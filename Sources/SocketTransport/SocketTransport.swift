import ByteCore

import Dispatch

/// Reads whole APDUs from a socket with a decoder and a deadline.
struct APDUStream {
    let socket: TCPSocket
    var decoder: APDUStreamDecoder
    let quietMilliseconds: Int32

    /// The next APDU; nil at a clean end of stream (no partial bytes buffered).
    mutating func next(timeoutMilliseconds: Int32) throws(SocketError) -> [UInt8]? {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(timeoutMilliseconds, 0)) * 1_000_000
        while true {
            if let frame = try decoder.next() {
                guard decoder.framing == .raw, quietMilliseconds > 0 else { return frame }
                // Raw mode with a quiet window: more bytes within it belong to the same APDU.
                var whole = frame
                while let more = try socket.receive(timeoutMilliseconds: quietMilliseconds), !more.isEmpty { whole += more }
                return whole
            }
            let remaining: Int32
            if timeoutMilliseconds < 0 {
                remaining = -1
            } else {
                let now = DispatchTime.now().uptimeNanoseconds
                guard now < deadline else { throw SocketError(.transport, "timed out waiting for an APDU") }
                remaining = Int32((deadline - now) / 1_000_000) + 1
            }
            guard let bytes = try socket.receive(timeoutMilliseconds: remaining) else {
                throw SocketError(.transport, "timed out waiting for an APDU")
            }
            if bytes.isEmpty {
                if decoder.buffered == 0 { return nil }
                throw SocketError(.transport, "connection closed inside an APDU (\(decoder.buffered) bytes buffered)")
            }
            decoder.feed(bytes)
        }
    }
}

/// The lock side of the socket transport: connects to a listening credential and carries one
/// transaction's APDUs (an `APDUTransceiver`, like the NFC and BLE readers).
public final class SocketTransceiver: APDUTransceiver {
    private let socket: TCPSocket
    private var stream: APDUStream
    public let framing: SocketFraming
    public var timeoutMilliseconds: Int32

    public init(host: String, port: UInt16, framing: SocketFraming = .raw, timeoutMilliseconds: Int32 = 5000,
                quietMilliseconds: Int32 = 0) throws(SocketError) {
        socket = try TCPSocket.connect(host: host, port: port)
        self.framing = framing
        self.timeoutMilliseconds = timeoutMilliseconds
        stream = APDUStream(socket: socket, decoder: APDUStreamDecoder(framing: framing, kind: .response),
                            quietMilliseconds: quietMilliseconds)
    }

    public func transceive(_ command: [UInt8]) throws -> [UInt8] {
        try socket.sendAll(APDUStreamDecoder.frame(command, framing))
        guard let response = try stream.next(timeoutMilliseconds: timeoutMilliseconds) else {
            throw SocketError(.transport, "the credential closed the connection")
        }
        return response
    }

    /// Ends the transaction (the credential sees end of stream).
    public func close() { socket.close() }
}

/// The credential side of the socket transport: listens (port 5000 by default), and for each
/// connection resets the responder and answers every command APDU until the lock closes.
/// One transaction per connection.
public final class SocketCredentialServer: Sendable {
    public let listener: TCPSocket
    public let framing: SocketFraming
    public let quietMilliseconds: Int32
    /// How long to wait for the next command on an open connection.
    public let idleTimeoutMilliseconds: Int32 = 30_000

    public static let defaultPort: UInt16 = 5000

    public init(host: String = "127.0.0.1", port: UInt16 = defaultPort, framing: SocketFraming = .raw,
                quietMilliseconds: Int32 = 0) throws(SocketError) {
        listener = try TCPSocket.listen(host: host, port: port)
        self.framing = framing
        self.quietMilliseconds = quietMilliseconds
    }

    public var port: UInt16 { listener.localPort }

    /// Accepts one connection and serves it to the end; returns the number of commands answered.
    @discardableResult
    public func serveOne(_ responder: APDUResponder, log: ((_ command: [UInt8], _ response: [UInt8]) -> Void)? = nil) throws(SocketError) -> Int {
        let connection = try listener.accept()
        defer { connection.close() }
        responder.reset()
        defer { responder.reset() }
        var stream = APDUStream(socket: connection, decoder: APDUStreamDecoder(framing: framing, kind: .command),
                                quietMilliseconds: quietMilliseconds)
        var count = 0
        while true {
            let command: [UInt8]
            do {
                guard let c = try stream.next(timeoutMilliseconds: idleTimeoutMilliseconds) else { return count }
                command = c
            } catch {
                return count  // the lock went away or stalled: the transaction is over
            }
            let response = responder.respond(to: command)
            log?(command, response)
            count += 1
            do { try connection.sendAll(APDUStreamDecoder.frame(response, framing)) } catch { return count }
        }
    }

    /// Serves connections one after another, forever (or `limit` times).
    public func serve(_ responder: APDUResponder, limit: Int? = nil,
                      log: ((_ command: [UInt8], _ response: [UInt8]) -> Void)? = nil) throws(SocketError) {
        var served = 0
        while limit.map({ served < $0 }) ?? true {
            try serveOne(responder, log: log)
            served += 1
        }
    }

    public func close() { listener.close() }
}
