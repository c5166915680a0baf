import AccessProtocol
import ArgumentParser
import ByteCore
import Codecs
import Foundation
import Lock
import LockRuntime
import OfflineUnlock

/// `lockbench audit …`: the lock's audit log.
struct AuditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Show and verify a lock's audit log (JSON lines, HMAC-chained).",
        subcommands: [Show.self, Verify.self, Acknowledge.self, Burst.self])

    /// The log checked against the head the lock recorded in its (authenticated) state, when
    /// there is one. A state file that does not verify is reported, not believed.
    static func verify(_ dir: String, keyFile: String?) throws -> AuditLog.Verification {
        let keyPath = keyFile ?? dir + "/" + AuditLog.keyFileName
        var head: AuditHead?
        if let data = FileManager.default.contents(atPath: keyPath), data.count == 32 {
            let key = Array(data)
            do { head = try StateStore(directory: dir, auditKey: key).load()?.auditHead } catch {
                throw UserError(message: error.description, code: ExitCodes.negative)
            }
        }
        do { return try AuditLog.verify(directory: dir, expectedHead: head, keyFile: keyPath) } catch { throw UserError(message: error.description) }
    }

    /// The state directory and the audit key file, from --config or --state-dir.
    static func directory(config: String?, stateDir: String?) throws -> (String, String?) {
        if let stateDir { return (stateDir, nil) }
        guard let config else { throw ValidationError("give --config FILE or --state-dir DIR") }
        let c = try LockFiles.configuration(config)
        return (c.stateDirectoryPath, c.auditKeyPath)
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the verified audit entries (JSON lines).")
        @Option(help: ArgumentHelp("The lock configuration.", valueName: "file")) var config: String?
        @Option(name: .customLong("state-dir"), help: ArgumentHelp("Or the state directory itself.", valueName: "dir")) var stateDir: String?
        @Option(help: "Only the last N entries.") var last: Int?
        func run() throws {
            let (dir, keyFile) = try AuditCommand.directory(config: config, stateDir: stateDir)
            let v = try AuditCommand.verify(dir, keyFile: keyFile)
            let (entries, damage) = (v.entries, v.damage)
            let e = JSONEncoder()
            e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            for entry in entries.suffix(last ?? entries.count) { print(String(decoding: try e.encode(entry), as: UTF8.self)) }
            if let damage { FileHandle.standardError.write(Data("audit log damaged: \(damage)\n".utf8)); throw ExitCode(ExitCodes.negative) }
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify the audit log's HMAC chain. Exit 0 intact, 1 damaged (where and how is printed).",
            discussion: """
            The chain is checked line by line and against the last entry the lock recorded in its state, \
            so entries cut from the end, or an emptied or deleted log, count as damage. Damage a lock \
            found when it opened (and set aside) is reported until an operator acknowledges it with \
            `lockbench audit acknowledge`, which is itself an audit entry.
            """)
        @Option(help: ArgumentHelp("The lock configuration.", valueName: "file")) var config: String?
        @Option(name: .customLong("state-dir"), help: ArgumentHelp("Or the state directory itself.", valueName: "dir")) var stateDir: String?
        @Flag(help: "Print as JSON.") var json = false

        struct Report: Encodable {
            var entries: Int; var intact: Bool; var damage: String?; var line: Int?; var message: String?
            var unacknowledged: [String]
        }

        func run() throws {
            let (dir, keyFile) = try AuditCommand.directory(config: config, stateDir: stateDir)
            let v = try AuditCommand.verify(dir, keyFile: keyFile)
            let damage = v.damage
            let unacknowledged = v.unacknowledgedDamage.map { "seq \($0.seq) at \($0.time): \($0.detail ?? "")" }
            let r = Report(entries: v.entries.count, intact: v.isClean, damage: damage?.kind.rawValue, line: damage?.line,
                           message: damage?.message, unacknowledged: unacknowledged)
            if json { print(KeyFiles.json(r)) } else if v.isClean {
                print("audit log intact: \(v.entries.count) entries")
            } else {
                if let damage { print("audit log damaged: \(damage)") }
                for u in unacknowledged { print("audit log damaged earlier, not acknowledged: \(u)") }
                if damage == nil { print("run `lockbench audit acknowledge --config FILE --note TEXT` once you have inspected it") }
            }
            if !v.isClean { throw ExitCode(ExitCodes.negative) }
        }
    }

    struct Acknowledge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Acknowledge the damage a lock reported in its audit log (itself an audit entry).",
            discussion: """
            When a lock opens a damaged audit log — a cut or edited tail, entries missing from the end, \
            an emptied or deleted log — it sets the bad part aside, writes an audit_damage entry and \
            keeps reporting it (at every `lock run` start, and as exit 1 from `audit verify`). Inspect \
            the log and the set-aside audit.log.damaged-<time> file, then say what you found: your note \
            becomes an audit_acknowledged entry and the reports stop.

              lockbench audit acknowledge --config site/front-door.lock.json \\
                  --note "tail lost in a power cut; checked against the export"
            """)
        @OptionGroup var config: LockConfigOption
        @Option(help: ArgumentHelp("What you found and did, for the audit log.", valueName: "text")) var note: String
        func run() throws {
            let lock = try config.open()
            let entry: AuditEntry
            do { entry = try lock.acknowledgeAuditDamage(note: note) } catch { throw UserError(lockError: error) }
            print("acknowledged; audit entry seq \(entry.seq): \(entry.detail ?? "")")
        }
    }

    /// Hidden: appends N entries as fast as possible, printing each sequence number once it is
    /// acknowledged (on disk). The crash test kills it with SIGKILL mid-burst. It holds the state
    /// directory's lock like `lock run` does, so it refuses (exit 3) beside a running lock.
    /// With `--config`, the entries are decisions of that lock (`EmulatedLock.apply`, unknown
    /// credentials: each record carries a replay-window delta) with a snapshot every
    /// `--snapshot-every` records, printing "ack SEQ TID" — the journal's crash test.
    struct Burst: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Append a burst of test entries (crash tests).", shouldDisplay: false)
        @Option(name: .customLong("state-dir")) var stateDir: String?
        @Option var config: String?
        @Option(name: .customLong("snapshot-every")) var snapshotEvery: Int = 1
        @Option var count: Int = 1000
        func run() throws {
            if let config { return try decisions(config) }
            guard let stateDir else { throw UserError(message: "audit burst: give --state-dir DIR or --config FILE", code: ExitCodes.usage) }
            // The state directory's lock, as every writer holds it: never beside a running lock.
            let ownership: StateDirectoryLock, log: AuditLog
            do {
                try FileManager.default.createDirectory(atPath: stateDir, withIntermediateDirectories: true)
                ownership = try StateDirectoryLock(directory: stateDir)
                log = try AuditLog(directory: stateDir)
            } catch let error as LockError {
                throw UserError(lockError: error)
            }
            defer { withExtendedLifetime(ownership) {} }
            setvbuf(stdout, nil, _IOLBF, 0)
            for i in 0..<count {
                let tid = (0..<16).map { UInt8(truncatingIfNeeded: ($0 == 15 ? i : i >> 8)) }
                let d: TransactionDecision = i % 3 == 0 ? .deny(Refusal(.engine(.unknownCredential), detail: "burst \(i)")) : .grant(credentialID: "b\(i)")
                let entry: AuditEntry
                do { entry = try log.append(time: Date(timeIntervalSince1970: 1_770_000_000 + Double(i)), credential: nil, transport: .socket, decision: d, transaction: tid) } catch {
                    throw UserError(message: error.description, code: ExitCodes.environment)
                }
                print("ack \(entry.seq)")
            }
        }

        func decisions(_ path: String) throws {
            let lock: EmulatedLock
            do { lock = try EmulatedLock(configuration: try LockConfiguration.load(path: path)) } catch let error as LockError {
                throw UserError(lockError: error)
            }
            lock.snapshotInterval = max(1, snapshotEvery)
            setvbuf(stdout, nil, _IOLBF, 0)
            let key = [0x04] + [UInt8](repeating: 0x42, count: 64)
            for _ in 0..<count {
                let tid = Primitives.randomBytes(16)
                let outcome = lock.apply(.presentation(Presentation(credentialPublicKey: key, transactionID: tid, interface: .socket,
                                                                    protocolVersion: 0x0100, fast: false)))
                guard let entry = outcome.audit, outcome.refusal?.code != "storage_failure" else {
                    throw UserError(message: "not recorded: \(outcome.decision)", code: ExitCodes.environment)
                }
                print("ack \(entry.seq) \(Hex.encode(tid))")
            }
        }
    }
}
