import ArgumentParser
import Crypto
import Foundation
import TrustCore
import TrustModel
import TrustSQLite

/// `lockbench-bench approvals`: one approval (request, then answer; each a durable write) on a
/// site holding `--stored` settled requests, against the same on a site holding none, measured
/// in the same run on the same disk. The goal: the ratio stays near 1 (issue 22 §1.4: with every
/// stored request in one index row, 4,000 of them made each approval write 4.4 times slower).
enum ApprovalBenchmark {
    static func run(stored: Int, samples: Int, directory: String, report: BenchReport) async throws -> Int32 {
        let base = directory + "/lockbench-approvals-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let empty = try await Site.make(base + "/empty.sqlite")
        let full = try await Site.make(base + "/full.sqlite")
        defer { Task { try? await empty.service.storage.close(); try? await full.service.storage.close() } }
        // The full site: `stored` requests from as many devices, answered (settled, kept for the retention).
        FileHandle.standardError.write(Data("approvals: storing \(stored) settled requests…\n".utf8))
        for i in 0..<stored {
            let device = "filler-\(i)"
            _ = try await full.service.addDevice(id: device, user: device, credentialKey: Array(P256.Signing.PrivateKey().publicKey.x963Representation))
            let r = try await full.service.requestApproval(ApprovalRequest(approver: "alice", lock: Site.group), requester: device)
            _ = try await full.service.answerApproval(id: r.id, device: "alice-phone", .deny)
        }
        var emptyTimes = [Double](), fullTimes = [Double]()
        // Interleaved, so both see the same moments of the disk.
        for _ in 0..<samples {
            emptyTimes.append(try await empty.oneApproval())
            fullTimes.append(try await full.oneApproval())
        }
        let e = median(emptyTimes), f = median(fullTimes)
        report.say("approvals: request + answer (two durable writes), median of \(samples), SQLite on \(directory)")
        report.say(String(format: "baseline, no stored requests: %.2f ms", e * 1000))
        report.say(String(format: "%d stored requests:           %.2f ms", stored, f * 1000))
        report.say(String(format: "ratio: %.2f× (goal: flat, ≤ 1.5×)", f / e))
        report.figure("approval, no stored requests", e * 1000, "ms")
        let met = f / e <= 1.5
        report.figure("approval, \(stored) stored requests", f * 1000, "ms", baseline: "approval, no stored requests", goal: "ratio ≤ 1.5", met: met)
        return met ? 0 : 1
    }

    static func median(_ xs: [Double]) -> Double { let s = xs.sorted(); return s[s.count / 2] }

    /// A site with alice (an approver with a grant) and bob (who asks), on a durable SQLite file.
    struct Site {
        static let group = String(repeating: "a1", count: 16)
        let service: TrustService
        let clock: ManualClock

        static func make(_ path: String) async throws -> Site {
            let clock = ManualClock(Date(timeIntervalSince1970: 1_772_438_400))
            let service = try await TrustService(storage: try await SQLiteTrustStorage.open(path: path), issuerKey: .init(), tokenKey: .init(), clock: clock)
            for (device, user) in [("alice-phone", "alice"), ("bob-phone", "bob")] {
                _ = try await service.addDevice(id: device, user: user, credentialKey: Array(P256.Signing.PrivateKey().publicKey.x963Representation))
            }
            _ = try await service.addGrant(id: "ga", user: "alice", readers: [group])
            return Site(service: service, clock: clock)
        }

        /// Seconds for one request and its answer.
        func oneApproval() async throws -> Double {
            let start = DispatchTime.now().uptimeNanoseconds
            let r = try await service.requestApproval(ApprovalRequest(approver: "alice", lock: Self.group), requester: "bob-phone")
            _ = try await service.answerApproval(id: r.id, device: "alice-phone", .deny)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            clock.advance(1)
            return seconds
        }
    }
}

extension LockBenchBench {
    struct Approvals: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "approvals",
            abstract: "One push approval (request and answer, durable) on a site holding many settled requests, against one holding none.")
        @Option(help: "Settled requests the full site holds.") var stored = 4000
        @Option(help: "Approvals timed on each site; the median counts.") var samples = 200
        @Option(help: ArgumentHelp("Where the two databases go (default: the temporary directory).", valueName: "dir"))
        var directory: String?
        @Flag(help: "Print the results as one JSON document (the text goes to standard error).") var json = false

        func validate() throws {
            guard (0...100_000).contains(stored) else { throw ValidationError("--stored takes 0…100000") }
            guard (10...100_000).contains(samples) else { throw ValidationError("--samples takes 10…100000") }
        }

        func run() async throws {
            let report = BenchReport("approvals", parameters: ["stored": "\(stored)", "samples": "\(samples)"], json: json)
            let status: Int32
            do {
                status = report.finish(try await ApprovalBenchmark.run(stored: stored, samples: samples,
                                                                       directory: directory ?? FileManager.default.temporaryDirectory.path, report: report))
            } catch {
                status = report.finish(3, error: "approvals benchmark failed: \(error)")
            }
            if status != 0 { throw ExitCode(status) }
        }
    }
}
