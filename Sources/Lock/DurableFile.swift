#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Durable file operations: every write reaches the disk before the call returns.
enum DurableFile {
    static func errnoText(_ what: String, _ path: String) -> String {
        "\(what) \(path): \(String(cString: strerror(errno))) (errno \(errno))"
    }

    /// Replaces `path` atomically with `data`: write `path.tmp`, fsync it, rename over `path`,
    /// fsync the directory. A crash leaves either the old or the new file, never a mix.
    /// The temporary file is created afresh (`O_EXCL`, after removing a stale one) so it has `mode`
    /// from its first byte: a leftover temporary file with a wider mode is never reused.
    static func writeAtomically(_ data: [UInt8], to path: String, mode: mode_t = 0o600) throws(LockError) {
        let tmp = path + ".tmp"
        unlink(tmp)
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw LockError(.io, errnoText("open", tmp)) }
        do throws(LockError) {
            try writeAll(fd, data, path: tmp)
            guard fsync(fd) == 0 else { throw LockError(.io, errnoText("fsync", tmp)) }
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

    static func writeAll(_ fd: Int32, _ data: [UInt8], path: String) throws(LockError) {
        var written = 0
        while written < data.count {
            let n = data.withUnsafeBytes { write(fd, $0.baseAddress! + written, data.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                throw LockError(.io, errnoText("write", path))
            }
            written += n
        }
    }

    static func read(_ path: String) throws(LockError) -> [UInt8]? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw LockError(.io, "cannot read \(path)") }
        return Array(data)
    }
}
