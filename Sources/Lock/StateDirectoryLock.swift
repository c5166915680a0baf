import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` on `STATE/owner.lock`, held while a lock is open, so that two processes
/// never write one state directory (a second `lock run`, or `clock set` beside a running lock,
/// would silently overwrite each other's state). The kernel drops it when the process dies, so
/// a SIGKILL leaves no stale lock behind.
public final class StateDirectoryLock: Sendable {
    private let fd: Int32

    public init(directory: String) throws(LockError) {
        let path = directory + "/owner.lock"
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw LockError(.io, "cannot open \(path): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let owner = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            close(fd)
            throw LockError(.stateInUse, "the state directory \(directory) is in use by another lockbench process (pid \(owner.isEmpty ? "?" : owner)); stop it first, or use the running lock's console (clock, tap) instead")
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(fd, 0)
        _ = pid.withCString { pwrite(fd, $0, strlen($0), 0) }
    }

    deinit { close(fd) }
}
