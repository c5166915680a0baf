import Foundation
import LockBenchTestSupport
import XCTest

/// The README's "Push and mobile wake-up" block, run as written (on a free port instead of 8490):
/// the `&` line starts the relay, every other line runs in a shell with the built `lockbench`,
/// exits 0, and prints what its `# → …` comment says.
final class ReadmePushTests: XCTestCase {
    static func block() throws -> [(command: String, expect: String?)] {
        let readme = try String(contentsOf: Repository.url("README.md"), encoding: .utf8)
        guard let section = readme.range(of: "### Push and mobile wake-up"),
              let start = readme.range(of: "```sh\n", range: section.upperBound..<readme.endIndex) else {
            throw LineTimeout(expected: "### Push and mobile wake-up", seen: [])
        }
        let rest = readme[start.upperBound...]
        let body = String(rest[..<rest.range(of: "```")!.lowerBound])
        return body.split(separator: "\n").map { line in
            let parts = line.components(separatedBy: " # ")
            let expect = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : nil
            return (parts[0].trimmingCharacters(in: .whitespaces),
                    expect.flatMap { $0.hasPrefix("→ ") ? String($0.dropFirst(2)).components(separatedBy: " (").first : nil })
        }
    }

    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    func testThePushCommandsRunAsWritten() throws {
        let lines = try Self.block()
        XCTAssertEqual(lines.count, 8, "\(lines)")
        let port = String(Self.freePort())
        var server: InteractiveProcess?
        defer { server?.terminate() }
        for (raw, expect) in lines {
            let command = raw.replacingOccurrences(of: "8490", with: port)
            if command.hasSuffix("&") {
                let args = command.dropLast().split(separator: " ").map(String.init)
                XCTAssertEqual(args.first, "lockbench")
                server = try InteractiveProcess(Array(args.dropFirst()), currentDirectory: Repository.root)
                _ = try server!.waitForLine(containing: "listening on", timeout: 60)
                continue
            }
            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/bin/sh")
            shell.arguments = ["-c", command.replacingOccurrences(of: "lockbench ", with: "'\(LockBenchProcess.binary.path)' ")]
            shell.currentDirectoryURL = Repository.root
            let out = Pipe()
            shell.standardOutput = out
            shell.standardError = out
            try shell.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            shell.waitUntilExit()
            XCTAssertEqual(shell.terminationStatus, 0, "\(command): \(text)")
            if let expect { XCTAssertTrue(text.contains(expect), "\(command) printed \(text), expected \(expect)") }
        }
    }
}
