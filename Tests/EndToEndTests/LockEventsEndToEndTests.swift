import ByteCore
import Foundation
import LockBenchTestSupport
import XCTest

/// `lock run --events unix:PATH`: the lock's events as JSON lines for a viewer (a bench console)
/// on a Unix-domain socket, read here by a plain socket client as any viewer would.
final class LockEventsEndToEndTests: XCTestCase {
    func testAViewerGetsTheStartAndEachTapsDecisionAtOnce() throws {
        let (dir, socketPath, lock) = try Self.demoLockWithEvents(self)
        defer { lock.terminate() }
        var info = stat()
        XCTAssertEqual(lstat(socketPath, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600, "events name credentials: the socket is the owner's only")

        // A viewer that connects after the start still learns which lock it watches.
        let viewer = try Viewer(path: socketPath)
        let started = try viewer.nextEvent(timeout: 5)
        XCTAssertEqual(started["kind"] as? String, "started", "\(started)")
        let summary = try XCTUnwrap(started["lock"] as? [String: Any], "\(started)")
        XCTAssertEqual(summary["model"] as? String, "Schlage NDE")
        XCTAssertEqual(summary["bolt"] as? String, "secured")
        XCTAssertNotNil(summary["clockTrusted"] as? Bool)

        lock.send("tap \(dir.path)/carol.key.pem \(dir.path)/carol.access.cbor")
        let tapped = Date()
        var decision: [String: Any] = [:]
        while decision["kind"] as? String != "granted" { decision = try viewer.nextEvent(timeout: 5) }
        let delay = Date().timeIntervalSince(tapped)
        XCTAssertLessThan(delay, 1, "the decision reaches the viewer within a second of the tap")
        XCTAssertEqual(decision["credential"] as? String, "6361726f6c")
        XCTAssertEqual(decision["clock"] as? String, "lock")
        // Then its APDUs, each payload the lock sealed or opened itself shown in the clear.
        var apdus: [String: Any] = [:]
        while apdus["kind"] as? String != "apdus" { apdus = try viewer.nextEvent(timeout: 5) }
        XCTAssertEqual(apdus["transaction"] as? String, decision["transaction"] as? String)
        let lines = try XCTUnwrap(apdus["apdus"] as? [[String: Any]], "\(apdus)")
        func opened(_ label: String, _ direction: String) -> [String] {
            lines.first { $0["label"] as? String == label && $0["direction"] as? String == direction && $0["opened"] != nil }?["opened"] as? [String] ?? []
        }
        let exchange = opened("EXCHANGE", "reader → phone"), answer = opened("EXCHANGE", "phone → reader")
        XCTAssertTrue(exchange.contains { $0.contains("reader status") || $0.hasPrefix("97") }, "the closing EXCHANGE in the clear: \(exchange)")
        XCTAssertTrue(answer.first?.contains("status 0000 success") ?? false, "the phone's answer in the clear: \(answer)")
        XCTAssertNil(lines.first { $0["label"] as? String == "SELECT" }?["opened"], "SELECT is not encrypted: nothing to open")
        // The same event on the lock's own output: one stream, two readers.
        XCTAssertTrue(try lock.waitForLine(containing: "GRANTED").contains("6361726f6c"))

        // A second viewer that reads nothing changes nothing for the first (sends never block).
        let idle = try Viewer(path: socketPath)
        lock.send("remove")
        lock.send("tap \(dir.path)/alice.key.pem \(dir.path)/alice.access.cbor")
        var denied: [String: Any] = [:]
        while denied["kind"] as? String != "denied" { denied = try viewer.nextEvent(timeout: 5) }
        XCTAssertEqual(denied["reason"] as? String, "revoked")
        _ = idle

        kill(lock.process.processIdentifier, SIGTERM)
        XCTAssertTrue(lock.process.waitUntilExit(timeout: 15))
        XCTAssertEqual(lock.process.terminationStatus, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socketPath), "the socket file goes with the lock")
    }

