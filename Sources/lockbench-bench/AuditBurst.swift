import AccessProtocol
import ArgumentParser
import ByteCore
import Codecs
import Foundation
import Lock
import LockRuntime
import OfflineUnlock

extension LockBenchBench {
    /// `lockbench-bench audit-burst`: appends a burst of entries, printing "ack N" once entry N is
    /// fsynced — what the crash tests SIGKILL in the middle of. With `--state-dir` it writes
    /// MAC-valid entries for decisions no lock took, so it lives here and not in the shipped
    /// `lockbench` (issue 20 §5): no command of the shipped binary writes decisions the lock did
    /// not take. With `--config` the entries are a real lock's decisions (`EmulatedLock.apply`).
    struct AuditBurst: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "audit-burst",
            abstract: "Append a burst of audit entries, printing \"ack SEQ\" after each is durable (crash tests).",
            discussion: """
            --state-dir DIR: test entries straight into DIR's log (its key is made if missing). \
            --config FILE: real decisions of that lock (an unknown credential each), snapshotting \
            every --snapshot-every records. Never beside a running lock: the state directory's lock is held.
            """)
        @Option(name: .customLong("state-dir"), help: ArgumentHelp("A state directory to append test entries to.", valueName: "dir"))
        var stateDir: String?
        @Option(help: ArgumentHelp("A lock configuration whose lock decides each entry.", valueName: "file"))
        var config: String?
        @Option(name: .customLong("snapshot-every"), help: "With --config: records between snapshots.")
        var snapshotEvery: Int = 1
        @Option(help: "Entries to append.")
        var count: Int = 1000

        func validate() throws {
            if (stateDir == nil) == (config == nil) { throw ValidationError("give --state-dir DIR or --config FILE") }
            guard count >= 0 else { throw ValidationError("--count must be 0 or more, got \(count)") }
        }

        func fail(_ message: String) -> ExitCode {
            FileHandle.standardError.write(Data("lockbench-bench audit-burst: \(message)\n".utf8))
            return ExitCode(3)
        }

        func run() throws {
            if let config { return try decisions(config) }
            guard let stateDir else { return }
            // The state directory's lock, as every writer holds it: never beside a running lock.
            let ownership: StateDirectoryLock, log: AuditLog
            do {
                try FileManager.default.createDirectory(atPath: stateDir, withIntermediateDirectories: true)
                ownership = try StateDirectoryLock(directory: stateDir)
                log = try AuditLog(directory: stateDir)
            } catch let error as LockError {
                throw fail(error.description)
            }
            defer { withExtendedLifetime(ownership) {} }
            for i in 0..<count {
                let tid = (0..<16).map { UInt8(truncatingIfNeeded: ($0 == 15 ? i : i >> 8)) }
                let d: TransactionDecision = i % 3 == 0 ? .deny(Refusal(.engine(.unknownCredential), detail: "burst \(i)")) : .grant(credentialID: "b\(i)")
                let entry: AuditEntry
                do { entry = try log.append(time: Date(timeIntervalSince1970: 1_770_000_000 + Double(i)), credential: nil, transport: .socket, decision: d, transaction: tid) } catch {
                    throw fail(error.description)
                }
                emitLine("ack \(entry.seq)")   // at once: the killer reads what was acknowledged
            }
        }

        func decisions(_ path: String) throws {
            let lock: EmulatedLock
            do throws(LockError) { lock = try EmulatedLock(configuration: try LockConfiguration.load(path: path)) } catch {
                throw fail(error.description)
            }
            lock.snapshotInterval = max(1, snapshotEvery)
            let key = [0x04] + [UInt8](repeating: 0x42, count: 64)
            for _ in 0..<count {
                let tid = Primitives.randomBytes(16)
                let outcome = lock.apply(.presentation(Presentation(credentialPublicKey: key, transactionID: tid, interface: .socket,
                                                                    protocolVersion: 0x0100, fast: false)))
                guard let entry = outcome.audit, outcome.refusal?.code != "storage_failure" else {
                    throw fail("not recorded: \(outcome.decision)")
                }
                emitLine("ack \(entry.seq) \(Hex.encode(tid))")
            }
        }
    }
}
