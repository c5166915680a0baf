import Crypto
import Foundation
@testable import TrustModel
@testable import TrustCore
@testable import TrustSQLite
@testable import TrustPostgres
@testable import TrustBackends
@testable import TrustHTTP
import LockBenchTestSupport
import TrustPhone
import XCTest

/// kill -9 of `lockbench trust serve` while phones rotate refresh tokens as fast as they can: the
/// database reopens with no family forked (at most one live token each, every used token's
/// successor present), and a phone whose answer was lost recovers inside the grace window.
final class CrashTests: XCTestCase {
    static let binary: URL = {
        var dir = Bundle.main.bundleURL
        for _ in 0..<3 {
            let candidate = dir.appendingPathComponent("lockbench")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir.deleteLastPathComponent()
        }
        fatalError("lockbench binary not found near \(Bundle.main.bundleURL.path)")
    }()

    /// `lockbench trust serve --site SITE --port 0 EXTRA…`: the process and the port it printed.
    static func serve(_ site: String, _ extra: [String] = []) throws -> (Process, Int) {
        try start(["trust", "serve", "--site", site, "--port", "0"] + extra)
    }

    /// Starts a `lockbench … serve --port 0` and returns it with the port it printed.
    static func start(_ arguments: [String]) throws -> (Process, Int) {
        let p = Process()
        p.executableURL = Self.binary
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let pattern = #"listening on http://127\.0\.0\.1:(\d+)"#
        let seen = LockBenchProcess.readOutput(of: p, from: out, timeout: 60) { $0.range(of: pattern, options: .regularExpression) != nil }
        if let r = seen.range(of: pattern, options: .regularExpression), let port = Int(seen[r].split(separator: ":").last ?? "") {
            return (p, port)
        }
        p.terminate()
        throw TrustError(.invalidRequest, "\(arguments.prefix(2).joined(separator: " ")) did not start: \(seen)")
    }

    func testKillDuringRotationsNeverForksAFamily() async throws {
        let dir = NSTemporaryDirectory() + "lockbench-crash-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var settings = TrustSettings()
        settings.refreshGrace = 300   // the restart on a loaded machine must fit inside it
        let site = try TrustSite.create(at: dir, settings: settings)
        var codes = [String]()
        do {
            let service = try await site.service()
            for i in 0..<8 { codes.append(try await service.addDevice(id: "p\(i)", user: "u\(i)", credentialKey: Array(P256.Signing.PrivateKey().publicKey.x963Representation))) }
            try await service.storage.close()
        }
        var (server, port) = try Self.serve(dir)
        var client = TrustClient(baseURL: "http://127.0.0.1:\(port)", timeout: .seconds(5))
        var refresh = [String]()
        for c in codes { refresh.append(try await client.token([("grant_type", "authorization_code"), ("code", c)]).refresh_token) }

        // Rotate from 8 phones at once; kill -9 the server mid-stream.
        let tokens = TokenBox(refresh)
        let rotating = Task { [client] in
            await withTaskGroup(of: Void.self) { g in
                for i in 0..<8 {
                    g.addTask {
                        while !Task.isCancelled {
                            guard let r = try? await client.token([("grant_type", "refresh_token"), ("refresh_token", tokens.get(i))]) else { return }
                            tokens.set(i, r.refresh_token)
                        }
                    }
                }
            }
        }
        try await Task.sleep(nanoseconds: 700_000_000)
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        await rotating.value
        await client.shutdown()
        XCTAssertEqual(server.terminationReason, .uncaughtSignal)

        // The database after the crash.
        let storage = try await SQLiteTrustStorage.open(path: site.databasePath)
        var rotations = 0
        for i in 0..<8 {
            let hash = TokenAuthority.hash(refresh[i])
            let family = try await storage.read { tx in try await tx.refreshToken(hash: hash)!.family }
            let all = try await storage.read { tx in try await tx.refreshTokens(family: family) }
            rotations += all.count - 1
            XCTAssertEqual(all.filter { $0.state == .active }.count, 1, "family of p\(i): one live token")
            for t in all where t.state == .used {
                XCTAssertTrue(all.contains { $0.hash == t.successor }, "a used token's successor was written with it")
            }
        }
        try await storage.close()
        XCTAssertGreaterThan(rotations, 8, "the phones were rotating when the server died")

        // Restart: each phone resumes with the last token it holds; one whose answer was lost
        // presents the used token again, inside the grace window, and gets a live one.
        (server, port) = try Self.serve(dir)
        defer { server.terminate(); server.waitUntilExit() }
        client = TrustClient(baseURL: "http://127.0.0.1:\(port)", timeout: .seconds(5))
        for i in 0..<8 {
            let r = try await client.token([("grant_type", "refresh_token"), ("refresh_token", tokens.get(i))])
            _ = try await client.token([("grant_type", "refresh_token"), ("refresh_token", r.refresh_token)])
        }
        await client.shutdown()
    }
}

final class TokenBox: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String]
    init(_ v: [String]) { values = v }
    func get(_ i: Int) -> String { lock.lock(); defer { lock.unlock() }; return values[i] }
    func set(_ i: Int, _ v: String) { lock.lock(); values[i] = v; lock.unlock() }
}
