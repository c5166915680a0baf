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
        subcommands: [Show.self, Verify.self, Acknowledge.self])

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
}
