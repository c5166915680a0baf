import ByteCore
import Foundation
import LockBenchTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A newcomer's usual mistakes (issue 23 §1), made with the real binaries: each ends at once with
/// a message that names what was wrong and the exit code of the README's table, never a hang, a
/// crash or silence. Every run has a deadline (`timeout`), so a regression fails instead of hanging.
final class NewcomerEndToEndTests: XCTestCase {
    /// A TCP port on 127.0.0.1 that this test process listens on (the "other program").
    func occupiedPort() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        XCTAssertEqual(bound, 0, "bind")
        XCTAssertEqual(listen(fd, 4), 0, "listen")
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return (fd, Int(UInt16(bigEndian: addr.sin_port)))
    }

    /// The README walkthrough's site (keys, a document, the lock's configuration) in a new directory.
    func lockSite() throws -> URL {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        for command in try ReadmeTests.walkthrough() where command.first != "lock" {
            let r = try LockBenchProcess.run(command, currentDirectory: dir, timeout: 120)
            XCTAssertEqual(r.status, 0, "lockbench \(command.joined(separator: " ")): \(r.stderr)")
        }
        return dir
    }

    static func balanced(_ text: String) -> Bool {
        var depth = 0
        for c in text {
            if c == "(" { depth += 1 } else if c == ")" { depth -= 1; if depth < 0 { return false } }
        }
        return depth == 0
    }

    // MARK: Busy ports

    func testTrustAndPushServeRefuseABusyPortAtOnceNamingItAndItsHolder() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        XCTAssertEqual(try LockBenchProcess.run(["trust", "init", "site"], currentDirectory: dir, timeout: 120).status, 0)
        let (fd, port) = try occupiedPort()
        defer { close(fd) }
        for args in [["trust", "serve", "--site", "site", "--port", String(port)], ["push", "serve", "--port", String(port)]] {
            let started = Date()
            let r = try LockBenchProcess.run(args, currentDirectory: dir, timeout: 30)
            XCTAssertFalse(r.timedOut, "\(args.prefix(2)) on a busy port must not wait for ever")
            XCTAssertLessThan(Date().timeIntervalSince(started), 20, "at once")
            XCTAssertEqual(r.status, 3, "an environment failure: \(r.stdout)\(r.stderr)")
            XCTAssertTrue(r.stderr.contains("127.0.0.1:\(port)") && r.stderr.contains("in use"), r.stderr)
            XCTAssertTrue(r.stderr.contains("pid \(getpid())"), "the holder, from /proc: \(r.stderr)")
            XCTAssertFalse(r.stdout.contains("listening on"), r.stdout)
        }
    }

    func testPhoneRunOnABusyPortExits3WithoutTrapping() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        try LockBenchProcess.runEach(["key credential site/alice-phone", "key reader site/front-door"], in: dir)
        let (fd, port) = try occupiedPort()
        defer { close(fd) }
        let r = try LockBenchProcess.run(["phone", "run", "--trust", "http://127.0.0.1:9", "--device", "alice-phone",
                                          "--key", "site/alice-phone.key.pem", "--trust-reader", "site/front-door.reader.json",
                                          "--port", String(port)], currentDirectory: dir, timeout: 30)
        XCTAssertFalse(r.timedOut)
        XCTAssertEqual(r.status, 3, r.stderr)
        XCTAssertTrue(r.stderr.contains("127.0.0.1:\(port)"), r.stderr)
        XCTAssertFalse(r.stderr.contains("Fatal error"), "no trap (Client not shut down before the deinit): \(r.stderr)")
    }

    // MARK: phone run that cannot log in

    func testPhoneRunStopsAtOnceWhenTheTrustServiceIsUnreachable() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        try LockBenchProcess.runEach(["key credential site/alice-phone", "key reader site/front-door"], in: dir)
        let url = "http://127.0.0.1:\(ReadmeBlock.freePort())"
        let started = Date()
        let r = try LockBenchProcess.run(["phone", "run", "--trust", url, "--device", "alice-phone", "--code", "NOPE",
                                          "--key", "site/alice-phone.key.pem", "--trust-reader", "site/front-door.reader.json",
                                          "--port", "0"], currentDirectory: dir, timeout: 60)
        XCTAssertLessThan(Date().timeIntervalSince(started), 8, "at once, not after the request timeout")
        XCTAssertEqual(r.status, 3, r.stdout + r.stderr)
        XCTAssertTrue(r.stderr.contains(url + "/v1/token"), "the URL it tried: \(r.stderr)")
        XCTAssertTrue(Self.balanced(r.stderr), "parentheses balance: \(r.stderr)")
    }

    func testPhoneRunStopsWhenTheLoginIsRefused() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        try LockBenchProcess.runEach(["trust init site", "key credential site/alice-phone", "key reader site/front-door",
                                      "trust device add --site site --device alice-phone --user alice --credential-key site/alice-phone.pub.pem"], in: dir)
        let server = try InteractiveProcess(["trust", "serve", "--site", "site", "--port", "0"], currentDirectory: dir)
        defer { server.terminate() }
        let listening = try server.waitForLine(containing: "listening on", timeout: 60)
        let url = try XCTUnwrap(listening.range(of: "http://").map { String(listening[$0.lowerBound...]) })
        let r = try LockBenchProcess.run(["phone", "run", "--trust", url, "--device", "alice-phone", "--code", "WRONG-CODE",
                                          "--key", "site/alice-phone.key.pem", "--trust-reader", "site/front-door.reader.json",
                                          "--port", "0"], currentDirectory: dir, timeout: 60)
        XCTAssertFalse(r.timedOut)
        XCTAssertEqual(r.status, 1, "the service said no: \(r.stdout)\(r.stderr)")
        XCTAssertTrue(r.stderr.contains(url + "/v1/token"), r.stderr)
        XCTAssertTrue(r.stderr.contains("trust device enroll"), "how to get a new code: \(r.stderr)")
        XCTAssertTrue(Self.balanced(r.stderr), r.stderr)
    }

    // MARK: lock run without its reader

    /// True when a reader libnfc's acr122_usb driver could open is plugged in (then "no reader" cannot be tested).
    static var acr122Present: Bool {
        let root = "/sys/bus/usb/devices"
        for d in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
            if (try? String(contentsOfFile: "\(root)/\(d)/idVendor", encoding: .utf8))?.hasPrefix("072f") == true { return true }
        }
        return false
    }

    func testLockRunRefusesAnUnknownDriverAndStopsWithoutItsReader() throws {
        let dir = try lockSite()
        let config = ["lock", "run", "--config", "site/front-door.lock.json"]
        let bogus = try LockBenchProcess.run(config + ["--nfc", "bogus_driver"], currentDirectory: dir, timeout: 30)
        XCTAssertFalse(bogus.timedOut, "an unknown driver is refused, not retried for ever")
        XCTAssertEqual(bogus.status, 2, bogus.stderr)
        XCTAssertTrue(bogus.stderr.contains("bogus_driver") && bogus.stderr.contains("acr122_usb"), "names the drivers: \(bogus.stderr)")
        do {
            // Refused before the state directory is taken: a running lock does not turn the typo into "in use".
            let running = try InteractiveProcess(config + ["--nfc", "virtual"], currentDirectory: dir)
            defer { running.terminate() }
            _ = try running.waitForLine(containing: "ECP polling on", timeout: 60)
            let again = try LockBenchProcess.run(config + ["--nfc", "bogus_driver"], currentDirectory: dir, timeout: 30)
            XCTAssertEqual(again.status, 2, again.stderr)
        }

        if !Self.acr122Present {
            let usb = try LockBenchProcess.run(config + ["--nfc", "acr122_usb"], currentDirectory: dir, timeout: 30)
            XCTAssertFalse(usb.timedOut, "a reader that is not there stops the lock")
            XCTAssertEqual(usb.status, 3, usb.stderr)
            XCTAssertTrue(usb.stderr.contains("lsusb") && usb.stderr.contains("--wait-for-reader"), "the fix and the way to wait: \(usb.stderr)")
        }
        let ble = try LockBenchProcess.run(config + ["--ble", "hci0"], currentDirectory: dir, timeout: 30)
        XCTAssertFalse(ble.timedOut)
        XCTAssertEqual(ble.status, 3, ble.stderr)
        XCTAssertTrue(ble.stderr.contains("hci0"), ble.stderr)
        XCTAssertTrue(["modprobe", "btmgmt", "setcap", "systemctl"].contains { ble.stderr.contains($0) }, "the fixing command: \(ble.stderr)")
    }

    func testWaitForReaderSaysSoOnceAndShowsEachRetryOnATerminal() throws {
        try XCTSkipIf(Self.acr122Present, "an ACR122 is plugged in")
        let dir = try lockSite()
        let args = ["lock", "run", "--config", "site/front-door.lock.json", "--nfc", "acr122_usb", "--wait-for-reader"]
        // Off a terminal: one line, then quiet.
        let piped = try InteractiveProcess(args, currentDirectory: dir)
        defer { piped.terminate() }
        _ = try piped.waitForLine(containing: "waiting for it (--wait-for-reader)", timeout: 30)
        Thread.sleep(forTimeInterval: 2)
        XCTAssertTrue(piped.process.isRunning, "it waits")
        XCTAssertEqual(piped.allLines.filter { $0.contains("waiting") }.count, 1, piped.allLines.joined(separator: "\n"))
        piped.terminate()   // the state directory is the lock's while it runs
        // On a terminal: every retry shown.
        let terminal = try TerminalSession(([LockBenchProcess.binary.path] + args).joined(separator: " "), currentDirectory: dir)
        defer { terminal.terminate() }
        try terminal.waitFor("waiting for it (--wait-for-reader)")
        try terminal.waitFor("attempt 3 failed", timeout: 30)
    }

    // MARK: consoles

    /// With --no-console the commands that take commands on stdin leave it alone: `quit` typed
    /// there stops nothing.
    func testNoConsoleLeavesStdinAlone() throws {
        let dir = try lockSite()
        let commands: [[String]] = [
            ["lock", "run", "--config", "site/front-door.lock.json", "--nfc", "virtual", "--no-console"],
            ["nfc", "virtual-reader", "--no-card", "--no-console"],
            ["phone", "run", "--trust", "http://127.0.0.1:9", "--device", "alice-phone", "--key", "site/alice-phone.key.pem",
             "--trust-reader", "site/front-door.reader.json", "--port", "0", "--no-console"],
        ]
        for args in commands {
            let p = try InteractiveProcess(args, currentDirectory: dir)
            defer { p.terminate() }
            Thread.sleep(forTimeInterval: 1.5)
            XCTAssertTrue(p.process.isRunning, "\(args.prefix(2)) started: \(p.allLines)")
            p.send("quit")
            Thread.sleep(forTimeInterval: 1.5)
            XCTAssertTrue(p.process.isRunning, "\(args.prefix(2)) --no-console: `quit` on stdin is not read: \(p.allLines)")
        }
    }

    /// The README's "Keys that stay current" block typed into an interactive shell on a terminal,
    /// as a person types it: `trust serve … &` and `phone run … &` are background jobs of a shell
    /// with job control, so a read of the terminal would stop them (SIGTTIN) and `lock transact`
    /// would find no phone. Each line is typed once the one before has shown it is ready.
    func testTheKeysBlockWorksTypedIntoAnInteractiveShell() throws {
        try XCTSkipUnless(TerminalSession.available, "util-linux script is not installed")
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let lines = try ReadmeBlock(opening: "lockbench trust init").lines.map(\.raw)
        let httpPort = String(ReadmeBlock.freePort()), phonePort = String(ReadmeBlock.freePort())
        let shell = try TerminalSession.interactiveShell(in: dir)
        defer { shell.endInteractiveShell() }
        // A prompt that shows the last exit status, to check each foreground command by.
        shell.type("PS1='[rc=$?]$ '")
        var position = try shell.waitFor("[rc=0]$ ", timeout: 30)
        var code = ""
        for raw in lines {
            var line = raw.replacingOccurrences(of: "8480", with: httpPort).replacingOccurrences(of: "5000", with: phonePort)
            if line.contains("scenario run") { break }   // the rest is not about background jobs
            line = line.replacingOccurrences(of: "--code CODE", with: "--code \(code)")
            shell.type(line)
            if line.contains("trust serve") {
                position = try shell.waitFor("listening on", from: position, timeout: 60)
            } else if line.contains("phone run") {
                position = try shell.waitFor("polled", from: position, timeout: 60)
            } else {
                position = try shell.waitFor("[rc=", from: position, timeout: 120)
                let shown = shell.shown
                let after = String(shown[shown.index(shown.startIndex, offsetBy: position)...].prefix(3))
                XCTAssertTrue(after.hasPrefix("0]"), "\(line) exits 0: \(shown.suffix(1500))")
            }
            if line.contains("trust device add") {
                let shown = shell.shown
                let marker = try XCTUnwrap(shown.range(of: "login code: ", options: .backwards), "trust device add prints a login code: \(shown.suffix(1500))")
                code = String(shown[marker.upperBound...].prefix { !$0.isWhitespace })
            }
        }
        let shown = shell.shown
        XCTAssertFalse(shown.contains("Stopped"), "no background job is stopped by the terminal: \(shown.suffix(2000))")
        XCTAssertFalse(shown.contains("link_lost"), shown.suffix(2000).description)
        XCTAssertTrue(shown.lowercased().contains("granted"), "lock transact: granted: \(shown.suffix(2000))")
    }

    /// The README's "Virtual locks in CI" block typed into an interactive shell: the reader and
    /// the lock both run as background jobs of a shell with job control, the phone is tapped
    /// through the reader's --control FIFO, and the lock prints its JSON grant.
    func testTheVirtualLockBlockWorksTypedIntoAnInteractiveShell() throws {
        try XCTSkipUnless(TerminalSession.available, "util-linux script is not installed")
        let dir = try lockSite()
        let link = dir.appendingPathComponent("reader").path, control = dir.appendingPathComponent("reader.ctl").path
        let lines = try ReadmeBlock(after: "### Virtual locks in CI").lines.map(\.raw)
        XCTAssertTrue(lines.contains { $0.contains("echo insert > /tmp/reader.ctl") }, "\(lines)")
        let shell = try TerminalSession.interactiveShell(in: dir)
        defer { shell.endInteractiveShell() }
        shell.type("PS1='[rc=$?]$ '")
        var position = try shell.waitFor("[rc=0]$ ", timeout: 30)
        for raw in lines where !raw.hasPrefix("#") {
            let line = raw.replacingOccurrences(of: "/tmp/reader.ctl", with: control).replacingOccurrences(of: "/tmp/reader", with: link)
            shell.type(line)
            if line.contains("virtual-reader") {
                position = try shell.waitFor("control: ", from: position, timeout: 60)
            } else if line.contains("lock run") {
                position = try shell.waitFor("reader-opened", from: position, timeout: 60)
            } else if line.contains("echo insert") {
                position = try shell.waitFor("\"kind\":\"granted\"", from: position, timeout: 60)
            }
        }
        let shown = shell.shown
        XCTAssertFalse(shown.contains("Stopped"), "no background job is stopped by the terminal: \(shown.suffix(2000))")
        XCTAssertTrue(shown.contains("console off"), "the background jobs say their console is off: \(shown.suffix(2000))")
    }

    // MARK: fleet

    func testCtrlCDuringFleetPrintsTheSummarySoFarAndRemovesItsDirectory() throws {
        let tmp = try LockBenchProcess.temporaryDirectory(self)
        let p = Process()
        p.executableURL = LockBenchProcess.binary
        p.arguments = ["fleet", "--locks", "2", "--phones", "2", "--duration", "5m", "--rate", "20", "--workers", "2"]
        p.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": tmp.path + "/"]) { $1 }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        let stderrSeen = Monitor("")
        err.fileHandleForReading.readabilityHandler = { h in
            let d = h.availableData
            stderrSeen.withLock { $0 += String(decoding: d, as: UTF8.self) }
        }
        try p.run()
        defer {
            if p.isRunning { kill(p.processIdentifier, SIGKILL) }
            err.fileHandleForReading.readabilityHandler = nil
        }
        let deadline = Date().addingTimeInterval(90)
        let (started, seen) = stderrSeen.wait(until: deadline, for: { $0.contains("fleet: tapping") }) { text, ready in (ready, text) }
        XCTAssertTrue(started, "the load started: \(seen)")
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: tmp.path).isEmpty, "the run made its temporary directory")
        Thread.sleep(forTimeInterval: 1.5)
        kill(p.processIdentifier, SIGINT)
        let exitDeadline = Date().addingTimeInterval(60)
        while p.isRunning && Date() < exitDeadline { Thread.sleep(forTimeInterval: 0.1) }
        XCTAssertFalse(p.isRunning, "fleet ends after Ctrl-C")
        let summary = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(p.terminationStatus, 130, summary)
        XCTAssertTrue(summary.contains("interrupted") && summary.contains("granted"), "the summary so far: \(summary)")
        XCTAssertTrue(summary.contains("consistent"), "every tap made is in the audit logs: \(summary)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmp.path), [], "its temporary directory is removed")
    }
    // MARK: lock run's clocks

    static func waitForExit(_ p: InteractiveProcess, timeout: TimeInterval = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while p.process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        return !p.process.isRunning
    }

    /// Decisions are stamped on the lock's clock and radio events on the wall clock, each line
    /// saying which; a clock advance kept in the state is announced by the next run.
    func testLockRunLabelsItsClocksAndSaysWhenTheLockIsNotOnWallTime() throws {
        let dir = try lockSite()
        let args = ["lock", "run", "--config", "site/front-door.lock.json", "--nfc", "virtual"]
        let first = try InteractiveProcess(args, currentDirectory: dir)
        defer { first.terminate() }
        _ = try first.waitForLine(containing: "ECP polling on", timeout: 60)
        first.send("tap site/alice-phone.key.pem site/alice.access.cbor")
        let granted = try first.waitForLine(containing: "GRANTED", timeout: 60)
        XCTAssertTrue(granted.contains("(lock clock)"), granted)
        let arrived = try XCTUnwrap(first.allLines.first { $0.contains("card arrived") })
        XCTAssertTrue(arrived.contains("(wall clock)"), arrived)
        for line in first.allLines where line.hasPrefix("20") {
            XCTAssertTrue(line.contains("(lock clock)") != line.contains("(wall clock)"), "one clock per line: \(line)")
        }
        XCTAssertFalse(first.allLines.contains { $0.contains("the lock's clock") }, "on wall time: nothing to say")
        first.send("clock advance 9h")
        _ = try first.waitForLine(containing: "clock 20", timeout: 30)
        first.send("quit")
        XCTAssertTrue(Self.waitForExit(first), "quit stops the lock")

        let second = try InteractiveProcess(args, currentDirectory: dir)
        defer { second.terminate() }
        let note = try second.waitForLine(containing: "the lock's clock runs", timeout: 60)
        XCTAssertTrue(note.contains("9h ahead of the wall clock") && note.contains("earlier run"), note)
        second.send("quit")
        XCTAssertTrue(Self.waitForExit(second))
    }

    // MARK: small ones

    func testSmallMistakesGetPlainWordsAndTheTableExitCode() throws {
        let dir = try lockSite()
        let issue = ["doc", "issue", "--credential", "site/alice-phone.pub.pem", "--reader-identity", "site/front-door.reader.json",
                     "--id", "bob", "--out", "site/bob.access.cbor"]
        // A public key where the private one belongs: said so, not "chmod 600".
        let publicKey = try LockBenchProcess.run(issue + ["--issuer-key", "site/issuer.pub.pem", "--valid-for", "8h"], currentDirectory: dir, timeout: 60)
        XCTAssertEqual(publicKey.status, 2, publicKey.stderr)
        XCTAssertTrue(publicKey.stderr.contains("is a public key") && publicKey.stderr.contains("site/issuer.key.pem"), publicKey.stderr)
        XCTAssertFalse(publicKey.stderr.contains("chmod"), publicKey.stderr)
        // A duration without its unit.
        let bare = try LockBenchProcess.run(issue + ["--issuer-key", "site/issuer.key.pem", "--valid-for", "8"], currentDirectory: dir, timeout: 60)
        XCTAssertEqual(bare.status, 2, bare.stderr)
        XCTAssertTrue(bare.stderr.contains("no unit") && bare.stderr.contains("s, m, h, d, w"), bare.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("site/bob.access.cbor").path))
        // A mistyped configuration path and a missing key: the same code, 2 (bad input).
        let config = try LockBenchProcess.run(["lock", "run", "--config", "site/front-dor.lock.json", "--nfc", "virtual"], currentDirectory: dir, timeout: 60)
        let key = try LockBenchProcess.run(issue + ["--issuer-key", "site/isuer.key.pem", "--valid-for", "8h"], currentDirectory: dir, timeout: 60)
        XCTAssertEqual(config.status, 2, config.stderr)
        XCTAssertEqual(key.status, 2, key.stderr)
        XCTAssertTrue(config.stderr.contains("site/front-dor.lock.json") && config.stderr.contains("no such file"), config.stderr)
        // The table says so (README and --help).
        let readme = try String(contentsOf: Repository.url("README.md"), encoding: .utf8)
        XCTAssertTrue(readme.contains("a file or NFC driver that does not exist, a duration without its unit"), "README exit codes")
    }
}
