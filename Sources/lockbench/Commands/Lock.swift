import AccessProtocol
import ArgumentParser
import BLE
import ByteCore
import Codecs
import Foundation
import Lock
import LockRuntime
import OfflineUnlock
import SocketTransport

/// `lockbench lock run` (the main job) and `lockbench demo`.
let lockCommands: [ParsableCommand.Type] = [LockCommand.self, DemoCommand.self]

struct LockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Run an emulated lock on its radios, or one transaction against a credential.",
        subcommands: [LockRun.self] + lockTransactCommands + [LockReset.self]
    )
}

/// `lockbench lock reset`: the audited way to start a lock's state afresh.
struct LockReset: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Start a lock's state afresh, recorded in its audit log.",
        discussion: """
        A lock whose state.json is gone but whose audit log has entries refuses to start: its \
        revocation lists, clock trust and replay memory were lost with the file, and starting \
        over silently would let a revoked phone back in. Reset is how an operator says that \
        starting over is intended. The lock gets a trusted clock from the configuration and no \
        revocation lists, cached documents or replay memory; the audit log is kept and gains a \
        lock_reset entry with your reason. An existing state.json is kept as \
        state.json.reset-<time>. Deliver current revocation lists to the lock afterwards.

          lockbench lock reset --config site/front-door.lock.json --reason "state disk replaced"
        """)
    @OptionGroup var config: LockConfigOption
    @Option(help: ArgumentHelp("Why, for the audit log.", valueName: "text")) var reason: String
    func run() throws {
        let entry: AuditEntry
        do { entry = try EmulatedLock.reset(configuration: try config.load(), reason: reason) } catch let e as LockError {
            throw UserError(lockError: e)
        }
        print("lock state reset; audit entry seq \(entry.seq): \(entry.detail ?? "")")
    }
}

/// Opens the lock service for a configuration file, turning failures into user errors.
func openLockService(_ path: String) throws -> LockService {
    let configuration = try LockConfigOption.load(path)
    do { return try LockService(configuration: configuration) } catch let e as LockError {
        throw UserError(message: e.description, code: e.code.isEnvironment ? ExitCodes.environment : ExitCodes.usage)
    } catch {
        throw UserError(message: "\(path): \(error)")
    }
}

struct LockRun: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run an emulated lock: poll for credentials, run the access protocol, decide, act, audit.",
        discussion: """
        The lock's model and firmware are checked against the certification tables: on certified
        firmware the NFC loop also sends the ECP access polling frame (wallet express mode); on
        uncertified firmware it does not, and says so when it starts.

        NFC: any libnfc connstring drives the same lock — a USB reader on a bench
          lockbench lock run --config lock.json --nfc acr122_usb
          lockbench lock run --config lock.json --nfc pn532_uart:/dev/ttyUSB0
        or a virtual PN532 served by this process on a pseudo-terminal (CI, no hardware):
          lockbench lock run --config lock.json --nfc virtual
        PC/SC: a CCID desk reader (ACR1252U, HID Omnikey, Identiv) through pcscd, the first one or by name
          lockbench lock run --config lock.json --nfc pcsc
          lockbench lock run --config lock.json --nfc "pcsc:Virtual PCD 00 00"
        (`lockbench pcsc list` shows the names; docs/pcsc.md). Or a virtual reader served by another process, like a USB reader on a bench:
          lockbench nfc virtual-reader --link /tmp/reader --credential-key KEY.pem --document DOC.cbor --lock-config lock.json
          lockbench lock run --config lock.json --nfc pn532_uart:/tmp/reader
        With --nfc virtual, stdin takes commands that tap software phones on it:
          tap KEY.pem DOC.cbor [DOC.cbor…]   place a credential (its key and access/revocation documents)
          remove                              take it out of the field
          status                              print the bolt state
          quit                                stop the lock
        BLE: --ble hci0 | uart:/dev/ttyACM0:1000000 | tcp:HOST:PORT | unix:PATH (see docs/ble.md).
        The lock advertises from a static random address derived from its reader identity, so
        every lock on a link has its own; --address (or ble.address in the configuration) sets
        another. A phone that connects and opens no channel within ble.idleTimeout (5 s), or
        leaves a channel silent for ble.transactionTimeout (10 s), is disconnected.
        Socket: --socket HOST:PORT taps a credential listening on TCP (`lockbench credential serve`), one connection per tap.

        One line per event; --json prints one JSON object per line (kind: started, radio,
        granted, denied, warning, stopped). SIGINT or SIGTERM stops the lock cleanly: the radios
        stop, a bolt still unsecured after a grant is secured and the state written, and every
        acknowledged decision is already fsynced in the audit log.
        """
    )

    @OptionGroup var config: LockConfigOption

    @Option(help: ArgumentHelp("NFC reader: a libnfc connstring, `virtual` or `virtual:LINKPATH`, `pcsc` or `pcsc:READER NAME` (overrides the configuration).", valueName: "reader"))
    var nfc: String?

    @Option(help: ArgumentHelp("BLE controller transport (overrides the configuration).", valueName: "transport"))
    var ble: String?

    @Option(help: ArgumentHelp("A credential listening on TCP (`lockbench credential serve`): one connection per tap, at most one a second.", valueName: "host:port"))
    var socket: String?

    @Option(help: ArgumentHelp("APDU framing with --socket: raw or length.", valueName: "framing"))
    var framing: String = SocketFraming.raw.rawValue

    @Option(help: ArgumentHelp("Write the BLE HCI traffic to this btsnoop file.", valueName: "file"))
    var btsnoop: String?

    @Option(help: ArgumentHelp("The lock's BLE static random address, most significant byte first (overrides the configuration's ble.address and the address derived from the reader identity).", valueName: "C3:12:34:56:78:9A"))
    var address: String?

    @Flag(help: "One JSON object per event line.")
    var json = false

    @OptionGroup var readerFaults: ReaderFaultOptions

    func validate() throws {
        if let socket { _ = try SocketCLI.address(socket, flag: "--socket") }
        guard SocketFraming(rawValue: framing) != nil else { throw ValidationError("--framing must be raw or length") }
    }

    func run() throws {
        // Bad input is refused before the state directory is taken.
        let bleAddress = try Self.address(flag: address, configured: try LockConfigOption.load(config.path).ble?.address, file: config.path)
        let service = try openLockService(config.path)
        service.reader.configuration.faults = readerFaults.set
        let socketReader = try socket.map { text -> SocketReader.Configuration in
            let (host, port) = try SocketCLI.address(text, flag: "--socket")
            return SocketReader.Configuration(host: host, port: port, framing: SocketFraming(rawValue: framing)!)
        }
        let nfcSpec = nfc ?? service.configuration.nfc.map { $0.connstring ?? "virtual" }
        let bleSpec = ble ?? service.configuration.ble?.transport
        let json = self.json
        let output = NSLock()
        let runner = LockRunner(service: service, nfc: nfcSpec.map(LockRunner.NFCSource.init), ble: bleSpec,
                                socket: socketReader, btsnoop: btsnoop) { event in
            output.lock(); defer { output.unlock() }
            emitLine(json ? event.json : event.line)
        }
        runner.bleAddress = bleAddress
        do { try runner.start() } catch {
            throw UserError(message: "cannot start the lock: \(error)", code: ExitCodes.environment)
        }
        let finished = DispatchSemaphore(value: 0)
        let signals = StopSignals { _ in finished.signal() }
        let console = TapConsole(service: service, reader: runner.virtualReader, say: { line in
            output.lock(); defer { output.unlock() }
            emitLine(json ? LockEvent(kind: .radio, message: line).json : line)
        }, quit: { finished.signal() })
        Thread.detachNewThread { while let line = readLine() { console.handle(line) } }
        finished.wait()
        withExtendedLifetime(signals) { runner.stop() }
    }
}

