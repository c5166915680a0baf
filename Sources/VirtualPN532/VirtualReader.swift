import ByteCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A virtual PN532 on a pseudo-terminal that libnfc's own `pn532_uart` driver opens as a real
/// chip (`pn532_uart:/dev/pts/N`), with a virtual RF field holding at most one ISO-DEP card.
///
///     let reader = try VirtualReader(card: myCredential)      // or nil: an empty field
///     print(reader.connstring)                                 // pn532_uart:/dev/pts/7
///     reader.remove(); try reader.insert(otherCredential)      // any thread, while it runs
///     reader.stop()
///
/// Layers: `PseudoTerminal` moves bytes, `PN532FrameDecoder`/`PN532Wire` frame them,
/// `PN532Chip` answers commands over the `VirtualField`. One I/O thread serves one client
/// session at a time (the slave is put in exclusive mode between SAMConfiguration and PowerDown).
/// The I/O thread keeps the reader alive until `stop()`: always call it. The chip is made on that
/// thread and lives there; everything else here is reached from any thread.
public final class VirtualReader: Sendable {
    /// The pty slave, e.g. `/dev/pts/7`.
    public let devicePath: String
    /// The stable symlink to `devicePath`, when one was asked for.
    public let linkPath: String?
    /// What libnfc opens: `pn532_uart:<link or device path>`.
    public var connstring: String { "pn532_uart:\(linkPath ?? devicePath)" }

    private let pty: PseudoTerminal
    private let field: VirtualField
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private struct State {
        var stopped = false
        var sessionOpen = false
        var statsCommands = 0
        var statsSessions = 0
        var sessionIdleTimeout: TimeInterval = 5
        var rawFrames: [[UInt8]] = []
    }
    private let state = Mutex(State())
    /// Set by the I/O thread as it ends.
    private let finished = Monitor(false)
    private let log: @Sendable (String) -> Void

    /// Idle time after which a session with no traffic is considered over (its client died
    /// without PowerDown), so the next client may open the slave.
    public var sessionIdleTimeout: TimeInterval {
        get { state.withLock { $0.sessionIdleTimeout } }
        set { state.withLock { $0.sessionIdleTimeout = newValue } }
    }

