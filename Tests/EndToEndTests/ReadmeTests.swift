import Foundation
import LockBenchTestSupport
import XCTest

/// The README's walkthrough, run as written: if a flag in it changes, this fails.
final class ReadmeTests: XCTestCase {
    /// The `lockbench …` commands of the README's first "emulated lock" block, continuation lines joined.
    /// The `lockbench …` commands of the README's first "emulated lock" block, continuation lines joined.
    static func walkthrough() throws -> [[String]] {
        try ReadmeBlock(opening: "lockbench key issuer").lines.compactMap(\.lockbenchArguments)
    }

    func testTheEmulatedLockWalkthroughWorksAsWritten() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let commands = try Self.walkthrough()
        XCTAssertEqual(commands.count, 6, "\(commands)")
        for command in commands where command.first != "lock" {
            let result = try LockBenchProcess.run(command, currentDirectory: dir)
            XCTAssertEqual(result.status, 0, "lockbench \(command.joined(separator: " ")): \(result.stderr)")
        }
        let run = try XCTUnwrap(commands.last)
        XCTAssertEqual(Array(run.prefix(2)), ["lock", "run"])
        let lock = try InteractiveProcess(run, currentDirectory: dir)
        defer { lock.terminate() }
        _ = try lock.waitForLine(containing: "ECP polling on")
        lock.send("tap site/alice-phone.key.pem site/alice.access.cbor")
        let granted = try lock.waitForLine(containing: "GRANTED")
        XCTAssertTrue(granted.contains("credential=616c696365"), granted)
        lock.send("quit")
        lock.process.waitUntilExit()
        XCTAssertEqual(lock.process.terminationStatus, 0)
    }
}

/// The README's "Test your own phone or reader" block, run as written after the walkthrough's
/// setup: commands ending in `&` run in the background, `lock transact` runs once per check until
/// the conformance run before it ends, everything else must exit 0.
final class ReadmeConformanceTests: XCTestCase {
    static func block() throws -> [String] {
        try ReadmeBlock(after: "### Test your own phone or reader").lines.map(\.command).filter { $0.hasPrefix("lockbench ") }
    }

    func testTheConformanceCommandsRunAsWritten() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        for command in try ReadmeTests.walkthrough() where command.first != "lock" {
            XCTAssertEqual(try LockBenchProcess.run(command, currentDirectory: dir).status, 0, "\(command)")
        }
        let lines = try Self.block()
        XCTAssertEqual(lines.count, 6, "\(lines)")
        var background: InteractiveProcess?
        for line in lines {
            var words = line.split(separator: " ").map(String.init).dropFirst()
            let detached = words.last == "&"
            if detached { words = words.dropLast() }
            let args = Array(words)
            if detached {
                let p = try InteractiveProcess(args, currentDirectory: dir)
                addTeardownBlock { p.terminate() }
                _ = try p.waitForLine(containing: "listening on")
                background = p
            } else if args.starts(with: ["lock", "transact"]), let conformance = background {
                for _ in 0..<40 where conformance.process.isRunning {
                    _ = try LockBenchProcess.run(args, currentDirectory: dir)
                }
                conformance.process.waitUntilExit()
                XCTAssertEqual(conformance.process.terminationStatus, 0, "conformance reader as written in the README")
            } else {
                let r = try LockBenchProcess.run(args, currentDirectory: dir)
                XCTAssertEqual(r.status, 0, "lockbench \(args.joined(separator: " "))\n\(r.stdout)\n\(r.stderr)")
                if args.first == "conformance" { XCTAssertTrue(r.stdout.contains(" 0 failed"), r.stdout) }
                if args.first == "trace" { XCTAssertTrue(r.stdout.contains("decrypted (expedited channel, device counter 1):"), String(r.stdout.prefix(1500))) }
            }
        }
    }
}

/// The README's "Keys that stay current" block, run as written: the only substitutions are the
/// printed login code for CODE and free ports for 8480 and 5000 (the machine is shared).
final class ReadmeTrustTests: XCTestCase {
    static func block() throws -> [[String]] {
        try ReadmeBlock(opening: "lockbench trust init").lines.compactMap(\.lockbenchArguments)
    }

