import Foundation
@testable import Lock
import LockBenchTestSupport
import XCTest

/// Kills a process with SIGKILL in the middle of a burst of audit appends and checks that every
/// entry it acknowledged is on disk and the chain verifies. The child is the built `lockbench`
/// (hidden `audit burst` subcommand), which prints "ack N" after entry N is fsynced.
final class AuditCrashTests: XCTestCase {
    static var binary: URL { LockBenchProcess.binary }

    /// Starts a burst, waits for `killAfter` acknowledgements, SIGKILLs it, returns every ack seen.
    func burstAndKill(_ dir: String, killAfter: Int) throws -> [UInt64] {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["audit", "burst", "--state-dir", dir, "--count", "1000000"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var acks = [UInt64]()
        var buffer = Data()
        let reader = out.fileHandleForReading
        func drain(_ chunk: Data) {
            buffer.append(chunk)
            while let nl = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...nl)
                if line.hasPrefix("ack "), let n = UInt64(line.dropFirst(4)) { acks.append(n) }
            }
        }
        while acks.count < killAfter {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            drain(chunk)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // Acks already written to the pipe before the kill count too.
        drain(reader.readDataToEndOfFile())
        XCTAssertEqual(process.terminationReason, .uncaughtSignal)
        XCTAssertEqual(process.terminationStatus, SIGKILL)
        return acks
    }

    func testEveryAcknowledgedEntrySurvivesSIGKILL() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        var previous: UInt64 = 0
        for round in 0..<3 {
            let acks = try burstAndKill(dir, killAfter: 150 + 100 * round)
            XCTAssertGreaterThanOrEqual(acks.count, 150, "round \(round)")
            XCTAssertEqual(acks.first, previous + 1, "round \(round): the chain continues after the restart")
            let maxAck = acks.max()!
            let (entries, damage) = try AuditLog.verify(directory: dir)
            // Every acknowledged entry is there, in order, and the chain verifies through it.
            XCTAssertGreaterThanOrEqual(UInt64(entries.count), maxAck, "round \(round)")
            XCTAssertEqual(entries.prefix(Int(maxAck)).map(\.seq), Array(1...maxAck))
            // At most an unacknowledged, half-written last line can be damaged.
            if let damage {
                XCTAssertEqual(damage.kind, .truncatedLine, "\(damage)")
                XCTAssertGreaterThan(damage.line, Int(maxAck))
            }
            // Reopening keeps the valid prefix and continues.
            let log = try AuditLog(directory: dir)
            XCTAssertGreaterThanOrEqual(log.head.seq, maxAck)
            previous = log.head.seq
            print("round \(round): killed after \(acks.count) acks (max \(maxAck)); \(entries.count) entries on disk; damage: \(damage.map { "\($0)" } ?? "none")")
        }
    }
}
