import ByteCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A running lock's events as it publishes them (`lock run --events unix:PATH`), or a conformance
/// run's (`conformance … --events`): read on a thread of its own (a blocking socket), kept as the
/// last `capacity` lines plus the start line (kind `startKind`), and handed to every subscriber as
/// they come. When the publisher goes away the feed says so and connects again four times a second, so
/// a console outlives a lock restart and follows one conformance run after another.
public final class LockEventFeed: Sendable {
    public let path: String
    public let capacity: Int
    /// The kind of the line that starts a stream (`started`, `conformance-started`).
    public let startKind: String
    /// What publishes here, in the line the feed adds when the socket closes ("the lock").
    public let publisher: String
    private struct State {
        var started: String?
        var recent: [String] = []
        var subscribers: [UInt64: AsyncStream<String>.Continuation] = [:]
        var next: UInt64 = 0
        var connected = false
        var stopped = false
    }
    private let state = Mutex(State())
    /// A line longer than this is not an event (the lock's are well under 4 KiB): dropped.
    static let maximumLine = 64 * 1024

    public init(path: String, capacity: Int = 200, startKind: String = "started", publisher: String = "the lock") {
        self.path = path
        self.capacity = max(1, capacity)
        self.startKind = startKind
        self.publisher = publisher
        Thread.detachNewThread { [self] in follow() }
    }

    /// The `started` line, then the recent events, then each new one; ends when the feed stops.
    public func subscribe() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(capacity + 1))
        let id = state.withLock { s -> UInt64? in
            guard !s.stopped else { return nil }
            if let started = s.started { continuation.yield(started) }
            for line in s.recent { continuation.yield(line) }
            s.next += 1
            s.subscribers[s.next] = continuation
            return s.next
        }
        guard let id else { continuation.finish(); return stream }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) } }
        return stream
    }

    public var isConnected: Bool { state.withLock { $0.connected } }

    public func stop() {
        let all = state.withLock { s -> [AsyncStream<String>.Continuation] in
            s.stopped = true
            defer { s.subscribers = [:] }
            return Array(s.subscribers.values)
        }
        for c in all { c.finish() }
    }

    private func follow() {
        while !state.withLock({ $0.stopped }) {
            if let fd = connectToLock() {
                state.withLock { $0.connected = true }
                read(from: fd)
                Glibc.close(fd)
                state.withLock { $0.connected = false }
                publish(#"{"kind":"console","message":"\#(publisher)'s event socket closed; waiting for it"}"#, recent: false)
            }
            usleep(250_000)   // a conformance run waits up to 2 s for its first viewer
        }
    }

    private func connectToLock() -> Int32? {
        guard let address = UnixSocketAddress(path: path) else { return nil }
        let fd = UnixSocketAddress.streamSocket()
        guard fd >= 0 else { return nil }
        let rc = address.connect(fd)
        if rc != 0 { Glibc.close(fd); return nil }
        return fd
    }

    private func read(from fd: Int32) {
        var pending = [UInt8](), buffer = [UInt8](repeating: 0, count: 4096)
        while !state.withLock({ $0.stopped }) {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&ready, 1, 500)
            if r == 0 { continue }
            if r < 0 { if errno == EINTR { continue }; return }
            let n = Glibc.read(fd, &buffer, buffer.count)
            guard n > 0 else { return }
            pending += buffer[0..<n]
            while let nl = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeFirst(nl + 1)
                publish(line, recent: true)
            }
            if pending.count > Self.maximumLine { pending.removeAll() }
        }
    }

    private func publish(_ line: String, recent: Bool) {
        let isStart = line.contains(#""kind":"\#(startKind)""#)
        let subscribers = state.withLock { s -> [AsyncStream<String>.Continuation] in
            if isStart { s.started = line; s.recent.removeAll() }
            else if recent { s.recent.append(line); if s.recent.count > capacity { s.recent.removeFirst(s.recent.count - capacity) } }
            return Array(s.subscribers.values)
        }
        for c in subscribers { c.yield(line) }
    }
}