    /// The demo's site, and its lock running on a virtual PN532 with `--events` on a socket in it.
    static func demoLockWithEvents(_ test: XCTestCase) throws -> (URL, String, InteractiveProcess) {
        let dir = try LockBenchProcess.temporaryDirectory(test)
        XCTAssertEqual(try LockBenchProcess.run(["demo", "--directory", dir.path]).status, 0)
        let socketPath = dir.appendingPathComponent("events.sock").path
        let lock = try InteractiveProcess(["lock", "run", "--config", dir.appendingPathComponent("lock.json").path,
                                           "--nfc", "virtual", "--events", "unix:" + socketPath])
        _ = try lock.waitForLine(containing: "ECP polling on")
        return (dir, socketPath, lock)
    }

    func testABadEventsSpecOrAPathThatIsNotASocketIsRefused() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        XCTAssertEqual(try LockBenchProcess.run(["demo", "--directory", dir.path]).status, 0)
        let config = dir.appendingPathComponent("lock.json").path
        let bad = try LockBenchProcess.run(["lock", "run", "--config", config, "--nfc", "virtual", "--events", "/tmp/x.sock", "--no-console"], timeout: 60)
        XCTAssertEqual(bad.status, 2, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("unix:PATH"), bad.stderr)
        let file = dir.appendingPathComponent("notes.txt").path
        try "keep me".write(toFile: file, atomically: true, encoding: .utf8)
        let taken = try LockBenchProcess.run(["lock", "run", "--config", config, "--nfc", "virtual", "--events", "unix:" + file, "--no-console"], timeout: 60)
        XCTAssertEqual(taken.status, 3, taken.stderr)
        XCTAssertTrue(taken.stderr.contains("is not a socket"), taken.stderr)
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), "keep me", "a file that is not a socket is never removed")
    }
}

/// A viewer: a Unix-domain socket client reading JSON lines, each read with a deadline.
private final class Viewer {
    let fd: Int32
    private var pending = [UInt8]()

    init(path: String) throws {
        fd = UnixSocketAddress.streamSocket()
        let rc = try XCTUnwrap(UnixSocketAddress(path: path)).connect(fd)
        guard rc == 0 else { throw POSIXError(.ECONNREFUSED) }
    }
    deinit { close(fd) }

    func nextEvent(timeout: TimeInterval) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let nl = pending.firstIndex(of: 0x0A) {
                let line = Array(pending[..<nl])
                pending.removeFirst(nl + 1)
                return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw LineTimeout(expected: "an event line", seen: [String(decoding: pending, as: UTF8.self)]) }
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, Int32(left * 1000)) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = read(fd, &buffer, buffer.count)
            guard n > 0 else { throw LineTimeout(expected: "an event line (the lock closed the socket)", seen: []) }
            pending += buffer[0..<n]
        }
    }
}