    func testKeysThatStayCurrentWorkAsWritten() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let commands = try Self.block()
        XCTAssertEqual(commands.count, 11, "\(commands)")
        let httpPort = String(ReadmeBlock.freePort()), phonePort = String(ReadmeBlock.freePort())
        func substitute(_ c: [String], code: String) -> [String] {
            c.map { $0.replacingOccurrences(of: "8480", with: httpPort).replacingOccurrences(of: "5000", with: phonePort)
                .replacingOccurrences(of: "CODE", with: code).replacingOccurrences(of: "&", with: "") }.filter { !$0.isEmpty }
        }
        var code = "", background = [InteractiveProcess]()
        defer { for p in background { p.terminate() } }
        for command in commands {
            let args = substitute(command, code: code)
            switch (args.first, args.dropFirst().first) {
            case ("trust", "serve"):
                let p = try InteractiveProcess(args, currentDirectory: dir)
                background.append(p)
                _ = try p.waitForLine(containing: "listening on")
            case ("phone", "run"):
                let p = try InteractiveProcess(args, currentDirectory: dir)
                background.append(p)
                _ = try p.waitForLine(containing: "listening")
                let polled = try p.waitForLine(containing: "polled")
                XCTAssertTrue(polled.contains("keys=1"), polled)
            case ("scenario", "run"):
                let junit = dir.appendingPathComponent("scenarios.xml").path
                let r = try LockBenchProcess.run(args.map { $0 == "scenarios.xml" ? junit : $0 }, currentDirectory: LockBenchProcess.repositoryRoot)
                XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
                XCTAssertTrue(r.stdout.contains("2 passed, 0 failed"), r.stdout)
                XCTAssertTrue(try String(contentsOfFile: junit, encoding: .utf8).contains("tests=\"2\" failures=\"0\""))
            default:
                let r = try LockBenchProcess.run(args, currentDirectory: dir)
                XCTAssertEqual(r.status, 0, "lockbench \(args.joined(separator: " ")): \(r.stderr)")
                if args.starts(with: ["trust", "device", "add"]) {
                    code = try XCTUnwrap(r.stdout.split(separator: "\n").first { $0.hasPrefix("login code: ") }?.dropFirst("login code: ".count)).description
                }
                if args.starts(with: ["lock", "transact"]) { XCTAssertTrue(r.stdout.lowercased().contains("grant"), r.stdout) }
                if args.starts(with: ["trust", "grant", "revoke"]) { XCTAssertTrue(r.stdout.contains("revocation list: serial 1"), r.stdout) }
            }
        }
    }
}

/// The credential-state commands as a user runs them: exit codes and messages (Schlage guide).
final class TrustCLITests: XCTestCase {
    func testCredentialStatesFromTheCommandLine() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        func run(_ args: String) throws -> LockBenchProcess.Result {
            try LockBenchProcess.run(args.split(separator: " ").map(String.init), currentDirectory: dir)
        }
        XCTAssertEqual(try run("trust init site").status, 0)
        XCTAssertEqual(try run("key credential site/phone").status, 0)
        let add = try run("trust device add --site site --device phone --user alice --credential-key site/phone.pub.pem --json")
        XCTAssertEqual(add.status, 0, add.stderr)
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(add.stdout.utf8)) as? [String: String])
        XCTAssertEqual(try run("trust grant add --site site --grant g1 --user alice --reader " + String(repeating: "ab", count: 16)).status, 0)
        let suspend = try run("trust credential suspend --site site --device phone --reason audit")
        XCTAssertEqual(suspend.status, 0, suspend.stderr)
        XCTAssertTrue(suspend.stdout.contains("revocation list: serial 1"), suspend.stdout)
        XCTAssertEqual(try run("trust credential resume --site site --device phone").status, 0)
        XCTAssertEqual(try run("trust credential deactivate --site site --device phone").status, 0)
        let resume = try run("trust credential resume --site site --device phone")
        XCTAssertEqual(resume.status, 1, "deactivation is final")
        XCTAssertTrue(resume.stderr.contains("deactivation is final"), resume.stderr)
        let list = try run("trust device list --site site --json")
        XCTAssertTrue(list.stdout.contains("\"credential\" : \"deactivated\""), list.stdout)
        // Usage errors exit 2 and say what to do.
        let bad = try run("trust grant add --site site --grant g2 --user alice --reader zz")
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderr.contains("reader \"zz\""), bad.stderr)
        XCTAssertEqual(try run("trust init site").status, 2, "a second init refuses the existing site")
        XCTAssertEqual(try run("trust device list --site nowhere").status, 2, "not a site: bad input")
        let scenario = dir.appendingPathComponent("bad.scenario")
        try "lock front\nfly away\n".write(to: scenario, atomically: true, encoding: .utf8)
        let parse = try run("scenario run bad.scenario")
        XCTAssertEqual(parse.status, 2)
        XCTAssertTrue(parse.stderr.contains("line 2"), parse.stderr)
    }
}

