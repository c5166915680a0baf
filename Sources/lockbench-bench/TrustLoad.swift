import AsyncHTTPClient
import Dispatch
import Foundation
import NIOCore
import Trust
import TrustPhone

/// The phones of `lockbench-bench trust`, in a process of their own (`lockbench-bench trust-load`,
/// hidden), so the server's figures are the server's: the client's HTTP, JSON and bookkeeping no
/// longer share the server's process. The two speak one JSON object a line: the bench sends a
/// `TrustLoad.Job` on the child's stdin, the child answers a `TrustLoad.Answer` on its stdout.
/// The phones keep their own state (access tokens, poll cursors, refresh tokens), as real ones do.
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
        var error: String?
    }

    // MARK: the bench's side

    /// A running `trust-load` child.
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
            let done = DispatchSemaphore(value: 0)
            let result = AnswerBox()
            Task.detached {
                do { result.value = try await phones.run(job) } catch { result.value = Answer(error: "\(error)") }
                done.signal()
            }
            done.wait()
            let answer = result.value
            FileHandle.standardOutput.write((try? JSONEncoder().encode(answer)) ?? Data(#"{"error":"encode"}"#.utf8))
            FileHandle.standardOutput.write(Data([0x0A]))
        }
        phones.shutdown()
        return 0
    }

    final class AnswerBox: @unchecked Sendable { var value = Answer() }

    /// The phones' state between jobs.
    final class Phones: @unchecked Sendable {
        var http: HTTPClient?
        var clients = [TrustClient]()
        var baseURL = ""
        var concurrency = 1
        var access = [String]()
        let cursors = Slots<String?>()
        let refresh = Slots<String>()

        func run(_ job: Job) async throws -> Answer {
            switch job.op {
            case .setup:
                guard let base = job.baseURL, let c = job.concurrency, c > 0, c <= 4096 else { throw TrustError(.invalidRequest, "setup needs baseURL and concurrency 1…4096") }
                var config = HTTPClient.Configuration()
                config.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = c
                let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
                self.http = http
                clients = (job.baseURLs ?? [base]).map { TrustClient(baseURL: $0, http: http) }
                baseURL = base; concurrency = c
                access = job.access ?? []
                cursors.reset(Array(repeating: nil, count: access.count))
                refresh.reset(job.refresh ?? [])
                return Answer()
            case .healthz:
                guard let http else { throw TrustError(.invalidRequest, "no setup") }
                var health = HTTPClientRequest(url: baseURL + "/healthz")
                health.method = .GET
                let request = health
                return try await Self.load(try count(job), concurrency: concurrency) { _ in
                    let r = try await http.execute(request, timeout: .seconds(30))
                    _ = try await r.body.collect(upTo: 1024)
                }
            case .poll:
                guard !clients.isEmpty, !access.isEmpty else { throw TrustError(.invalidRequest, "no setup with access tokens") }
                let clients = self.clients, access = self.access, cursors = self.cursors, expect = job.expectKeys
                return try await Self.load(try count(job), concurrency: concurrency) { k in
                    let p = k % access.count
                    let r = try await clients[p % clients.count].keys(accessToken: access[p], since: cursors.get(p))
                    if let expect, (r?.keys.count ?? 0) != expect {
                        throw TrustError(.invalidRequest, "phone \(p): a poll answered \(r?.keys.count ?? 0) keys, not \(expect)")
                    }
                    if let r { cursors.set(p, r.cursor) }
                }
            case .rotate:
                guard let client = clients.first, let holders = job.holders, let workers = job.workers, holders > 0, workers > 0,
                      holders <= refresh.count else { throw TrustError(.invalidRequest, "rotate needs holders (≤ refresh tokens) and workers") }
                let refresh = self.refresh
                return try await Self.load(try count(job), concurrency: workers) { k in
                    let p = k % holders
                    let r = try await client.token([("grant_type", "refresh_token"), ("refresh_token", refresh.get(p))])
                    refresh.set(p, r.refresh_token)
                }
            case .quit:
                return Answer()
            }
        }

        func count(_ job: Job) throws -> Int {
            guard let n = job.count, n > 0, n <= 10_000_000 else { throw TrustError(.invalidRequest, "count must be 1…10,000,000") }
            return n
        }

        func shutdown() { try? http?.syncShutdown() }

        /// Runs `work(k)` for k in 0..<n with `concurrency` at once; rate per second and latency percentiles (ms).
        static func load(_ n: Int, concurrency: Int, _ work: @escaping @Sendable (Int) async throws -> Void) async throws -> Answer {
            let s = try await TrustBenchmark.load(n, concurrency: concurrency, work)
            return Answer(rate: s.rate, p50: s.p50, p99: s.p99)
        }
    }

    /// Per-phone values shared by the workers of a job.
    final class Slots<T>: @unchecked Sendable {
        private let lock = NSLock(); private var values: [T] = []
        var count: Int { lock.withLock { values.count } }
        func reset(_ v: [T]) { lock.withLock { values = v } }
        func get(_ k: Int) -> T { lock.withLock { values[k] } }
        func set(_ k: Int, _ v: T) { lock.withLock { values[k] = v } }
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
