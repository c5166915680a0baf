import Dispatch
import Foundation
import TrustModel

/// The phones of `lockbench-bench trust`, in a process of their own (`lockbench-bench trust-load`,
/// hidden), so the server's figures are the server's: the client's HTTP, JSON and bookkeeping no
/// longer share the server's process. The two speak one JSON object a line: the bench sends a
/// `TrustLoad.Job` on the child's stdin, the child answers a `TrustLoad.Answer` on its stdout.
/// The phones keep their own state (access tokens, poll cursors, refresh tokens), as real ones do,
/// and speak HTTP through `HTTPLoad` (keep-alive connections on one thread): the two processes
/// share the cores, and every µs the load generator spends is one the server lacks. Each answer
/// carries the phones' CPU time, so the bench prints both sides' CPU per request.
enum TrustLoad {
    struct Job: Codable {
        enum Op: String, Codable { case setup, healthz, poll, rotate, quit }
        var op: Op
        /// setup: the server, the requests in flight, each phone's access token and refresh token;
        /// with `baseURLs` (several instances of one service), phone k polls instance k mod count.
        var baseURL: String?
        var baseURLs: [String]?
        var concurrency: Int?
        var access: [String]?
        var refresh: [String]?
        /// healthz, poll, rotate: how many requests; poll: the keys each answer must carry (nil: any;
        /// 0: none, as when nothing changed).
        var count: Int?
        var expectKeys: Int?
        /// rotate: phones 0..<holders rotate in turn, `workers` at once (each worker owns the
        /// holders ≡ its index mod workers, so no token is ever presented twice at once).
        var holders: Int?
        var workers: Int?
    }

    struct Answer: Codable {
        var rate = 0.0, p50 = 0.0, p99 = 0.0
        /// The phones' process CPU time (user + system) over the job, and the job's wall time (s).
        var cpu = 0.0, wall = 0.0
        var error: String?
    }