    /// Starts the reader on a fresh pty. `card`: a responder to place in the field at once.
    public init(card: APDUResponder? = nil, uid: [UInt8] = VirtualCard.defaultUID, link: String? = nil,
                log: (@Sendable (String) -> Void)? = nil) throws(PN532Error) {
        self.log = log ?? { _ in }
        pty = try PseudoTerminal(link: link)
        devicePath = pty.path
        linkPath = pty.link
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw PN532Error(.ptyUnavailable, "pipe failed: \(PseudoTerminal.errnoText())") }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        _ = fcntl(wakeRead, F_SETFL, fcntl(wakeRead, F_GETFL) | O_NONBLOCK)
        _ = fcntl(wakeWrite, F_SETFL, fcntl(wakeWrite, F_GETFL) | O_NONBLOCK)
        field = VirtualField(onChange: { [wakeWrite] in Self.poke(wakeWrite) })
        if let card { field.place(try VirtualCard(responder: card, uid: uid)) }
        let thread = Thread { [self] in self.run() }
        thread.name = "virtual-pn532"
        thread.start()
    }

    deinit { stop() }

    // MARK: The field

    /// Places `card` in the field, replacing any card there (which then leaves the field).
    public func insert(_ card: VirtualCard) { field.place(card) }

    /// Places an ISO-DEP card answering with `responder` in the field.
    public func insert(_ responder: APDUResponder, uid: [UInt8] = VirtualCard.defaultUID) throws(PN532Error) {
        field.place(try VirtualCard(responder: responder, uid: uid))
    }

    /// Takes the card out of the field; a transaction in flight fails with a timeout status.
    public func remove() { field.place(nil) }

    /// The card in the field, if any.
    public var card: VirtualCard? { field.snapshot.card }

    /// Target mode: an external reader taps the chip (which libnfc runs as a card with
    /// `nfc_target_init`); APDUs sent through the returned transceiver reach the client's
    /// `nfc_target_receive_bytes`, its `nfc_target_send_bytes` answers them.
    public func tapExternalReader(timeout: TimeInterval = 2) -> APDUTransceiver {
        let reader = ExternalReader(timeout: timeout, onCommand: { [wakeWrite] in Self.poke(wakeWrite) })
        field.externalReader?.leave()
        field.setExternalReader(reader)
        return reader
    }

    /// The external reader leaves: the emulated card's next TgGetData reports "released".
    public func removeExternalReader() {
        field.externalReader?.leave()
        field.setExternalReader(nil)
    }

    /// Every raw frame the client sent through InCommunicateThru (ECP polling frames, presence
    /// checks), oldest first, the last 64.
    public var rawFrames: [[UInt8]] { state.withLock { $0.rawFrames } }

    /// Whether a client session is open (between SAMConfiguration and PowerDown).
    public var hasSession: Bool { state.withLock { $0.sessionOpen } }

    /// Whether the slave is in exclusive mode (TIOCEXCL): set while a session is open.
    public var isExclusive: Bool { pty.isExclusive }

    /// Sessions opened and commands answered since start.
    public var statistics: (sessions: Int, commands: Int) {
        state.withLock { ($0.statsSessions, $0.statsCommands) }
    }

    public var isRunning: Bool { state.withLock { !$0.stopped } }

    /// Stops the I/O thread and closes the pty (clients then read EIO) and the symlink.
    public func stop() {
        let wasStopped = state.withLock { s in
            defer { s.stopped = true }
            return s.stopped
        }
        if wasStopped { return }
        field.externalReader?.leave()
        Self.poke(wakeWrite)
        // The I/O thread's poll is bounded and the poke wakes it at once.
        finished.wait(until: nil, for: { $0 }, then: { _, _ in })
        pty.close()
        _ = Glibc.close(wakeRead)
        _ = Glibc.close(wakeWrite)
    }

    // MARK: The I/O thread

    private static func poke(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = Glibc.write(fd, &byte, 1)
    }

    private func session(_ open: Bool) {
        let changed = state.withLock { s in
            let changed = s.sessionOpen != open
            s.sessionOpen = open
            if open && changed { s.statsSessions += 1 }
            return changed
        }
        if changed {
            pty.setExclusive(open)
            log(open ? "session opened" : "session closed")
        }
    }

    private func recordRawFrame(_ frame: [UInt8]) {
        state.withLock { s in
            s.rawFrames.append(frame)
            if s.rawFrames.count > 64 { s.rawFrames.removeFirst() }
        }
    }

    private func run() {
        let chip = PN532Chip(field: field, wake: { [wakeWrite] in Self.poke(wakeWrite) }, log: log,
                             onSession: { [weak self] open in self?.session(open) },
                             onRawFrame: { [weak self] frame in self?.recordRawFrame(frame) })
        var lastActivity = Date()
        let idleTimeout = { self.sessionIdleTimeout }
        var decoder = PN532FrameDecoder()
        var pending: (code: UInt8, pending: PN532Chip.Pending)? = nil
        var lastReply: [UInt8] = []
        var drain = [UInt8](repeating: 0, count: 64)

        func send(_ code: UInt8, _ outcome: PN532Chip.Outcome, ack: Bool) {
            var out: [UInt8] = ack ? PN532Wire.ack : []
            var replied = false
            if let frame = outcome.frame(answering: code) {
                lastReply = frame
                out += frame
                replied = true
            } else if case .pending(let p) = outcome {
                pending = (code, p)
            }
            if !out.isEmpty { pty.write(out) }
            if replied { chip.replied(to: code) }
        }

        while isRunning {
            var timeout: Int32 = -1
            let now = Date()
            if let deadline = pending?.pending.deadline {
                timeout = Int32(max(0, min(deadline.timeIntervalSince(now) * 1000 + 1, 60_000)))
            }
            if hasSession && pending == nil {
                let idle = Int32(max(0, (idleTimeout() - now.timeIntervalSince(lastActivity)) * 1000 + 1))
                timeout = timeout < 0 ? idle : min(timeout, idle)
            }
            var fds = [pollfd(fd: pty.masterFD, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, timeout)
            if ready < 0 && errno != EINTR { break }
            if fds[1].revents != 0 { while Glibc.read(wakeRead, &drain, drain.count) > 0 {} }
            if !isRunning { break }
            if fds[0].revents & Int16(POLLIN) != 0 {
                guard let bytes = pty.readAvailable() else { break }
                if !bytes.isEmpty {
                    lastActivity = Date()
                    decoder.feed(bytes)
                }
                while let frame = decoder.next() {
                    switch frame {
                    case .ack:
                        // Abort: the command in progress ends without a reply.
                        if let p = pending { chip.cancel(p.pending); pending = nil; log("command 0x\([p.code].hex) aborted by host ACK") }
                    case .nack:
                        if !lastReply.isEmpty { pty.write(lastReply) }
                    case .errorFrame:
                        log("ignored an error frame from the host")
                    case .malformed(let why):
                        log("dropped a malformed frame (\(why.rawValue))")
                    case .command(let code, let data):
                        // A new command cancels anything pending: its late reply must never
                        // land in this exchange.
                        if let p = pending { chip.cancel(p.pending); pending = nil }
                        state.withLock { $0.statsCommands += 1 }
                        send(code, chip.handle(code: code, data: data), ack: true)
                    }
                }
            } else if fds[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                usleep(2000)  // no client right now
            }
            if let p = pending, let outcome = chip.resume(p.pending, now: Date()) {
                pending = nil
                send(p.code, outcome, ack: false)
            }
            if hasSession && pending == nil && Date().timeIntervalSince(lastActivity) > idleTimeout() {
                session(false)
            }
        }
        finished.withLock { $0 = true }
    }
}
