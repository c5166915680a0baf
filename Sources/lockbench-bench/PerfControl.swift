import Foundation

/// A profile of one figure alone: with `LOCKBENCH_PERF_CONTROL=FIFO` (the control FIFO of
/// `perf record --control fifo:FIFO -D -1`, which starts with sampling off) the trust benchmark
/// turns sampling on for the jobs named by `LOCKBENCH_PERF_JOBS` (comma-separated: `refresh`,
/// `healthz`, `unchanged`; default `refresh`) and off after each, so the samples are those of that
/// figure, not of the fixture, PostgreSQL or the other figures.
struct PerfControl: Sendable {
    /// The FIFO, open for the whole run (perf reads commands from it as they come).
    let fifo: FileHandle?
    let jobs: Set<String>

    static func fromEnvironment() -> PerfControl {
        let env = ProcessInfo.processInfo.environment
        let fifo = env["LOCKBENCH_PERF_CONTROL"].flatMap { path in
            let h = FileHandle(forWritingAtPath: path)
            if h == nil { FileHandle.standardError.write(Data("perf control: cannot open \(path); the profile stays as perf started it\n".utf8)) }
            return h
        }
        return PerfControl(fifo: fifo, jobs: Set((env["LOCKBENCH_PERF_JOBS"] ?? "refresh").split(separator: ",").map(String.init)))
    }

    func around<T>(_ job: String, _ body: () async throws -> T) async rethrows -> T {
        guard let fifo, jobs.contains(job) else { return try await body() }
        fifo.write(Data("enable\n".utf8))
        defer { fifo.write(Data("disable\n".utf8)) }
        return try await body()
    }
}
