import ByteCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The lock's events for viewers (`lock run --events unix:PATH`, read by a bench console): every
/// event as one JSON line on a Unix-domain socket, to each connected viewer from the moment it
/// connects, the lock's `started` event first so a late viewer knows which lock it watches. The
/// lock never waits for a viewer: lines are sent without blocking, and a viewer whose socket
/// buffer is full (it stopped reading) is dropped. The HTTP side stays out of the lock binary.
public final class EventSocket: Sendable {
    public let path: String
    private let listener: Int32
    private struct Viewers {
        var sockets: [Int32] = []
        var started: String?
        /// The last `replay` lines after the start, sent to a viewer that connects late.
        var recent: [String] = []
        var closed = false
    }
    private let replay: Int
    private let viewers = Mutex(Viewers())
    /// At most this many viewers at once; more are refused (closed at once).
    public static let maximumViewers = 16

    /// `unix:PATH` → PATH; nil when `spec` is not of that form.
    public static func path(of spec: String) -> String? {
        guard spec.hasPrefix("unix:"), spec.count > 5 else { return nil }
        return String(spec.dropFirst(5))
    }

    /// Listens on `path` (mode 0600: events name credentials). A socket left there by an earlier
    /// run is replaced; any other file is refused.
    /// `replay`: how many of the latest lines a late viewer gets after the start line (0 for a
    /// lock, whose viewers watch from when they connect; a conformance run replays its checks).
    public init(path: String, replay: Int = 0) throws(EventSocketError) {
        self.replay = max(0, replay)
        guard let address = UnixSocketAddress(path: path) else {
            throw EventSocketError("\(path): a socket path is 1 to \(UnixSocketAddress.maximumPathBytes) bytes")
        }
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else { throw EventSocketError("\(path) exists and is not a socket; give another path") }
            unlink(path)
        }
        let fd = UnixSocketAddress.streamSocket()
        guard fd >= 0 else { throw EventSocketError("socket: \(String(cString: strerror(errno)))") }
        let bound = address.bind(fd)
        guard bound == 0, chmod(path, 0o600) == 0, listen(fd, 8) == 0 else {
            let why = String(cString: strerror(errno))
            Glibc.close(fd)
            throw EventSocketError("\(path): \(why)")
        }
        self.path = path
        listener = fd
        Thread.detachNewThread { [self] in acceptViewers() }
    }

    private func acceptViewers() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return   // closed
            }
            // Greeted under the lock, so no line published meanwhile comes before the greeting.
            let accepted = viewers.withLock { v -> Bool in
                guard !v.closed, v.sockets.count < Self.maximumViewers else { return false }
                for line in (v.started.map { [$0] } ?? []) + v.recent where !send(line, to: fd) { return false }
                v.sockets.append(fd)
                return true
            }
            if !accepted { Glibc.close(fd) }
        }
    }

    /// Sends `line` (one JSON object) to every viewer; a viewer that cannot take it now is dropped.
    public func publish(_ line: String, isStart: Bool = false) {
        // Sends never block, so they are made under the lock: every viewer sees one order.
        let dropped = viewers.withLock { v -> [Int32] in
            if isStart { v.started = line; v.recent = [] } else if replay > 0 {
                v.recent.append(line)
                if v.recent.count > replay { v.recent.removeFirst(v.recent.count - replay) }
            }
            let dropped = v.sockets.filter { !send(line, to: $0) }
            v.sockets.removeAll { dropped.contains($0) }
            return dropped
        }
        for fd in dropped { Glibc.close(fd) }
    }

    @discardableResult
    private func send(_ line: String, to fd: Int32) -> Bool {
        let bytes = Array((line + "\n").utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
        return sent == bytes.count
    }

    /// Waits until a viewer is connected, at most `timeout` seconds; true when one is. A short
    /// run (a conformance run can take 0.1 s) gives a console that polls for the socket the time
    /// to connect, so the run is watched from its start.
    @discardableResult
    public func waitForViewer(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while viewers.withLock({ $0.sockets.isEmpty && !$0.closed }) {
            guard Date() < deadline else { return false }
            usleep(10_000)
        }
        return viewers.withLock { !$0.sockets.isEmpty }
    }

    /// Stops listening, disconnects every viewer and removes the socket file; later calls do
    /// nothing (the listener's descriptor may already be another file's).
    public func close() {
        let sockets = viewers.withLock { v -> [Int32]? in
            guard !v.closed else { return nil }
            v.closed = true
            defer { v.sockets = [] }
            return v.sockets
        }
        guard let sockets else { return }
        for fd in sockets { Glibc.close(fd) }
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        unlink(path)
    }
}

/// `--events` could not be served.
public struct EventSocketError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