extension LockRun {
    /// `--address`, else the configuration's `ble.address`, parsed; a bad one is a usage error
    /// saying where it came from. nil = derive from the reader identity.
    static func address(flag: String?, configured: String?, file: String) throws -> BLEAddress? {
        guard let text = flag ?? configured else { return nil }
        do { return try BLEAddress(staticRandom: text) } catch {
            throw UserError(message: (flag != nil ? "--address: " : "\(file): ble.address: ") + error.reason, code: ExitCodes.usage)
        }
    }
}

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "The whole offline unlock on this machine, no hardware: issuer, lock, phones, taps, audit log.",
        discussion: """
        Creates an issuer, a lock (a Schlage NDE on certified firmware 02.12.72) and phone
        credentials in a temporary directory (or --directory), starts the lock on a virtual PN532
        that the real libnfc drives over a pseudo-terminal, and taps:
          alice, valid access document      → GRANTED
          bob, expired access document      → DENIED (expired)
          carol, carrying a revocation of alice's phone → GRANTED (the lock stores the revocation)
          alice again                       → DENIED (revoked)
        then prints the lock's audit log. Exit 0 when every tap got the expected decision.
        """
    )

    @Option(help: ArgumentHelp("Keep the demo's files (keys, documents, lock configuration, state) here.", valueName: "dir"))
    var directory: String?

    @Flag(help: "Print lock events as JSON lines.")
    var json = false

    func run() throws {
        let dir: URL
        if let directory {
            dir = URL(fileURLWithPath: directory)
        } else {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("lockbench-demo-\(ProcessInfo.processInfo.processIdentifier)")
        }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let json = self.json
        let scenario = DemoScenario(directory: dir, say: { emitLine("» " + $0) }, event: { emitLine(json ? $0.json : "  " + $0.line) })
        let result: (steps: [DemoScenario.Step], auditLog: String)
        do { result = try scenario.run() } catch {
            throw UserError(message: "demo failed: \(error)", code: ExitCodes.environment)
        }
        emitLine("")
        emitLine("Summary:")
        for step in result.steps {
            let got = step.outcome.map { $0.granted ? "GRANTED" : "DENIED (\($0.reason?.code ?? "?"))" } ?? "no decision"
            let want = step.expected.map { "DENIED (\($0.code))" } ?? "GRANTED"
            emitLine("  \(step.passed ? "ok  " : "FAIL") \(step.title): \(got)" + (step.passed ? "" : ", expected \(want)"))
        }
        emitLine("")
        emitLine("Audit log (\(dir.path)/state):")
        emitLine(result.auditLog.trimmingCharacters(in: .newlines))
        emitLine("")
        emitLine("Files kept in \(dir.path): try `lockbench audit verify --config \(dir.path)/lock.json`.")
        if !result.steps.allSatisfy(\.passed) { throw ExitCode(ExitCodes.negative) }
    }
}
