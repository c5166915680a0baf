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
