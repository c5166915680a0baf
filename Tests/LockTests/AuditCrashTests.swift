import Foundation
@testable import Lock
import LockBenchTestSupport
import XCTest

/// Kills a process with SIGKILL in the middle of a burst of audit appends and checks that every
/// entry it acknowledged is on disk and the chain verifies. The child is the built `lockbench`
/// (`lockbench-bench audit-burst`), which prints "ack N" after entry N is fsynced.
final class AuditCrashTests: XCTestCase {
    static var binary: URL { Repository.builtProduct("lockbench-bench") }

    /// Starts a burst, waits for `killAfter` acknowledgements, SIGKILLs it, returns every ack seen.
    func burstAndKill(_ dir: String, killAfter: Int) throws -> [UInt64] {
        try Self.burstAndKill(["--state-dir", dir, "--count", "1000000"], killAfter: killAfter).map(\.seq)
    }

    /// `lockbench-bench audit-burst ARGS`, SIGKILLed after `killAfter` acknowledgements: every "ack SEQ [TID]" seen.
    static func burstAndKill(_ arguments: [String], killAfter: Int) throws -> [(seq: UInt64, tid: String)] {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["audit-burst"] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var acks = [(seq: UInt64, tid: String)]()
        var buffer = Data()
        let reader = out.fileHandleForReading
        func drain(_ chunk: Data) {
            buffer.append(chunk)
            while let nl = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...nl)
                let words = line.split(separator: " ")
                if words.first == "ack", words.count >= 2, let n = UInt64(words[1]) { acks.append((n, words.count > 2 ? String(words[2]) : "")) }
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

    /// What a kill that tears a line leaves, made by hand: the next open sets the torn bytes aside
    /// and writes its `audit_damage` entry numbered past the torn one, so the numbers have one gap,
    /// which the crash test below allows and nothing else does.
    func testATornLineLeavesOneGapThatTheDamageEntryExplains() throws {
        let dir = try temporaryDirectory("lockbench-lock").path
        let log = try AuditLog(directory: dir)
        for i in 0..<3 {
            try log.append(time: Date(timeIntervalSince1970: 1_770_000_000 + Double(i)), credential: nil, transport: .socket,
                           decision: .grant(credentialID: "c\(i)"), transaction: [UInt8](repeating: UInt8(i), count: 16))
        }
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: dir + "/" + AuditLog.fileName))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"seq":4,"time":"2026-"#.utf8))   // a write cut short
        try handle.close()
        let reopened = try AuditLog(directory: dir)
        XCTAssertEqual(reopened.damage?.kind, .truncatedLine)
        let acked = try (0..<2).map { i in
            try reopened.append(time: Date(timeIntervalSince1970: 1_770_000_100 + Double(i)), credential: nil, transport: .socket,
                                decision: .grant(credentialID: "d\(i)"), transaction: [UInt8](repeating: 0xA0 + UInt8(i), count: 16)).seq
        }
        let (entries, _) = try AuditLog.verify(directory: dir)
        XCTAssertEqual(entries.map(\.seq), [1, 2, 3, 5, 6, 7])
        XCTAssertEqual(entries[3].decision, AuditEntry.auditDamageEvent)
        XCTAssertEqual(acked, [6, 7])
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
            // Every acknowledged entry is there, and the chain verifies through it.
            let onDisk = Set(entries.map(\.seq))
            XCTAssertEqual(acks.filter { !onDisk.contains($0) }, [], "round \(round): acknowledged entries missing")
            XCTAssertGreaterThanOrEqual(entries.last?.seq ?? 0, maxAck, "round \(round)")
            // In order, numbered one after another; the one gap allowed is where a kill tore a line:
            // the `audit_damage` entry the next open writes is numbered past the torn one (never reused).
            XCTAssertEqual(entries.first?.seq, 1)
            for (a, b) in zip(entries, entries.dropFirst()) where b.seq != a.seq + 1 {
                XCTAssertGreaterThan(b.seq, a.seq, "round \(round)")
                XCTAssertEqual(b.decision, AuditEntry.auditDamageEvent, "round \(round): a gap after \(a.seq) that no audit_damage entry explains")
            }
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

/// §2.10: the journal under `kill -9` while snapshots are written. The child is `lockbench audit
/// burst --config` — real decisions of a real lock through `EmulatedLock.apply`, a background
/// snapshot after every record, so the kill lands in or between snapshot writes. After each kill
/// the lock reopens (last snapshot + journal replay) and every acknowledged decision's state change
/// (its transaction id in the replay window) and entry are there.
final class JournalCrashTests: XCTestCase {
    let base = LockFixture()

    func testKillDuringSnapshotCompactionLosesNoAcknowledgedDecision() throws {
        let dir = try temporaryDirectory("lockbench-journal").path
        let path = try base.makeConfig(dir)
        var leftTemporary = 0
        for round in 0..<3 {
            let acks = try AuditCrashTests.burstAndKill(["--config", path, "--snapshot-every", "1", "--count", "100000"],
                                                         killAfter: 120 + 40 * round)
            XCTAssertGreaterThanOrEqual(acks.count, 120, "round \(round)")
            if FileManager.default.fileExists(atPath: dir + "/state/state.json.tmp") { leftTemporary += 1 }
            let lock = try EmulatedLock(configuration: LockConfiguration.load(path: path))
            // At most the record being written when the kill came (never acknowledged) is cut.
            if let damage = lock.audit.damage { XCTAssertEqual(damage.kind, .truncatedLine, "round \(round): \(damage)") }
            let recent = Set(lock.engine.state.recentTransactionIDs)
            let lost = acks.filter { !recent.contains($0.tid) }
            XCTAssertEqual(lost.count, 0, "round \(round): acknowledged decisions whose state change was lost: \(lost.prefix(3))")
            XCTAssertGreaterThanOrEqual(lock.audit.head.seq, acks.map { $0.seq }.max()!, "round \(round)")
            print("round \(round): killed after \(acks.count) acks; head \(lock.audit.head.seq); snapshot temporary left by the kill: \(leftTemporary > 0)")
        }
    }
}
