import Foundation
import LockBenchTestSupport
import XCTest

/// The README's walkthrough, run as written: if a flag in it changes, this fails.
final class ReadmeTests: XCTestCase {
    /// The `lockbench …` commands of the README's first "emulated lock" block, continuation lines joined.
    static func walkthrough() throws -> [[String]] {
        let readme = try String(contentsOf: LockBenchProcess.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        guard let start = readme.range(of: "```sh\nlockbench key issuer") else { throw LineTimeout(expected: "walkthrough", seen: []) }
        let block = readme[start.upperBound...].prefix { _ in true }
        let body = String(block[..<block.range(of: "```")!.lowerBound])
        let joined = ("lockbench key issuer" + body).replacingOccurrences(of: "\\\n", with: " ")
        return joined.split(separator: "\n").compactMap { line in
            let code = line.split(separator: "#", maxSplits: 1).first.map(String.init) ?? ""
            let words = code.split(separator: " ").map(String.init)
            return words.first == "lockbench" ? Array(words.dropFirst()) : nil
        }
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
        let readme = try String(contentsOf: Repository.url("README.md"), encoding: .utf8)
        guard let section = readme.range(of: "### Test your own phone or reader"),
              let start = readme.range(of: "```sh\n", range: section.upperBound..<readme.endIndex) else {
            throw LineTimeout(expected: "Test your own phone or reader", seen: [])
        }
        let rest = readme[start.upperBound...]
        let body = String(rest[..<rest.range(of: "```")!.lowerBound]).replacingOccurrences(of: "\\\n", with: " ")
        return body.split(separator: "\n").map { line in
            (line.split(separator: "#", maxSplits: 1).first.map(String.init) ?? "").trimmingCharacters(in: .whitespaces)
        }.filter { $0.hasPrefix("lockbench ") }
    }

    func testTheConformanceCommandsRunAsWritten() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        for command in try ReadmeTests.walkthrough() where command.first != "lock" {
            XCTAssertEqual(try LockBenchProcess.run(command, currentDirectory: dir).status, 0, "\(command)")
        }
        let lines = try Self.block()
        XCTAssertEqual(lines.count, 5, "\(lines)")
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
