import Foundation
import LockBenchTestSupport
import XCTest

/// The README's "Push and mobile wake-up" block, run as written (on a free port instead of 8490):
/// the `&` line starts the relay, every other line runs in a shell with the built `lockbench`,
/// exits 0, and prints what its `# → …` comment says.
final class ReadmePushTests: XCTestCase {
    func testThePushCommandsRunAsWritten() throws {
        let lines = try ReadmeBlock(after: "### Push and mobile wake-up").lines
        XCTAssertEqual(lines.count, 9, "\(lines)")
        let port = String(ReadmeBlock.freePort())
        var server: InteractiveProcess?
        defer { server?.terminate() }
        for line in lines {
            let (command, expect) = (line.command.replacingOccurrences(of: "8490", with: port), line.expect)
            if command.hasSuffix("&") {
                let args = command.dropLast().split(separator: " ").map(String.init)
                XCTAssertEqual(args.first, "lockbench")
                server = try InteractiveProcess(Array(args.dropFirst()), currentDirectory: Repository.root)
                _ = try server!.waitForLine(containing: "listening on", timeout: 60)
                continue
            }
            let shell = try LockBenchProcess.run(["-c", command.replacingOccurrences(of: "lockbench ", with: "'\(LockBenchProcess.binary.path)' ")],
                                                 executable: URL(fileURLWithPath: "/bin/sh"), currentDirectory: Repository.root, timeout: 120)
            let text = shell.stdout + shell.stderr
            XCTAssertEqual(shell.status, 0, "\(command): \(text)")
            if let expect { XCTAssertTrue(text.contains(expect), "\(command) printed \(text), expected \(expect)") }
        }
    }
}
