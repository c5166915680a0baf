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

    func load() throws -> LockConfiguration { try LockFiles.configuration(path) }

    /// The lock alone, for the commands that need no radio.
    func open() throws -> EmulatedLock { try LockFiles.lock(path) }

    /// The lock and its reader, for the commands that run transactions.
    func service() throws -> LockService { try LockFiles.service(path) }

    /// The same, with the engine's deliberate faults (`--fault`) in its configuration.
    func service(faults: ReaderFaults) throws -> LockService {
        var file = try LockFiles.file(path)
        file.lock.faults = faults
        return try LockFiles.service(file, path: path)
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
        @Option(name: .customLong("issuer-ca"), help: ArgumentHelp("A trusted issuer CA public key (PEM, from `lockbench key issuer-ca`): documents whose issuer certificate (x5chain) it signed are accepted. Repeatable.", valueName: "file"))
        var issuerCA: [String] = []
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
        @Option(help: ArgumentHelp("NFC reader for `lock run`: \(LockRunner.NFCSource.forms) (default: the virtual PN532).", valueName: "reader"))
        var nfc: String?
        @Option(help: ArgumentHelp("BLE transport: hci0, uart:/dev/ttyUSB0, tcp:HOST:PORT, unix:PATH.", valueName: "transport"))
        var ble: String?
        @Option(help: ArgumentHelp("Where to write the configuration.", valueName: "file"))
        var out: String
        @Flag(help: "Overwrite --out if it exists.")
        var force = false
        @Flag(name: .customLong("no-fast"), help: ArgumentHelp("Standard transactions only: AUTH0 never asks for FAST (the official test plan's reader cases expect a reader set this way, except NFC_RDR_FAST). Written as \"protocol\": {\"fast\": false}."))
        var noFast = false
        @Flag(name: .customLong("step-up-every-tap"), help: ArgumentHelp("Step up (fetch the phone's documents) at every tap that announces one, even when the lock holds the phone's verified document (the official NFC_RDR_STEPUP_AD_SAME_DOC_TWICE expects a reader set this way). Written as \"protocol\": {\"stepUpEveryTap\": true}."))
        var stepUpEveryTap = false
        @Flag(name: .customLong("no-schedules"), help: ArgumentHelp("A lock that does not evaluate schedules: it refuses every access document that uses one (schedules_not_supported), as the official NFC_RDR_NEG_STEPUP_AD_SCHEDULE_IN_ACCESS_RULE_AND_READER expects of such a reader. Written as \"policy\": {\"supportsSchedules\": false}."))
        var noSchedules = false
        @Option(name: .customLong("trusted-credential-keys"), help: ArgumentHelp("A file of credential public keys the lock trusts without a document, one hex key (04 ‖ X ‖ Y, 65 bytes) a line, '#' comments, at most 1024: each is granted on AUTH1 alone unless a revocation list names its key hash (Aliro readers may hold credential keys directly; the official NFC_RDR_STEPUP_RD expects two). Written as \"trustedCredentialKeys\": FILE.", valueName: "file"))
        var trustedCredentialKeys: String?
        @Option(name: .customLong("reader-certificate"), help: ArgumentHelp("A reader certificate for phones (`lockbench key reader-cert`); with --reader-issuer-ca. Written as \"reader\": {\"certificate\": …} (docs/lock-config.md).", valueName: "file"))
        var readerCertificate: String?
        @Option(name: .customLong("reader-issuer-ca"), help: ArgumentHelp("With --reader-certificate: the public key (PEM) of the CA that signed it.", valueName: "file"))
        var readerIssuerCA: String?
        @Option(name: .customLong("certificate-mode"), help: ArgumentHelp("With --reader-certificate: send it in AUTH1 (auth1, the default) or by LOAD CERT (load-cert).", valueName: "auth1|load-cert"))
        var certificateMode: String = ReaderCertificatePresentation.Mode.auth1.rawValue
        @Flag(name: .customLong("chain-certificate"), help: "With --reader-certificate: always send it command-chained (else only when longer than one APDU).")
        var chainCertificate = false

        func validate() throws {
            guard (readerCertificate == nil) == (readerIssuerCA == nil) else {
                throw ValidationError("--reader-certificate and --reader-issuer-ca go together")
            }
            guard ReaderCertificatePresentation.Mode(rawValue: certificateMode) != nil else {
                throw ValidationError("--certificate-mode must be auth1 or load-cert, got '\(certificateMode)'")
            }
        }

        func run() throws {
            let (identity, identityDir) = try ReaderIdentityFile.load(readerIdentity)
            let outDir = (out as NSString).deletingLastPathComponent.isEmpty ? "." : (out as NSString).deletingLastPathComponent
            func relative(_ path: String) -> String {
                let abs = URL(fileURLWithPath: path).standardizedFileURL.path
                let base = URL(fileURLWithPath: outDir).standardizedFileURL.path + "/"
                return abs.hasPrefix(base) ? String(abs.dropFirst(base.count)) : abs
            }
            for i in issuer { _ = try KeyFiles.publicKey(i, what: "issuer key") }
            for i in issuerCA { _ = try KeyFiles.publicKey(i, what: "issuer CA key") }
            var policy = LockPolicy()
            policy.maxDocumentLifetime = try KeyFiles.duration(maxLifetime, flag: "--max-lifetime", within: LockPolicy.Bounds.maxDocumentLifetime)
            policy.clockLeeway = try KeyFiles.duration(leeway, flag: "--leeway", within: LockPolicy.Bounds.clockLeeway)
            policy.relockTime = try KeyFiles.duration(relock, flag: "--relock", within: LockPolicy.Bounds.relockTime)
            guard LockPolicy.Bounds.scheduleUTCOffsetMinutes.contains(utcOffset) else {
                throw UserError(message: "--utc-offset \(utcOffset) is out of range: minutes east of UTC, \(LockPolicy.Bounds.scheduleUTCOffsetMinutes.lowerBound)…\(LockPolicy.Bounds.scheduleUTCOffsetMinutes.upperBound)")
            }
            policy.scheduleUTCOffsetMinutes = utcOffset
            policy.supportsSchedules = !noSchedules
            if clock != "system" { _ = try KeyFiles.time(clock, flag: "--clock") }
            let name = ((out as NSString).lastPathComponent as NSString).deletingPathExtension
            let config = LockConfiguration(
                model: model, firmware: firmware,
                reader: .init(signingKey: relative(identityDir + "/" + identity.signingKey), groupID: identity.groupID, subID: identity.subID,
                              certificate: readerCertificate.map { file in
                                  LockConfiguration.Certificate(file: relative(file), issuerPublicKey: relative(readerIssuerCA ?? ""),
                                                                mode: ReaderCertificatePresentation.Mode(rawValue: certificateMode) ?? .auth1,
                                                                chaining: chainCertificate ? .always : nil)
                              }),
                trustedIssuers: issuer.map(relative), policy: policy,
                stateDirectory: stateDir.map(relative) ?? (name.hasSuffix(".lock") ? String(name.dropLast(5)) : name) + ".state",
                clock: clock, protocol: LockConfiguration.ProtocolOptions(fast: !noFast, stepUpEveryTap: stepUpEveryTap))
            var lock = config
            lock.trustedIssuerCAs = issuerCA.map(relative)
            if let file = trustedCredentialKeys {
                do { _ = try lock.credentialKeys(file) } catch { throw UserError(message: "--trusted-credential-keys: \(error.reason)") }
                lock.trustedCredentialKeys = relative(file)
            }
            let file = LockFile(lock: lock, radios: RadioSettings(nfc: nfc.map { .init(connstring: $0) }, ble: ble.map { .init(transport: $0) }))
            try KeyFiles.write(file.encoded() + Data("\n".utf8), to: out, force: force)
            _ = try LockFiles.file(out)
            print("lock configuration: \(out)")
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Check a lock configuration: JSON shape, reader key, issuer keys, clock.")
        @OptionGroup var config: LockConfigOption
        @Flag(help: "Print the effective configuration (defaults filled in) as JSON.")
        var json = false
        func run() throws {
            let file = try LockFiles.file(config.path)
            let c = file.lock
            if json { print(String(decoding: file.encoded(), as: UTF8.self)); return }
            let trust = try? c.trustStore()
            print("\(config.path): ok — \(c.model) \(c.firmware), reader group \(c.reader.groupID) sub \(c.reader.subID), \(trust?.issuerKeys.count ?? 0) trusted issuer(s), state in \(c.stateDirectoryPath)")
        }
    }
}
