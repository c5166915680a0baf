import AsyncHTTPClient
import Crypto
import Foundation
import HTTPServing
import LockBenchTestSupport
import NIOCore
import NIOSSL
import TrustCore
import TrustHTTP
import TrustModel
import XCTest

/// Issue 22 §1.6: connections that never send a complete request are closed; HTTPS with the
/// operator's certificate and key; /metrics behind a token; a warning when listening beyond
/// loopback in clear.
final class HTTPHygieneTests: XCTestCase {
    /// Raw TCP connections that send nothing, or half a request head, are closed by the server
    /// after the idle timeout; a complete request on a fresh connection is still answered.
    func testHalfOpenConnectionsAreClosedAfterTheIdleTimeout() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let server = try await TrustServer.start(service: f.service, idleTimeout: .seconds(1))
        defer { Task { await server.stop() } }
        let silent = try RawConnection(port: server.port)
        let half = try RawConnection(port: server.port)
        half.send("GET /healthz HTTP/1.1\r\nHost: x\r\n")
        let start = Date()
        XCTAssertTrue(silent.waitForClose(timeout: 10), "a silent connection stayed open")
        XCTAssertTrue(half.waitForClose(timeout: 10), "a connection with half a request head stayed open")
        XCTAssertLessThan(Date().timeIntervalSince(start), 8)
        let whole = try RawConnection(port: server.port)
        whole.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertTrue(whole.readAll(timeout: 5).contains("200 OK"))
    }

    func testHTTPSWithTheOperatorsCertificateAndAnOwnerOnlyKey() async throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let (cert, key) = try Self.selfSigned(in: dir)
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let server = try await TrustServer.start(service: f.service, tls: TLSFiles(certificateChain: cert, privateKey: key))
        defer { Task { await server.stop() } }
        XCTAssertTrue(server.baseURL.hasPrefix("https://"))
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        defer { _ = client.shutdown() }
        let ok = try await client.execute(HTTPClientRequest(url: server.baseURL + "/healthz"), timeout: .seconds(10))
        XCTAssertEqual(ok.status, .ok)
        // Plain HTTP to the HTTPS port gets no answer.
        let plain = try RawConnection(port: server.port)
        plain.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertFalse(plain.readAll(timeout: 3).contains("200 OK"))
        // A key others may read is refused, naming the fix.
        chmod(key, 0o644)
        do { _ = try await TrustServer.start(service: f.service, tls: TLSFiles(certificateChain: cert, privateKey: key)); XCTFail("a 0644 key served") } catch {
            XCTAssertTrue("\(error)".contains("chmod 600"), "\(error)")
        }
        chmod(key, 0o600)
        do { _ = try await TrustServer.start(service: f.service, tls: TLSFiles(certificateChain: key, privateKey: key)); XCTFail("a key as a certificate served") } catch {
            XCTAssertTrue("\(error)".contains("--tls-certificate"), "\(error)")
        }
    }

    func testMetricsNeedTheTokenWhenOneIsSet() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let server = try await TrustServer.start(service: f.service, registry: .init(), metricsToken: "0123456789abcdef-metrics")
        defer { Task { await server.stop() } }
        for (auth, expected) in [(nil, "401"), ("Bearer wrong-token-0123456789", "401"), ("Bearer 0123456789abcdef-metrics", "200 OK")] {
            let c = try RawConnection(port: server.port)
            c.send("GET /metrics HTTP/1.1\r\nHost: x\r\n" + (auth.map { "Authorization: \($0)\r\n" } ?? "") + "Connection: close\r\n\r\n")
            XCTAssertTrue(c.readAll(timeout: 5).contains(expected), "\(auth ?? "no token") → \(expected)")
        }
    }

    /// `trust serve --host 0.0.0.0` without TLS says why that is unwise, and serves no /metrics
    /// without a token; with TLS the warning is gone and the URL is https.
    func testServingBeyondLoopbackInClearIsWarnedAbout() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        _ = try LockBenchProcess.runEach(["trust init site"], in: dir)
        let clear = try InteractiveProcess(["trust", "serve", "--site", "site", "--host", "0.0.0.0", "--port", "0"], currentDirectory: dir)
        addTeardownBlock { clear.terminate() }
        let warning = try clear.waitForLine(containing: "without TLS", timeout: 60)
        XCTAssertTrue(warning.contains("0.0.0.0") && warning.contains("--tls-certificate"), warning)
        _ = try clear.waitForLine(containing: "/metrics is not served", timeout: 10)
        _ = try clear.waitForLine(containing: "listening on http://", timeout: 60)
        let (cert, key) = try Self.selfSigned(in: dir)
        let secure = try InteractiveProcess(["trust", "serve", "--site", "site", "--host", "0.0.0.0", "--port", "0", "--db", "sqlite:other.sqlite",
                                             "--tls-certificate", cert, "--tls-key", key, "--metrics-token", "0123456789abcdef"], currentDirectory: dir)
        addTeardownBlock { secure.terminate() }
        _ = try secure.waitForLine(containing: "listening on https://", timeout: 60)
        XCTAssertFalse(secure.allLines.contains { $0.contains("without TLS") }, "\(secure.allLines)")
    }

    /// A self-signed P-256 certificate for 127.0.0.1 and its key (mode 0600), by openssl.
    static func selfSigned(in dir: URL) throws -> (String, String) {
        let cert = dir.appendingPathComponent("tls.crt").path, key = dir.appendingPathComponent("tls.key").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
                       "-days", "2", "-subj", "/CN=127.0.0.1"]
        p.standardError = FileHandle.nullDevice
        try p.run(); p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw POSIXError(.ENOENT) }   // openssl is installed by .ci/run: a failure, never a skip
        chmod(key, 0o600)
        return (cert, key)
    }
}

/// A blocking loopback TCP connection for talking raw HTTP.
final class RawConnection {
    let fd: Int32
    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else { throw POSIXError(.ECONNREFUSED) }
    }
    deinit { close(fd) }
    func send(_ text: String) { _ = text.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) } }
    /// Waits until the server closes the connection (read returns 0 or fails).
    func waitForClose(timeout: TimeInterval) -> Bool {
        var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buf, buf.count)
            if n == 0 { return true }
            if n < 0 { return errno != EAGAIN && errno != EWOULDBLOCK }
        }
    }
    /// Everything the server sends until it closes or `timeout` passes.
    func readAll(timeout: TimeInterval) -> String {
        var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var out = [UInt8](), buf = [UInt8](repeating: 0, count: 4096)
        while out.count < 1 << 20 {
            let n = read(fd, &buf, buf.count)
            if n <= 0 { break }
            out += buf[0..<n]
            if String(decoding: out, as: UTF8.self).contains("\r\n\r\n") && !String(decoding: out, as: UTF8.self).contains("Connection: close") { break }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