/// README "Remote unlock by push approval": every command, and every `name>` line typed into that
/// phone, as written (ports and login codes substituted; the challenge number is the one shown).
final class ReadmeApprovalTests: XCTestCase {
    func testPushApprovalWorksAsWritten() throws {
        let block = try ReadmeBlock(opening: "lockbench trust init approval-site")
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let httpPort = String(ReadmeBlock.freePort()), alicePort = String(ReadmeBlock.freePort()), bobPort = String(ReadmeBlock.freePort())
        var codes = [String: String](), phones = [String: InteractiveProcess](), background = [InteractiveProcess]()
        defer { for p in background { p.terminate() } }
        var shown = "", ran = 0, typed = 0
        for line in block.lines {
            let raw = line.raw
            if raw.hasPrefix("#") {
                // "#   NAME> LINE   → EXPECTED": typed into that phone.
                let text = raw.dropFirst().trimmingCharacters(in: .whitespaces)
                guard let gt = text.range(of: "> "), let arrow = text.range(of: "→") else { continue }
                let phone = String(text[..<gt.lowerBound])
                var line = text[gt.upperBound..<arrow.lowerBound].trimmingCharacters(in: .whitespaces)
                let expected = text[arrow.upperBound...].trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
                if line.hasPrefix("approve ") { line = "approve " + shown }
                let p = try XCTUnwrap(phones[phone], "no phone \(phone) runs")
                p.send(line)
                let answer = try p.waitForLine(containing: expected, timeout: 30)
                if line.hasPrefix("request-unlock") { shown = try XCTUnwrap(answer.split(separator: " ").first { $0.hasPrefix("show=") }).dropFirst(5).description }
                if line == "requests" { XCTAssertTrue(answer.contains("status=approved"), answer) }
                typed += 1
                continue
            }
            guard let words = line.lockbenchArguments?.filter({ $0 != "&" }) else { continue }
            let args = words.map {
                $0.replacingOccurrences(of: "8481", with: httpPort).replacingOccurrences(of: "5001", with: alicePort)
                    .replacingOccurrences(of: "5002", with: bobPort)
                    .replacingOccurrences(of: "ALICE_CODE", with: codes["alice-phone"] ?? "").replacingOccurrences(of: "BOB_CODE", with: codes["bob-phone"] ?? "")
            }
            ran += 1
            switch (args.first, args.dropFirst().first) {
            case ("trust", "serve"):
                let p = try InteractiveProcess(args, currentDirectory: dir)
                background.append(p)
                _ = try p.waitForLine(containing: "listening on", timeout: 60)
            case ("phone", "run"):
                let p = try InteractiveProcess(args, currentDirectory: dir)
                background.append(p)
                _ = try p.waitForLine(containing: "listening", timeout: 60)
                _ = try p.waitForLine(containing: "polled", timeout: 60)
                phones[args[args.firstIndex(of: "--device")! + 1]] = p
            case ("scenario", "run"):
                let r = try LockBenchProcess.run(args, currentDirectory: LockBenchProcess.repositoryRoot)
                XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
                XCTAssertTrue(r.stdout.contains("5 passed, 0 failed"), r.stdout)
            default:
                let r = try LockBenchProcess.run(args, currentDirectory: dir)
                XCTAssertEqual(r.status, 0, "lockbench \(args.joined(separator: " ")): \(r.stderr)")
                if args.starts(with: ["trust", "device", "add"]) {
                    codes[args[args.firstIndex(of: "--device")! + 1]] = try XCTUnwrap(r.stdout.split(separator: "\n").first { $0.hasPrefix("login code: ") }?.dropFirst("login code: ".count)).description
                }
                if args.starts(with: ["lock", "transact"]) { XCTAssertTrue(r.stdout.lowercased().contains("grant"), r.stdout) }
            }
        }
        XCTAssertEqual(ran, 13)
        XCTAssertEqual(typed, 5)
    }
}
