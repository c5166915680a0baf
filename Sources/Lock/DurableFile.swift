#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The two system calls whose failure decides what a lock may acknowledge: `write` (a full disk
/// answers ENOSPC, or writes only part) and `fsync`. The lock's files go through this seam, so a
/// test can make either fail at any byte (`LockTests`), as a full disk does.
public struct FileIO: Sendable {
    /// Like write(2): bytes written, or -1 with errno set.
    public var write: @Sendable (_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int
    /// Like fsync(2): 0, or -1 with errno set.
    public var fsync: @Sendable (_ fd: Int32) -> Int32

    public init(write: @escaping @Sendable (Int32, UnsafeRawBufferPointer) -> Int, fsync: @escaping @Sendable (Int32) -> Int32) {
        self.write = write; self.fsync = fsync
    }

    public static let system = FileIO(
        write: { fd, bytes in
            #if canImport(Glibc)
            Glibc.write(fd, bytes.baseAddress, bytes.count)
            #else
            Darwin.write(fd, bytes.baseAddress, bytes.count)
            #endif
        },
        fsync: { fd in
            #if canImport(Glibc)
            Glibc.fsync(fd)
            #else
            Darwin.fsync(fd)
            #endif
        })
}

/// Durable file operations: every write reaches the disk before the call returns.
enum DurableFile {
    static func errnoText(_ what: String, _ path: String) -> String {
        "\(what) \(path): \(String(cString: strerror(errno))) (errno \(errno))"
    }

    /// Replaces `path` atomically with `data`: write `path.tmp`, fsync it, rename over `path`,
    /// fsync the directory. A crash leaves either the old or the new file, never a mix.
    /// The temporary file is created afresh (`O_EXCL`, after removing a stale one) so it has `mode`
    /// from its first byte: a leftover temporary file with a wider mode is never reused.
    static func writeAtomically(_ data: [UInt8], to path: String, mode: mode_t = 0o600, io: FileIO = .system) throws(LockError) {
        let tmp = path + ".tmp"
        unlink(tmp)
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw LockError(.io, errnoText("open", tmp)) }
        do throws(LockError) {
            try writeAll(fd, data, path: tmp, io: io)
            guard io.fsync(fd) == 0 else { throw LockError(.io, errnoText("fsync", tmp)) }
        } catch {
            close(fd)
            unlink(tmp)
            throw error
        }
        close(fd)
        guard rename(tmp, path) == 0 else { throw LockError(.io, errnoText("rename", tmp)) }
        try syncDirectory(of: path)
    }

    static func syncDirectory(of path: String) throws(LockError) {
        let dir = (path as NSString).deletingLastPathComponent
        let dfd = open(dir.isEmpty ? "." : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dfd >= 0 else { throw LockError(.io, errnoText("open directory", dir)) }
        defer { close(dfd) }
        guard fsync(dfd) == 0 else { throw LockError(.io, errnoText("fsync directory", dir)) }
    }

    static func writeAll(_ fd: Int32, _ data: [UInt8], path: String, io: FileIO = .system) throws(LockError) {
        var written = 0
        while written < data.count {
            let n = data.withUnsafeBytes { io.write(fd, UnsafeRawBufferPointer(rebasing: $0[written...])) }
            if n < 0 {
                if errno == EINTR { continue }
                throw LockError(.io, errnoText("write", path))
            }
            guard n > 0 else { errno = EIO; throw LockError(.io, errnoText("write (no progress)", path)) }
            written += n
        }
    }

    static func read(_ path: String) throws(LockError) -> [UInt8]? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw LockError(.io, "cannot read \(path)") }
        return Array(data)
    }
}
