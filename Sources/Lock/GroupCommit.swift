#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ByteCore
import Foundation

/// Group commit across locks that share a disk: many locks in one process (`lockbench fleet`)
/// each append a journal record and fsync it; here the fsyncs that wait at the same moment share
/// one flush. It is a `FileIO` (the lock's write/fsync seam), so the lock's path is unchanged:
/// `fsync` still returns only when the caller's bytes are on the disk.
///
/// Why it is safe: a caller's `write` has returned before it calls `fsync`, so a flush that
/// *starts* after the call began covers those bytes. Callers wait for the first flush that starts
/// after they arrived (leader/follower: the first waiter with no flush running flushes for all).
/// The flush is `syncfs(2)` on the caller's file — every dirty page and the journal of that
/// filesystem, with a cache flush, and (Linux ≥ 5.8) writeback errors reported — so one call
/// covers every lock's file on that filesystem. A file on another filesystem than the first one
/// seen gets its own plain `fsync`. A failed flush fails every caller it covered (each lock then
/// refuses with `storage_failure`; nothing is acknowledged that is not durable).
public final class GroupCommit: Sendable {
    private struct Flushes: Sendable {
        /// Flushes started / finished; flushes run one at a time, so generation g finishes before g+1 starts.
        var started: UInt64 = 0
        var finished: UInt64 = 0
        var flushing = false
        /// errno of recent failed flushes by generation (bounded).
        var failures: [UInt64: Int32] = [:]
        var device: dev_t?
        var requests = 0
        var flushes = 0
    }
    private let flushes = Monitor(Flushes())
    private let flush: @Sendable (Int32) -> Int32

    /// `flush` is the system call one leader makes for everyone (tests inject a failing one).
    public init(flush: @escaping @Sendable (Int32) -> Int32 = { fd in GroupCommit.syncFilesystem(fd) }) {
        self.flush = flush
    }

    /// The write/fsync seam to hand to every lock of the group.
    public var io: FileIO {
        FileIO(write: FileIO.system.write, fsync: { [self] fd in self.fsync(fd) })
    }

    /// fsync requests served and flushes made: requests ÷ flushes is the batch size.
    public var counts: (requests: Int, flushes: Int) {
        flushes.withLock { ($0.requests, $0.flushes) }
    }

    /// What a caller does next: its flush is done (with the errno of a failure), or it leads one.
    private enum Turn { case done(Int32?), lead(UInt64) }

    /// Like fsync(2): returns when a flush that started after this call has finished; 0, or -1 with errno set.
    public func fsync(_ fd: Int32) -> Int32 {
        guard sameFilesystem(fd) else { return FileIO.system.fsync(fd) }
        // The first flush to start from now on covers this caller's bytes.
        let needed = flushes.withLock { f in
            f.requests += 1
            return f.started + 1
        }
        while true {
            let turn = flushes.wait(until: nil, for: { $0.finished >= needed || !$0.flushing }) { f, _ -> Turn in
                if f.finished >= needed { return .done(f.failures[needed]) }
                f.flushing = true
                f.started += 1
                return .lead(f.started)
            }
            switch turn {
            case .done(let failure):
                if let failure { errno = failure; return -1 }
                return 0
            case .lead(let generation):
                let rc = flush(fd)
                let error = rc == 0 ? 0 : errno
                flushes.withLock { f in
                    f.flushing = false
                    f.finished = generation
                    f.flushes += 1
                    if rc != 0 {
                        f.failures[generation] = error
                        if f.failures.count > 4096, let oldest = f.failures.keys.min() { f.failures[oldest] = nil }
                    }
                }
            }
        }
    }

    private func sameFilesystem(_ fd: Int32) -> Bool {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return false }
        return flushes.withLock { f in
            if f.device == nil { f.device = st.st_dev }
            return f.device == st.st_dev
        }
    }

    /// syncfs(2), declared here because the Glibc module does not export it (it needs _GNU_SOURCE).
    public static func syncFilesystem(_ fd: Int32) -> Int32 { lockbench_syncfs(fd) }
}

@_silgen_name("syncfs")
private func lockbench_syncfs(_ fd: Int32) -> Int32