    /// This process's CPU time so far (user + system), seconds.
    static func processCPU() -> Double {
        var u = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &u)
        return Double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + Double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6
    }

    // MARK: the bench's side

    /// A running `trust-load` child.
    ///
    /// Safe because it wraps the child's pipes: one job at a time is
    /// written and its answer read (the bench awaits each `run` before the next).
    final class Child: @unchecked Sendable {
        private let process = Process()
        private let input = Pipe(), output = Pipe()
        private var buffer = Data()
        var pid: Int32 { process.processIdentifier }

        init() throws {
            signal(SIGPIPE, SIG_IGN)   // a child that died is an error on write, not the bench's death
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            process.arguments = ["trust-load"]
            process.standardInput = input
            process.standardOutput = output
            try process.run()
        }

        /// Sends a job and waits for its answer on a thread of its own (never on the server's
        /// cooperative threads, which must keep serving while the child runs the load).
        func run(_ job: Job) async throws -> Answer {
            let line = try JSONEncoder().encode(job) + Data("\n".utf8)
            return try await withCheckedThrowingContinuation { c in
                DispatchQueue.global().async {
                    do {
                        try self.input.fileHandleForWriting.write(contentsOf: line)
                        let answer = try JSONDecoder().decode(Answer.self, from: try self.readLine())
                        if let e = answer.error { throw TrustError(.invalidRequest, "trust-load: \(e)") }
                        c.resume(returning: answer)
                    } catch { c.resume(throwing: error) }
                }
            }
        }

        private func readLine() throws -> Data {
            while true {
                if let nl = buffer.firstIndex(of: 0x0A) {
                    let line = buffer[buffer.startIndex..<nl]
                    buffer = Data(buffer[(nl + 1)...])
                    return Data(line)
                }
                guard buffer.count < 1 << 20 else { throw TrustError(.invalidRequest, "trust-load: an answer over 1 MiB") }
                let more = output.fileHandleForReading.availableData
                if more.isEmpty { throw TrustError(.invalidRequest, "trust-load exited without an answer") }
                buffer += more
            }
        }

        func quit() {
            try? input.fileHandleForWriting.write(contentsOf: Data("{\"op\":\"quit\"}\n".utf8))
            process.waitUntilExit()
        }
    }

    // MARK: the child's side

    /// Reads jobs until `quit` or end of input. Exit 0, or 2 for a line that is not a job.
    static func serve() -> Int32 {
        let phones = Phones()
        while let line = readLine(strippingNewline: true) {
            guard line.utf8.count <= 64 << 20, let job = try? JSONDecoder().decode(Job.self, from: Data(line.utf8)) else {
                FileHandle.standardError.write(Data("trust-load: not a job: \(line.prefix(80))\n".utf8)); return 2
            }
            if job.op == .quit { break }
            var answer: Answer
            do { answer = try phones.run(job) } catch { answer = Answer(error: "\(error)") }
            FileHandle.standardOutput.write((try? JSONEncoder().encode(answer)) ?? Data(#"{"error":"encode"}"#.utf8))
            FileHandle.standardOutput.write(Data([0x0A]))
        }
        return 0
    }

    /// The phones' state between jobs: their connections, tokens and cursors.
    final class Phones {
        var ports = [Int]()
        var concurrency = 1
        var access = [String]()
        var cursors = [String?]()
        var refresh = [String]()
        var polling: HTTPLoad?
        var rotating: (workers: Int, load: HTTPLoad)?

        func run(_ job: Job) throws -> Answer {
            switch job.op {
            case .setup:
                guard let base = job.baseURL, let c = job.concurrency, c > 0, c <= 4096 else { throw TrustError(.invalidRequest, "setup needs baseURL and concurrency 1…4096") }
                ports = try (job.baseURLs ?? [base]).map { url in
                    guard let port = url.split(separator: ":").last.flatMap({ Int($0) }) else { throw TrustError(.invalidRequest, "setup: \(url) has no port") }
                    return port
                }
                concurrency = c
                access = job.access ?? []
                cursors = Array(repeating: nil, count: access.count)
                refresh = job.refresh ?? []
                polling = try HTTPLoad(ports: ports, connections: c)
                rotating = nil
                return Answer()
            case .healthz:
                guard let polling else { throw TrustError(.invalidRequest, "no setup") }
                let requests = ports.map { HTTPLoad.get("/healthz", port: $0) }
                let ports = self.ports
                return try Self.answer(polling.run(try count(job), request: { requests[$0 % ports.count] }) { _, r in
                    guard r.status == 200 else { throw TrustError(.invalidRequest, "/healthz answered \(r.status)") }
                })
            case .poll:
                guard let polling, !access.isEmpty else { throw TrustError(.invalidRequest, "no setup with access tokens") }
                let expect = job.expectKeys, ports = self.ports, phones = access.count
                return try Self.answer(polling.run(try count(job), request: { k in
                    let p = k % phones
                    return HTTPLoad.get("/v1/keys" + (self.cursors[p].map { "?since=\($0)" } ?? ""), port: ports[k % ports.count], bearer: self.access[p])
                }) { k, r in
                    let p = k % phones
                    let keys: Int
                    switch r.status {
                    case 200:
                        keys = HTTPLoad.count("iteration", in: r.body)
                        guard let cursor = HTTPLoad.stringMember("cursor", in: r.body) else { throw TrustError(.invalidRequest, "phone \(p): a poll answer without a cursor") }
                        self.cursors[p] = cursor
                    case 204: keys = 0
                    default: throw TrustError(.invalidRequest, "phone \(p): a poll answered \(r.status): \(String(decoding: r.body.prefix(200), as: UTF8.self))")
                    }
                    if let expect, keys != expect { throw TrustError(.invalidRequest, "phone \(p): a poll answered \(keys) keys, not \(expect)") }
                })
            case .rotate:
                guard let holders = job.holders, let workers = job.workers, holders > 0, workers > 0, workers <= 4096,
                      holders <= refresh.count, let port = ports.first else { throw TrustError(.invalidRequest, "rotate needs setup, holders (≤ refresh tokens) and workers") }
                if rotating?.workers != workers { rotating = (workers, try HTTPLoad(ports: [port], connections: workers)) }
                // Connection w runs k ≡ w (mod workers), and holders is a multiple of workers: each
                // phone's token goes out on one connection, never twice at once.
                return try Self.answer(rotating!.load.run(try count(job), request: { k in
                    HTTPLoad.postForm("/v1/token", port: port, [("grant_type", "refresh_token"), ("refresh_token", self.refresh[k % holders])])
                }) { k, r in
                    guard r.status == 200, let next = HTTPLoad.stringMember("refresh_token", in: r.body) else {
                        throw TrustError(.invalidRequest, "phone \(k % holders): a rotation answered \(r.status): \(String(decoding: r.body.prefix(200), as: UTF8.self))")
                    }
                    self.refresh[k % holders] = next
                })
            case .quit:
                return Answer()
            }
        }

        func count(_ job: Job) throws -> Int {
            guard let n = job.count, n > 0, n <= 10_000_000 else { throw TrustError(.invalidRequest, "count must be 1…10,000,000") }
            return n
        }

        /// Rate, latency percentiles and this process's CPU time over a run.
        static func answer(_ run: @autoclosure () throws -> (latencies: [Double], seconds: Double)) rethrows -> Answer {
            let cpu = TrustLoad.processCPU()
            let r = try run()
            let sorted = r.latencies.sorted()
            func pct(_ p: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
            return Answer(rate: Double(sorted.count) / r.seconds, p50: pct(0.5), p99: pct(0.99), cpu: TrustLoad.processCPU() - cpu, wall: r.seconds)
        }
    }

}

import ArgumentParser

extension LockBenchBench {
    /// The phones of `lockbench-bench trust`, spawned by it (hidden).
    struct TrustLoadCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "trust-load",
            abstract: "The phones of `lockbench-bench trust` in their own process: JSON jobs on stdin, answers on stdout.",
            shouldDisplay: false)

        func run() throws {
            let status = TrustLoad.serve()
            if status != 0 { throw ExitCode(status) }
        }
    }
}
