import Foundation
import LockBenchTestSupport
import XCTest

/// Issue 21 §4: the lock binary carries no HTTP or database stack; `lockbench trust|phone|scenario|
/// push|fleet` runs the sibling `lockbench-server`, and says how to build it when it is missing.
final class LeanBinaryEndToEndTests: XCTestCase {
    func testTheLockBinaryLinksNoServerStack() throws {
        let lock = try Data(contentsOf: LockBenchProcess.binary)
        let server = try Data(contentsOf: LockBenchProcess.binary.deletingLastPathComponent().appendingPathComponent("lockbench-server"))
        for module in ["Hummingbird", "PostgresNIO", "SQLiteNIO", "JWTKit", "AsyncHTTPClient"] {
            XCTAssertNil(lock.range(of: Data(module.utf8)), "lockbench links \(module)")
            XCTAssertNotNil(server.range(of: Data(module.utf8)), "lockbench-server lacks \(module): is the probe right?")
        }
    }

    func testServerCommandsRunTheSiblingWithTheirArgumentsAndExitCodes() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let help = try LockBenchProcess.run(["trust", "--help"], currentDirectory: dir)
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("trust init"), help.stdout)
        XCTAssertEqual(try LockBenchProcess.run(["trust", "--no-such-flag"], currentDirectory: dir).status, 2)
        let made = try LockBenchProcess.run(["trust", "init", "site"], currentDirectory: dir)
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("site/issuer.pub.pem").path))
    }

    func testAMissingServerSaysHowToBuildIt() throws {
        let dir = try LockBenchProcess.temporaryDirectory(self)
        let alone = dir.appendingPathComponent("lockbench")
        try FileManager.default.copyItem(at: LockBenchProcess.binary, to: alone)
        let p = Process()
        p.executableURL = alone
        p.arguments = ["trust", "init", "site"]
        p.environment = ["PATH": "/usr/bin:/bin"]
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit(timeout: 60)
        XCTAssertEqual(p.terminationStatus, 3)
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(message.contains("swift build --product lockbench-server"), message)
        // The lock's own commands still work without it.
        let version = Process()
        version.executableURL = alone
        version.arguments = ["--version"]
        version.standardOutput = FileHandle.nullDevice
        try version.run()
        version.waitUntilExit()
        XCTAssertEqual(version.terminationStatus, 0)
    }
}
