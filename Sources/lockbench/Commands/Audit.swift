import AccessProtocol
import ArgumentParser
import ByteCore
import Codecs
import Foundation
import Lock
import LockRuntime
import OfflineUnlock

/// Options shared by the commands that open a lock's configuration and state.
struct LockConfigOption: ParsableArguments {
    @Option(name: .customLong("config"), help: ArgumentHelp("The lock configuration file (docs/lock-config.md).", valueName: "file"))
    var path: String

    func load() throws -> LockConfiguration { try Self.load(path) }

    static func load(_ path: String) throws -> LockConfiguration {
        do { return try LockConfiguration.load(path: path) } catch { throw UserError(message: error.description) }
    }

    func open() throws -> EmulatedLock {
        do { return try EmulatedLock(configuration: try load()) } catch let e as LockError {
            throw UserError(message: e.description, code: e.code.isEnvironment ? ExitCodes.environment : ExitCodes.usage)
        }
    }
}

/// `lockbench config create`: write a lock configuration.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Create and check lock configuration files.",
        subcommands: [Create.self, Check.self])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a lock configuration (JSON) for a reader identity and trusted issuers.",
            discussion: """
            Paths inside the file are written relative to the file's directory when they lie under it.

              lockbench config create --reader-identity site/front-door.reader.json \\
                  --issuer site/issuer.pub.pem --model NDE --firmware 03.20.00 \\
                  --clock 2026-03-02T09:00:00Z --out site/front-door.lock.json
            """)
        @Option(name: .customLong("reader-identity"), help: ArgumentHelp("Reader identity file from `key reader`.", valueName: "file"))
        var readerIdentity: String
        @Option(help: ArgumentHelp("A trusted issuer public key (PEM). Repeatable.", valueName: "file"))
        var issuer: [String] = []
        @Option(help: "Lock model (see `lockbench firmware`).")
        var model: String = "NDE"
        @Option(help: "Lock firmware version.")
        var firmware: String = "03.20.00"
        @Option(name: .customLong("state-dir"), help: ArgumentHelp("State directory (default: NAME.state beside the file).", valueName: "dir"))
        var stateDir: String?
        @Option(help: ArgumentHelp("The virtual clock at first start: ISO-8601 (frozen, for CI) or \"system\" (running).", valueName: "time"))
        var clock: String = "system"
        @Option(name: .customLong("max-lifetime"), help: ArgumentHelp("Longest document validity the lock accepts.", valueName: "duration"))
        var maxLifetime: String = "7d"
        @Option(help: ArgumentHelp("Clock leeway.", valueName: "duration"))
        var leeway: String = "5m"
        @Option(help: ArgumentHelp("Relock time after a grant.", valueName: "duration"))
        var relock: String = "5s"
        @Option(name: .customLong("utc-offset"), help: ArgumentHelp("Schedule time zone, minutes east of UTC.", valueName: "minutes"))
        var utcOffset: Int = 0
        @Option(help: ArgumentHelp("NFC reader for `lock run`: a libnfc connstring or pcsc[:READER NAME] (default: the virtual PN532).", valueName: "reader"))
        var nfc: String?
        @Option(help: ArgumentHelp("BLE transport: hci0, uart:/dev/ttyUSB0, tcp:HOST:PORT, unix:PATH.", valueName: "transport"))
        var ble: String?
        @Option(help: ArgumentHelp("Where to write the configuration.", valueName: "file"))
        var out: String
        @Flag(help: "Overwrite --out if it exists.")
        var force = false

        func run() throws {
            let (identity, identityDir) = try ReaderIdentityFile.load(readerIdentity)
            let outDir = (out as NSString).deletingLastPathComponent.isEmpty ? "." : (out as NSString).deletingLastPathComponent
            func relative(_ path: String) -> String {
                let abs = URL(fileURLWithPath: path).standardizedFileURL.path
                let base = URL(fileURLWithPath: outDir).standardizedFileURL.path + "/"
                return abs.hasPrefix(base) ? String(abs.dropFirst(base.count)) : abs
            }
            for i in issuer { _ = try KeyFiles.publicKey(i, what: "issuer key") }
            var policy = LockPolicy()
            policy.maxDocumentLifetime = try KeyFiles.duration(maxLifetime, flag: "--max-lifetime", within: LockPolicy.Bounds.maxDocumentLifetime)
            policy.clockLeeway = try KeyFiles.duration(leeway, flag: "--leeway", within: LockPolicy.Bounds.clockLeeway)
            policy.relockTime = try KeyFiles.duration(relock, flag: "--relock", within: LockPolicy.Bounds.relockTime)
            guard LockPolicy.Bounds.scheduleUTCOffsetMinutes.contains(utcOffset) else {
                throw UserError(message: "--utc-offset \(utcOffset) is out of range: minutes east of UTC, \(LockPolicy.Bounds.scheduleUTCOffsetMinutes.lowerBound)…\(LockPolicy.Bounds.scheduleUTCOffsetMinutes.upperBound)")
            }
            policy.scheduleUTCOffsetMinutes = utcOffset
            if clock != "system" { _ = try KeyFiles.time(clock, flag: "--clock") }
            let name = ((out as NSString).lastPathComponent as NSString).deletingPathExtension
            let config = LockConfiguration(
                model: model, firmware: firmware,
                reader: .init(signingKey: relative(identityDir + "/" + identity.signingKey), groupID: identity.groupID, subID: identity.subID),
                trustedIssuers: issuer.map(relative), policy: policy,
                stateDirectory: stateDir.map(relative) ?? (name.hasSuffix(".lock") ? String(name.dropLast(5)) : name) + ".state",
                clock: clock, nfc: nfc.map { .init(connstring: $0) }, ble: ble.map { .init(transport: $0) })
            try KeyFiles.write(config.encoded() + Data("\n".utf8), to: out, force: force)
            _ = try LockConfigOption.load(out)
            print("lock configuration: \(out)")
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Check a lock configuration: JSON shape, reader key, issuer keys, clock.")
        @OptionGroup var config: LockConfigOption
        @Flag(help: "Print the effective configuration (defaults filled in) as JSON.")
        var json = false
        func run() throws {
            let c = try config.load()
            if json { print(String(decoding: c.encoded(), as: UTF8.self)); return }
            let trust = try? c.trustStore()
            print("\(config.path): ok — \(c.model) \(c.firmware), reader group \(c.reader.groupID) sub \(c.reader.subID), \(trust?.issuerKeys.count ?? 0) trusted issuer(s), state in \(c.stateDirectoryPath)")
        }
    }
}

