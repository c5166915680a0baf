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
        var closed = false
    }
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
    public init(path: String) throws(EventSocketError) {
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
            let greeting = viewers.withLock { v -> String?? in
                guard !v.closed, v.sockets.count < Self.maximumViewers else { return .none }
                v.sockets.append(fd)
                return .some(v.started)
            }
            switch greeting {
            case .none: Glibc.close(fd)
            case .some(let started?): send(started, to: fd)
            case .some(.none): break
            }
        }
    }

    /// Sends `line` (one JSON object) to every viewer; a viewer that cannot take it now is dropped.
    public func publish(_ line: String, isStart: Bool = false) {
        let sockets = viewers.withLock { v -> [Int32] in
            if isStart { v.started = line }
            return v.sockets
        }
        for fd in sockets where !send(line, to: fd) {
            viewers.withLock { $0.sockets.removeAll { $0 == fd } }
            Glibc.close(fd)
        }
    }

    @discardableResult
    private func send(_ line: String, to fd: Int32) -> Bool {
        let bytes = Array((line + "\n").utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
        return sent == bytes.count
    }

    /// Stops listening, disconnects every viewer and removes the socket file.
    public func close() {
        let sockets = viewers.withLock { v -> [Int32] in
            guard !v.closed else { return [] }
            v.closed = true
            defer { v.sockets = [] }
            return v.sockets
        }
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