/// The bench console (`lockbench console`) in a real browser: headless Chromium driven by
/// Selenium shows a granted and a denied tap, each within a second of the tap, with its reason;
/// the screenshots are kept in .build/test-artifacts/console.
final class ConsoleBrowserTests: XCTestCase {
    func testATapThroughTheVirtualPN532AppearsOnThePageWithinASecond() throws {
        let (dir, socketPath, lock) = try LockEventsEndToEndTests.demoLockWithEvents(self)
        defer { lock.terminate() }
        let (console, url) = try BrowserScript.console(["--lock", "unix:" + socketPath])
        defer { console.terminate() }
        let shots = try BrowserScript.screenshots
        let taps = [("granted", "carol"), ("granted", "carol"), ("denied", "alice")]   // standard, then FAST, then a revoked phone
        let browser = try BrowserScript("console_browser.py", [url, shots.path] + taps.map(\.0))
        let seen = browser.read(timeout: 90) { $0.contains("ready\n") }
        XCTAssertTrue(seen.contains("ready"), "headless Chromium (apt chromium chromium-driver, pip selenium) did not show the lock: \(seen)\(browser.errorText)")
        XCTAssertTrue(seen.contains(#"landmarks ["header", "main", "section", "section", "section", "section"]"#), seen)
        XCTAssertTrue(seen.contains(#""certification": "Schlage NDE 02.12.72: certified""#) && seen.contains(#""bolt": "secured""#)
                      && seen.contains(#""clock": "trusted, "#), "the lock panel: \(seen)")

        var rows: [(kind: String, delay: Double, text: String)] = []
        for (n, (kind, tap)) in taps.enumerated() {
            if n > 0 { lock.send("remove") }
            let tapped = Date().timeIntervalSince1970
            lock.send("tap \(dir.path)/\(tap).key.pem \(dir.path)/\(tap).access.cbor")
            browser.read(timeout: 40) { $0.contains("row \(n + 1) \(kind) ") }
            let line = try XCTUnwrap(browser.line(startingWith: "row \(n + 1) \(kind) "), browser.seen + browser.errorText)
            let words = line.split(separator: " ", maxSplits: 4)
            let appeared = try XCTUnwrap(Double(words[3]))
            rows.append((kind, appeared - tapped, String(words[4])))
        }
        print("console: tap to page \(rows.map { "\($0.kind) \(Int($0.delay * 1000)) ms" }.joined(separator: ", ")); screenshots in \(shots.path)")
        for row in rows { XCTAssertLessThan(row.delay, 1, "\(row.kind) row on the page \(row.delay) s after the tap") }
        XCTAssertTrue(rows[0].text.contains("GRANTED") && rows[0].text.contains("6361726f6c") && rows[0].text.contains("standard"), rows[0].text)
        XCTAssertTrue(rows[1].text.contains("GRANTED") && rows[1].text.contains("FAST"), "the second tap is FAST: \(rows[1].text)")
        XCTAssertTrue(rows[2].text.contains("DENIED") && rows[2].text.contains("revoked"), rows[2].text)
        // Each row opens onto its APDUs, named as trace names them.
        for row in rows {
            XCTAssertTrue(row.text.contains("→ SELECT ;") && row.text.contains("→ AUTH0") && row.text.contains("← 9000 normal processing"), row.text)
        }
        XCTAssertTrue(rows[2].text.contains("ENVELOPE"), "the denied phone stepped up: \(rows[2].text)")
        // The payloads the lock opened itself, in the clear: its DeviceRequest and the phone's
        // documents; on the FAST tap the cryptogram, opened with the cached key.
        XCTAssertTrue(rows[2].text.contains("decrypted by the lock") && rows[2].text.contains("DeviceResponse"), rows[2].text)
        XCTAssertTrue(rows[0].text.contains("decrypted by the lock"), rows[0].text)
        XCTAssertTrue(rows[1].text.contains("FAST cryptogram"), rows[1].text)
        // The lock panel follows: the audit chain grows by one entry per decision (its head
        // changes), the bolt is the decision's, and the NFC radio has a state.
        var panels: [[String: String]] = []
        for (n, (kind, _)) in taps.enumerated() {
            let prefix = "panel \(n + 1) \(kind) "
            browser.read(timeout: 20) { $0.contains(prefix) }
            let line = try XCTUnwrap(browser.line(startingWith: prefix), browser.seen + browser.errorText)
            panels.append(try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.dropFirst(prefix.count).utf8)) as? [String: String]))
        }
        func entries(_ panel: [String: String]) -> Int? {
            let words = (panel["audit"] ?? "").split(separator: " ")
            return words.firstIndex(of: "entries,").flatMap { $0 > 0 ? Int(words[$0 - 1]) : nil }
        }
        XCTAssertTrue(panels[0]["audit"]?.hasPrefix("intact; ") ?? false, "\(panels)")
        XCTAssertEqual(entries(panels[1]), entries(panels[0]).map { $0 + 1 }, "one audit entry per decision: \(panels)")
        XCTAssertEqual(entries(panels[2]), entries(panels[0]).map { $0 + 2 }, "one audit entry per decision: \(panels)")
        XCTAssertNotEqual(panels[0]["audit"], panels[1]["audit"])
        XCTAssertTrue(panels.allSatisfy { $0["bolt"]?.contains("after the last decision") ?? false }, "\(panels)")
        XCTAssertTrue(panels[1]["radios"]?.contains("nfc") ?? false, "\(panels)")
        // The latency plot has one point per decision, its summary the decision's path.
        XCTAssertEqual(panels.map { $0["plotted"] }, ["1", "2", "3"], "\(panels)")
        XCTAssertTrue(panels[1]["latency"]?.contains("n=") ?? false, "\(panels)")
        for n in ["console-1-granted.png", "console-2-granted.png", "console-3-denied.png"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: shots.appendingPathComponent(n).path)[.size] as? Int) ?? 0
            XCTAssertGreaterThan(size, 10_000, "screenshot \(n)")
        }
    }
}