/// `lockbench decide`: hand documents straight to a lock's engine (no radio, no protocol).
struct DecideCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decide",
        abstract: "Ask a lock's offline-unlock engine for a decision, without a radio or protocol.",
        discussion: """
        Builds the presentation a reader session would hand the engine after AUTH1 (the credential key, \
        a transaction id, the step-up documents) and decides on the lock's persisted state, clock and \
        audit log, exactly as a real transaction would from that point on. For testing documents, \
        policies, revocation and clocks; real transactions run over NFC, BLE or the socket transport. \
        Exit status: 0 granted, 1 denied.
        """)
    @OptionGroup var config: LockConfigOption
    @Option(help: ArgumentHelp("The credential's public key (PEM).", valueName: "file"))
    var credential: String
    @Option(name: .customLong("access-doc"), help: ArgumentHelp("An access document presented in step-up. Repeatable.", valueName: "file"))
    var accessDoc: [String] = []
    @Option(name: .customLong("revocation-doc"), help: ArgumentHelp("A revocation document presented in step-up. Repeatable.", valueName: "file"))
    var revocationDoc: [String] = []
    @Option(help: ArgumentHelp("Transaction id, 32 hex digits (default: random).", valueName: "hex"))
    var transaction: String?
    @Option(name: .customLong("protocol-version"), help: ArgumentHelp("The access protocol's version the presentation claims, e.g. 1.0 or 0.9.", valueName: "version"))
    var protocolVersion: String = "1.0"
    /// The old spelling of --protocol-version, kept for scripts; hidden so that `--help` shows one
    /// `--version` (the tool's).
    @Option(name: .customLong("version"), help: .hidden)
    var legacyProtocolVersion: String?
    @Option(help: "Transport recorded in the audit log: nfc, ble, socket.")
    var transport: String = "socket"
    @Flag(help: "Print the decision as JSON.")
    var json = false

    func run() throws {
        let version = legacyProtocolVersion ?? protocolVersion
        guard let v = ProtocolVersionText.parse(version) else { throw UserError(message: "--protocol-version \"\(version)\" is not like 1.0") }
        guard let iface = RadioInterface(rawValue: transport) else { throw UserError(message: "--transport must be nfc, ble or socket") }
        let key = try KeyFiles.publicKey(credential, what: "credential key")
        let tid = try transaction.map { try KeyFiles.id16($0, flag: "--transaction") } ?? Primitives.randomBytes(16)
        let lock = try config.open()
        let stepUp = lock.wantsStepUp(credentialPublicKey: key)
        let p = Presentation(credentialPublicKey: key, transactionID: tid, interface: iface, protocolVersion: v, fast: false,
                             accessDocuments: try accessDoc.map { try KeyFiles.readBytes($0, what: "access document") },
                             revocationDocuments: try revocationDoc.map { try KeyFiles.readBytes($0, what: "revocation document") })
        // The same path as a transaction on a radio: the lock decides, acts and records.
        let outcome = lock.apply(.presentation(p))
        var report = OutcomeReport(outcome, presentation: p, bolt: lock.boltName, at: lock.clock.now())
        report.stepUpWanted = stepUp
        if json { print(KeyFiles.json(report)) } else { print(report.line) }
        if !report.granted { throw ExitCode(ExitCodes.negative) }
    }
}

