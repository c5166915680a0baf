import ByteCore
import Foundation
import SocketTransport

/// One message of vsmartcard's vpicc protocol, which a virtual card speaks to the `vpcd` reader
/// driver inside pcscd over TCP (port 35963 for `Virtual PCD 00 00`, 35964 for `00 01`): a 2-byte
/// big-endian length, then that many bytes. One byte is a control command from the reader; more
/// is a command APDU (and, from the card, a response APDU or the ATR).
public enum VPICCMessage: Equatable, Sendable {
    case powerOff, powerOn, reset, getATR
    /// A control byte this side does not know (answered with nothing).
    case control(UInt8)
    case apdu([UInt8])

    public init(parsing payload: [UInt8]) {
        guard payload.count == 1 else { self = .apdu(payload); return }
        switch payload[0] {
        case 0x00: self = .powerOff
        case 0x01: self = .powerOn
        case 0x02: self = .reset
        case 0x04: self = .getATR
        default: self = .control(payload[0])
        }
    }

    /// The length-prefixed frame of `payload` (at most 65 535 bytes: longer is cut by the caller).
    public static func frame(_ payload: [UInt8]) -> [UInt8] {
        let n = min(payload.count, 0xFFFF)
        return UInt16(n).bigEndianBytes + payload.prefix(n)
    }
}

/// Incremental decoder for vpicc frames (a `FrameDecoder`): feed bytes as they come, take
/// payloads out (nil = need more).
public struct VPICCFrameDecoder: FrameDecoder, Sendable {
    public typealias Failure = Never
    private var buffer = FrameBuffer()
    public init() {}
    public mutating func feed<S: Sequence>(_ bytes: S) where S.Element == UInt8 { buffer.append(bytes) }
    public var buffered: Int { buffer.count }

    public mutating func next() -> [UInt8]? {
        guard buffer.count >= 2 else { return nil }
        let n = Int(buffer[0]) << 8 | Int(buffer[1])
        guard buffer.count >= 2 + n else { return nil }
        buffer.consume(2)
        return buffer.take(n)
    }
}

/// The ATR a contactless card shows through a PC/SC reader (PC/SC Part 3, §3.1.3.2.3): for an
/// ISO 14443-4 card, `3B 8n 80 01` + the ATS's historical bytes + TCK. With none, `3B 80 80 01 01`,
/// the ATR desk readers show for a phone in card emulation.
public enum ContactlessATR {
    public static func iso14443_4(historicalBytes: [UInt8] = []) -> [UInt8] {
        let h = Array(historicalBytes.prefix(15))
        let body: [UInt8] = [0x80 | UInt8(h.count), 0x80, 0x01] + h
        return [0x3B] + body + [body.reduce(0, ^)]
    }
}

/// A virtual card in a vpcd reader: connects to pcscd's vpcd port (the card is inserted), answers
/// the reader's control bytes and APDUs with `responder`, and is pulled with `remove()` (the
/// connection closes: pcscd reports the card gone). Runs on a thread of its own.
public final class VirtualICC: Sendable {
    public static let defaultPort: UInt16 = 35963
    public let responder: APDUResponder
    public let atr: [UInt8]
    private struct Link {
        var socket: TCPSocket?
        var removing = false
        var serving = false
        var commands = 0
        var onCommand: (@Sendable ([UInt8]) -> Void)?
    }
    private let link = Monitor(Link())
    /// Called with every command APDU before it is answered (on the card's thread).
    public var onCommand: (@Sendable ([UInt8]) -> Void)? {
        get { link.withLock { $0.onCommand } }
        set { link.withLock { $0.onCommand = newValue } }
    }

    public init(responder: APDUResponder, atr: [UInt8] = ContactlessATR.iso14443_4()) {
        self.responder = responder
        self.atr = atr
    }

    /// Command APDUs answered since the card was created.
    public var commands: Int { link.withLock { $0.commands } }

    /// True while the card is connected to the reader.
    public var isInserted: Bool { link.withLock { $0.serving } }

    /// Connects to vpcd at host:port and serves until `remove()` or until the reader closes.
    public func insert(host: String = "127.0.0.1", port: UInt16 = defaultPort) throws(SocketError) {
        let socket = try TCPSocket.connect(host: host, port: port)
        link.withLock { l in
            l.socket = socket
            l.removing = false
            l.serving = true
        }
        responder.reset()
        let thread = Thread { [self] in self.serve(socket) }
        thread.name = "vpicc"
        thread.start()
    }

    /// Pulls the card: the connection closes, pcscd reports the reader empty. Blocks until the
    /// card's thread has stopped unless `wait` is false (from `onCommand`, on the card's own
    /// thread: the command is then left unanswered, as when a card leaves mid-exchange); idempotent.
    public func remove(wait: Bool = true) {
        link.withLock { $0.removing = true }
        if wait { link.wait(until: nil, for: { !$0.serving }) { _, _ in } }
    }

    /// Blocks until the reader closed the connection or `remove()` was called (or `timeout` passed).
    @discardableResult
    public func waitUntilRemoved(timeout: TimeInterval) -> Bool {
        link.wait(until: Date().addingTimeInterval(timeout), for: { !$0.serving }) { _, removed in removed }
    }

    private var isRemoving: Bool { link.withLock { $0.removing } }

    private func serve(_ socket: TCPSocket) {
        defer {
            socket.close()
            responder.reset()
            link.withLock { l in
                l.serving = false
                l.socket = nil
            }
        }
        var decoder = VPICCFrameDecoder()
        while !isRemoving {
            let received: [UInt8]?
            do { received = try socket.receive(timeoutMilliseconds: 50) } catch { return }
            guard let bytes = received else { continue }  // timeout: look at `removing` again
            socket.acknowledgeQuickly()
            if bytes.isEmpty { return }  // the reader closed (pcscd stopped)
            decoder.feed(bytes)
            while let payload = decoder.next() {
                guard !isRemoving else { return }
                let answer: [UInt8]?
                switch VPICCMessage(parsing: payload) {
                case .powerOff, .powerOn, .reset:
                    responder.reset()
                    answer = nil
                case .getATR:
                    answer = atr
                case .control:
                    answer = nil
                case .apdu(let command):
                    onCommand?(command)  // outside the lock: it may call `remove(wait: false)`
                    guard !isRemoving else { return }  // pulled while the reader waits for the answer
                    let response = responder.respond(to: command)
                    guard !isRemoving else { return }  // pulled while answering: the answer never leaves
                    answer = response
                    link.withLock { $0.commands += 1 }
                }
                if let answer, (try? socket.sendAll(VPICCMessage.frame(answer))) == nil { return }
            }
        }
    }
}
