#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation

/// The baseline of every durability goal: a bare append of one audit-sized line (300 bytes) and
/// an fsync, in the directory the lock writes to, measured in the same run as what it is compared
/// with (a shared disk's other writers move it by an order of magnitude).
///
/// Two readings of "one fsync". Back to back (`Scratch.backToBack`), an fsync costs the disk's least; after
/// the disk has been idle for a few milliseconds (one `Scratch.time()` after a pause, as before
/// every tap: taps come seconds apart and the lock writes nothing between them), the same append
/// + fsync costs more, on a virtual disk about twice as much. A tap's own fsync is a lone one.
enum FsyncBaseline {
    struct Failure: Error, CustomStringConvertible { var description: String }

    /// One scratch file in the lock's directory, kept open (as the lock keeps its journal open)
    /// and removed by `close`.
    final class Scratch {
        let path: String
        private var fd: Int32
        private let line = [UInt8](repeating: 0x61, count: 299) + [0x0A]

        init(directory: String) throws {
            path = directory + "/bare-fsync-\(getpid()).log"
            fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        }

        deinit { close() }

        func close() {
            guard fd >= 0 else { return }
            Glibc.close(fd); unlink(path); fd = -1
        }

        /// One timed append + fsync, in seconds.
        func time() throws -> Double {
            let t0 = DispatchTime.now().uptimeNanoseconds
            let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == line.count, fsync(fd) == 0 else {
                throw Failure(description: "append + fsync \(path): \(String(cString: strerror(errno)))")
            }
            return Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
        }

        /// `count` appends + fsyncs back to back.
        func backToBack(count: Int) throws -> [Double] {
            try (0..<count).map { _ in try time() }
        }

        /// `count` appends + fsyncs, each alone after `idle` seconds with the disk untouched.
        func lone(count: Int, idle: TimeInterval) throws -> [Double] {
            try (0..<count).map { _ in Thread.sleep(forTimeInterval: idle); return try time() }
        }
    }

    static func median(_ xs: [Double]) -> Double {
        let s = xs.sorted()
        return s.isEmpty ? .nan : s[s.count / 2]
    }

    static func loadAverage() -> String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "unknown").split(separator: " ").prefix(3).joined(separator: " ")
    }
}
