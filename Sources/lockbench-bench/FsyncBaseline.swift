#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation

/// The baseline of every durability goal: a bare append of one audit-sized line (300 bytes) and
/// an fsync, in the directory the lock writes to, measured in the same run as what it is compared
/// with (a shared disk's other writers move it by an order of magnitude).
enum FsyncBaseline {
    struct Failure: Error, CustomStringConvertible { var description: String }

    /// `count` timed appends + fsyncs to a scratch file in `directory` (removed afterwards), seconds each.
    static func samples(directory: String, count: Int) throws -> [Double] {
        let path = directory + "/bare-fsync-\(getpid()).log"
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd); unlink(path) }
        let line = [UInt8](repeating: 0x61, count: 299) + [0x0A]
        var times = [Double]()
        times.reserveCapacity(count)
        for _ in 0..<count {
            let t0 = DispatchTime.now().uptimeNanoseconds
            let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == line.count, fsync(fd) == 0 else {
                throw Failure(description: "append + fsync \(path): \(String(cString: strerror(errno)))")
            }
            times.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9)
        }
        return times
    }

    static func median(_ xs: [Double]) -> Double {
        let s = xs.sorted()
        return s.isEmpty ? .nan : s[s.count / 2]
    }

    static func loadAverage() -> String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "unknown").split(separator: " ").prefix(3).joined(separator: " ")
    }
}
