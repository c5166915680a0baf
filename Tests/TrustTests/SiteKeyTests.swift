import Foundation
@testable import TrustCore
import TrustModel
import XCTest

/// Issue 22 §1.1: the site's private keys are written as the lock's are (mode 0600 from the first
/// byte) and read with the same checks (owner-only, P-256 only).
final class SiteKeyTests: XCTestCase {
    func directory() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-sitekeys-\(UUID().uuidString.prefix(8))").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        return dir
    }

    /// A watcher reads every file others may read while sites are created with umask 0: none ever
    /// holds a private key, not for an instant.
    func testNoKeyIsReadableByOthersAtAnyMoment() throws {
        let root = directory()
        let old = umask(0)
        defer { umask(old) }
        let stop = Flag(), seen = Violations()
        let watcher = Thread {
            while !stop.value {
                for site in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
                    // Any file others may read (temporary files included) must not hold a private key.
                    for name in (try? FileManager.default.contentsOfDirectory(atPath: root + "/" + site)) ?? [] {
                        let path = root + "/" + site + "/" + name
                        var st = stat()
                        guard stat(path, &st) == 0, st.st_mode & 0o077 != 0,
                              let text = try? String(contentsOfFile: path, encoding: .utf8), text.contains("PRIVATE KEY") else { continue }
                        seen.add("\(name) \(String(st.st_mode & 0o777, radix: 8))")
                    }
                }
            }
        }
        watcher.start()
        for i in 0..<40 { _ = try TrustSite.create(at: root + "/s\(i)") }
        stop.value = true
        Thread.sleep(forTimeInterval: 0.05)
        XCTAssertEqual(seen.all, [], "a private key file was readable by others")
        for i in 0..<40 {
            for name in [TrustSite.issuerKeyFile, TrustSite.tokenKeyFile] {
                var st = stat()
                XCTAssertEqual(stat(root + "/s\(i)/" + name, &st), 0)
                XCTAssertEqual(st.st_mode & 0o777, 0o600, name)
            }
        }
    }

    func testAKeyReadableByOthersOrOnAnotherCurveIsRefused() throws {
        let dir = directory() + "/site"
        _ = try TrustSite.create(at: dir)
        let issuer = dir + "/" + TrustSite.issuerKeyFile
        chmod(issuer, 0o644)
        XCTAssertThrowsError(try TrustSite.open(dir)) { XCTAssertTrue("\($0)".contains("chmod 600"), "\($0)") }
        chmod(issuer, 0o600)
        _ = try TrustSite.open(dir)
        // A secp256k1 token key (what `openssl genpkey … secp256k1` writes).
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:secp256k1", "-out", dir + "/" + TrustSite.tokenKeyFile]
        try p.run(); p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "openssl is needed (apt-get install openssl)")
        chmod(dir + "/" + TrustSite.tokenKeyFile, 0o600)
        XCTAssertThrowsError(try TrustSite.open(dir)) { XCTAssertTrue("\($0)".contains("secp256k1"), "\($0)") }
    }
}

private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var v = false
    var value: Bool { get { lock.withLock { v } } set { lock.withLock { v = newValue } } }
}

private final class Violations: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ s: String) { lock.withLock { list.append(s) } }
    var all: [String] { lock.withLock { list } }
}
