#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import Lock
import XCTest

/// `GroupCommit`: fsyncs waiting at once share a flush, yet no caller returns before a flush that
/// started after it arrived has finished; a failed flush fails every caller it covered.
final class GroupCommitTests: XCTestCase {
    /// What the injected flush saw: start and end times, in order.
    final class FlushLog: @unchecked Sendable {
        let lock = NSLock()
        var flushes: [(start: UInt64, end: UInt64)] = []
        var failNext = 0
        func flush(_ fd: Int32) -> Int32 {
            let start = DispatchTime.now().uptimeNanoseconds
            usleep(2000)        // a slow disk: callers pile up behind the leader
            let fail = lock.withLock { () -> Bool in if failNext > 0 { failNext -= 1; return true }; return false }
            let rc: Int32 = fail ? -1 : fsync(fd)
            let end = DispatchTime.now().uptimeNanoseconds
            lock.withLock { flushes.append((start, end)) }
            if fail { errno = EIO }
            return rc
        }
    }

    func file() throws -> Int32 {
        let path = try temporaryDirectory("lockbench-gc").path + "/journal"
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        addTeardownBlock { close(fd) }
        return fd
    }

    func testConcurrentFsyncsShareFlushesAndEachWaitsForAFlushThatStartedAfterIt() throws {
        let fd = try file()
        let log = FlushLog()
        let commit = GroupCommit(flush: { log.flush($0) })
        let callers = 64
        final class Times: @unchecked Sendable {
            let lock = NSLock()
            var all: [(arrive: UInt64, leave: UInt64, rc: Int32)] = []
        }
        let record = Times()
        DispatchQueue.concurrentPerform(iterations: callers) { _ in
            let arrive = DispatchTime.now().uptimeNanoseconds
            let rc = commit.fsync(fd)
            let leave = DispatchTime.now().uptimeNanoseconds
            record.lock.withLock { record.all.append((arrive, leave, rc)) }
        }
        let times = record.all
        XCTAssertEqual(times.count, callers)
        let counts = commit.counts
        XCTAssertEqual(counts.requests, callers)
        XCTAssertEqual(counts.flushes, log.flushes.count)
        XCTAssertLessThan(counts.flushes, callers, "some fsyncs shared a flush")
        for t in times {
            XCTAssertEqual(t.rc, 0)
            XCTAssertTrue(log.flushes.contains { $0.start >= t.arrive && $0.end <= t.leave },
                          "a caller returned without a whole flush that started after it arrived")
        }
    }

    func testAFailedFlushFailsTheCallersItCoveredWithItsErrno() throws {
        let fd = try file()
        let log = FlushLog()
        log.failNext = 1
        let commit = GroupCommit(flush: { log.flush($0) })
        errno = 0
        XCTAssertEqual(commit.fsync(fd), -1)
        XCTAssertEqual(errno, EIO)
        XCTAssertEqual(commit.fsync(fd), 0, "the next flush succeeds: a failure is not remembered for later callers")
    }

    func testALockOnAGroupCommitThatFailsDeniesWithStorageFailureAndRecordsNoGrant() throws {
        let base = LockFixture()
        let dir = try temporaryDirectory("lockbench-lock").path
        _ = try base.makeConfig(dir)
        let log = FlushLog()
        let commit = GroupCommit(flush: { log.flush($0) })
        var lock: EmulatedLock! = try EmulatedLock(configuration: LockConfiguration.load(path: dir + "/lock.json"), io: commit.io)
        XCTAssertTrue(lock.decide(base.presentation([try base.document()])).isGrant)
        log.lock.withLock { log.failNext = 1 }
        let denied = lock.decide(base.presentation([try base.document()]))
        XCTAssertEqual(denied.refusal?.code, "storage_failure")
        lock = nil
        let (entries, damage) = try AuditLog.verify(directory: dir + "/state")
        XCTAssertNil(damage)
        XCTAssertEqual(entries.filter { $0.decision == "grant" }.count, 1, "the grant whose flush failed is not in the log")
        XCTAssertGreaterThanOrEqual(commit.counts.requests, 2)
    }
}