/// `lockbench clock …`: the lock's virtual clock and trusted time, for CI.
struct ClockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clock",
        abstract: "Show, set or advance a lock's virtual clock; simulate power loss.",
        discussion: """
        `set` is an operator setting the time: the clock becomes trusted and its high-water mark \
        follows. `set --untrusted` and `advance` only move the time, as a drifting or tampered clock \
        would: moving below the high-water mark makes the lock deny with clock_rollback. `power-loss` \
        leaves the clock untrusted (clock_untrusted) until an operator sets it or a credential presents \
        a document signed after the high-water mark.
        """,
        subcommands: [Show.self, Set.self, Advance.self, PowerLoss.self])

    struct Info: Encodable { var time: String; var trusted: Bool; var highWaterMark: String?; var mode: String }

    static func report(_ lock: EmulatedLock, json: Bool) {
        let c = lock.engine.state.clock
        let mode: String
        if case .frozen = lock.clock.mode { mode = "frozen" } else { mode = "running" }
        let info = Info(time: RFC3339.format(lock.clock.now()), trusted: c.trusted, highWaterMark: c.highWaterMark.map(RFC3339.format), mode: mode)
        if json { print(KeyFiles.json(info)) } else {
            print("\(info.time) (\(mode), \(c.trusted ? "trusted" : "UNTRUSTED"), high-water mark \(info.highWaterMark ?? "none"))")
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the lock's time and clock trust.")
        @OptionGroup var config: LockConfigOption
        @Flag(help: "Print as JSON.") var json = false
        func run() throws { ClockCommand.report(try config.open(), json: json) }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set the lock's time (ISO-8601).")
        @OptionGroup var config: LockConfigOption
        @Argument(help: ArgumentHelp("The new time, e.g. 2026-03-02T09:00:00Z.", valueName: "time")) var time: String
        @Flag(help: "Move the time without making it trusted (a tampered or drifting clock).") var untrusted = false
        @Flag(help: "Print as JSON.") var json = false
        func run() throws {
            let t = try KeyFiles.time(time, flag: "time")
            let lock = try config.open()
            do { try lock.setClock(t, trusted: !untrusted) } catch { throw UserError(lockError: error) }
            ClockCommand.report(lock, json: json)
        }
    }

    struct Advance: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move the lock's time forward (or back with a leading minus: -- -1h).")
        @OptionGroup var config: LockConfigOption
        @Argument(help: ArgumentHelp("A duration: 90s, 30m, 8h, 7d; -8h moves back.", valueName: "duration")) var by: String
        @Flag(help: "Print as JSON.") var json = false
        func run() throws {
            let negative = by.hasPrefix("-")
            let d = try KeyFiles.duration(negative ? String(by.dropFirst()) : by, flag: "duration", within: 0...DurationText.maximum)
            let lock = try config.open()
            do { try lock.advanceClock(negative ? -d : d); try lock.tick() } catch { throw UserError(lockError: error) }
            ClockCommand.report(lock, json: json)
        }
    }

    struct PowerLoss: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "power-loss", abstract: "Simulate a power loss: the clock is untrusted until trusted time arrives.")
        @OptionGroup var config: LockConfigOption
        @Flag(help: "Print as JSON.") var json = false
        func run() throws {
            let lock = try config.open()
            do { try lock.powerLoss() } catch { throw UserError(message: error.description, code: ExitCodes.environment) }
            ClockCommand.report(lock, json: json)
        }
    }
}

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
        let c = try LockConfigOption.load(config)
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
