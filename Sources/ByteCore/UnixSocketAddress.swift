#if canImport(Glibc)
import Glibc
#endif

/// An `AF_UNIX` stream socket's address. The path is checked against the kernel's limit once,
/// here, so that the lock's event socket, its viewers and the tests build `sockaddr_un` one way.
public struct UnixSocketAddress: Sendable, Equatable {
    public let path: String

    /// Bytes a path may have: `sun_path` less its terminating zero.
    public static let maximumPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Nil for an empty path or one longer than `maximumPathBytes`.
    public init?(path: String) {
        guard !path.isEmpty, path.utf8.count <= Self.maximumPathBytes else { return nil }
        self.path = path
    }

    /// A new stream socket, close-on-exec; -1 with `errno` set when the system refuses.
    public static func streamSocket() -> Int32 {
        socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }

    /// `connect(2)`: 0, or -1 with `errno` set.
    public func connect(_ fd: Int32) -> Int32 { withAddress { Glibc.connect(fd, $0, $1) } }

    /// `bind(2)`: 0, or -1 with `errno` set.
    public func bind(_ fd: Int32) -> Int32 { withAddress { Glibc.bind(fd, $0, $1) } }

    private func withAddress(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
            raw[path.utf8.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
