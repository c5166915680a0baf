import AccessProtocol
import ArgumentParser
import BLE
import ByteCore
import Codecs
import CommandLineSupport
import Foundation
import Lock
import LockRuntime
import OfflineUnlock
import NFC
import PCSC
import SocketTransport

struct LockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Run an emulated lock on its radios, or one transaction against a credential.",
        subcommands: [LockRun.self, LockTransact.self, LockReset.self]
    )
}

/// `lockbench lock reset`: the audited way to start a lock's state afresh.
struct LockReset: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Start a lock's state afresh, recorded in its audit log.",
        discussion: """
        A lock whose state.json or audit.log is gone while its audit key (or its log) shows a history \
        refuses to start: its revocation lists, clock trust and replay memory were lost with the files, \
        and starting over silently would let a revoked phone back in. Reset is how an operator says that starting over is intended. The \
        lock gets a trusted clock from the configuration and no revocation lists, cached documents or \
        replay memory; the audit log is kept and gains a lock_reset entry with your reason. An existing \
        state.json is kept as state.json.reset-<time>. Deliver current revocation lists to the lock \
        afterwards.

          lockbench lock reset --config site/front-door.lock.json --reason \\
              "state disk replaced"
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

struct LockRun: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run an emulated lock: poll for credentials, run the access protocol, decide, act, audit.",
        discussion: """
        The lock's model and firmware are checked against the certification tables: on certified \
        firmware the NFC loop also sends the ECP access polling frame (wallet express mode); on \
        uncertified firmware it does not, and says so when it starts.

        NFC: any libnfc connstring drives the same lock — a USB reader on a bench
          lockbench lock run --config lock.json --nfc acr122_usb
          lockbench lock run --config lock.json --nfc pn532_uart:/dev/ttyUSB0
        or a virtual PN532 served by this process on a pseudo-terminal (CI, no hardware):
          lockbench lock run --config lock.json --nfc virtual
        PC/SC: a CCID desk reader (ACR1252U, HID Omnikey, Identiv) through pcscd, the first one or by name
          lockbench lock run --config lock.json --nfc pcsc
          lockbench lock run --config lock.json --nfc "pcsc:Virtual PCD 00 00"
        (`lockbench pcsc list` shows the names; docs/pcsc.md). Or a virtual reader served by another \
        process, like a USB reader on a bench:
          lockbench nfc virtual-reader --link /tmp/reader --key KEY.pem \\
              --document DOC.cbor --trust-reader lock.json
          lockbench lock run --config lock.json --nfc pn532_uart:/tmp/reader
        With --nfc virtual, stdin takes commands that tap software phones on it:
          tap KEY.pem DOC.cbor [DOC.cbor…]   tap a phone with that key and documents
          remove                             take it out of the field
          status                             print the bolt state
          quit                               stop the lock
        BLE: --ble hci0 | uart:/dev/ttyACM0:1000000 | tcp:HOST:PORT | unix:PATH (see docs/ble.md). The \
        lock advertises from a static random address derived from its reader identity, so every lock on \
        a link has its own; --address (or ble.address in the configuration) sets another. A phone that \
        connects and opens no channel within ble.idleTimeout (5 s), or leaves a channel silent for \
        ble.transactionTimeout (10 s), is disconnected. Socket: --socket HOST:PORT taps a credential \
        listening on TCP (`lockbench credential serve`), one connection per tap.

        One line per event; --json prints one JSON object per line (kind: started, radio, granted, \
        denied, warning, stopped). SIGINT or SIGTERM stops the lock cleanly: the radios stop, a bolt \
        still unsecured after a grant is secured and the state written, and every acknowledged decision \
        is already fsynced in the audit log.
        """
    )

    @OptionGroup var config: LockConfigOption

    @Option(help: ArgumentHelp("NFC reader: \(LockRunner.NFCSource.forms) (overrides the configuration).", valueName: "reader"))
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

    @Flag(name: .customLong("wait-for-reader"), help: "Wait for a reader or controller that is not there yet (said once; each retry shown on a terminal) instead of exiting 3.")
    var waitForReader = false

    @Option(name: .customLong("events"), help: ArgumentHelp("Also publish every event as a JSON line on a Unix-domain socket, for viewers such as a bench console (each viewer gets the started event, then every event from when it connects; one that stops reading is dropped, the lock never waits).", valueName: "unix:path"))
    var events: String?

    @Flag(name: .customLong("no-console"), help: "Do not read commands from stdin (a lock run in the background; stdin is not read either when it is a terminal this process does not own).")
    var noConsole = false

    @OptionGroup var readerFaults: ReaderFaultOptions

    func validate() throws {
        if let socket { _ = try SocketCLI.address(socket, flag: "--socket") }
        guard SocketFraming(rawValue: framing) != nil else { throw ValidationError("--framing must be raw or length") }
    }

    func run() throws {
        // Bad input is refused before the state directory is taken.
        var file = try LockFiles.file(config.path)
        file.lock.faults = readerFaults.set
        let bleAddress = try Self.address(flag: address, configured: file.radios.ble?.address, file: config.path)
        // A connstring no libnfc driver knows is a typo (exit 2), refused before the state is taken.
        if let spec = nfc ?? file.radios.nfc.map({ $0.connstring ?? "virtual" }), case .connstring(let c) = LockRunner.NFCSource(spec),
           !NFCEnvironment.libnfcDrivers.contains(NFCEnvironment.driver(of: c)) {
            throw UserError(message: "\(nfc != nil ? "--nfc" : "\(config.path): nfc.connstring") \(c): no libnfc driver is called \"\(NFCEnvironment.driver(of: c))\"; the drivers are \(NFCEnvironment.libnfcDrivers.joined(separator: ", ")), or use virtual or pcsc")
        }
        let service = try LockFiles.service(file, path: config.path)
        let faults = readerFaults.set
        service.withReader { $0.configuration.faults = faults }
        let socketReader = try socket.map { text -> SocketReader.Configuration in
            let (host, port) = try SocketCLI.address(text, flag: "--socket")
            return SocketReader.Configuration(host: host, port: port, framing: SocketFraming(rawValue: framing)!)
        }
        let nfcSpec = nfc ?? service.radios.nfc.map { $0.connstring ?? "virtual" }
        let bleSpec = ble ?? service.radios.ble?.transport
        let json = self.json
        let eventSocket = try events.map { spec -> EventSocket in
            guard let path = EventSocket.path(of: spec) else {
                throw ValidationError("--events \(spec): give unix:PATH (a Unix-domain socket path, e.g. unix:/tmp/front-door.events)")
            }
            do { return try EventSocket(path: path) } catch { throw UserError(message: "--events: \(error)", code: ExitCodes.environment) }
        }
        defer { eventSocket?.close() }
        /// One line at a time on stdout, from the radios' threads and the console's.
        let output = Monitor(())
        let runner = LockRunner(service: service, nfc: nfcSpec.map(LockRunner.NFCSource.init), ble: bleSpec,
                                socket: socketReader, btsnoop: btsnoop) { event in
            output.withLock { _ in
                emitLine(json ? event.json : event.line)
                eventSocket?.publish(event.json, isStart: event.kind == .started)
            }
        }
        runner.bleAddress = bleAddress
        if let eventSocket { runner.onOutcome = { outcome in eventSocket.publish(ViewerAPDUs.event(outcome)) } }
        // Whether the lock should stop, and why when a reader that is not there stops it (exit 3,
        // with the reason and its fix), unless --wait-for-reader; one another process is still
        // creating gets a few seconds.
        let stop = Monitor<(requested: Bool, unavailable: String?)>((false, nil))
        runner.waitForReader = waitForReader
        runner.showRetries = !json && isatty(STDOUT_FILENO) == 1
        runner.startGrace = { radio in Self.startGrace(radio: radio, nfc: nfcSpec, ble: bleSpec) }
        runner.onReaderUnavailable = { radio, failure in
            let spec = radio == .nfc ? nfcSpec ?? "" : radio == .ble ? bleSpec ?? "" : socket ?? ""
            let reason = (failure as? any CodedError)?.reason ?? "\(failure)"
            stop.withLock { $0 = (true, "no \(radio.rawValue) reader at \(spec): \(reason)\n(or pass --wait-for-reader to wait until it is there)") }
        }
        do { try runner.start() } catch {
            throw UserError(message: "cannot start the lock: \(error)", code: ExitCodes.environment)
        }
        let signals = StopSignals { _ in stop.withLock { $0.requested = true } }
        let console = TapConsole(service: service, reader: runner.virtualReader, say: { line in
            output.withLock { _ in emitLine(json ? LockEvent(kind: .radio, message: line).json : line) }
        }, quit: { stop.withLock { $0.requested = true } })
        if Console.start(noConsole: noConsole, command: "lock run", alternatives: "stop the lock with SIGINT or SIGTERM") {
            Thread.detachNewThread { while let line = readLine() { console.handle(line) } }
        }
        stop.wait(until: nil, for: \.requested) { _, _ in }
        withExtendedLifetime(signals) { runner.stop() }
        if let why = stop.withLock({ $0.unavailable }) { throw UserError(message: why, code: ExitCodes.environment) }
    }

    /// How long a radio that never opened may fail before `lock run` gives up on it: none for a
    /// USB reader, pcscd's readers or a kernel adapter (there or not); 5 s for a serial path, a
    /// virtual reader or a controller's socket, which a process started just before may still be creating.
    static func startGrace(radio: RadioInterface, nfc: String?, ble: String?) -> TimeInterval {
        switch radio {
        case .socket: return .infinity   // the credential is dialled per tap, not opened
        case .nfc:
            guard let nfc else { return 0 }
            switch LockRunner.NFCSource(nfc) {
            case .virtual: return 5
            case .pcsc: return 0
            case .connstring(let c): return c.contains(":") ? 5 : 0
            }
        case .ble:
            return (ble ?? "").hasPrefix("hci") ? 0 : 5
        }
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

/// `lockbench lock transact`: one transaction of a configured lock against a credential on TCP.
struct LockTransact: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transact",
        abstract: "Run one lock transaction against a credential listening on TCP and print the decision.",
        discussion: """
        Connects to HOST:PORT (a `lockbench credential serve`, or any credential speaking the socket \
        transport of docs/protocol.md), runs SELECT, AUTH0, AUTH1 or FAST, step-up when the lock needs \
        documents, and EXCHANGE or CONTROL FLOW, and decides exactly as `lock run` does: the lock's \
        engine, clock, state, FAST cache and audit log are used and updated.

          lockbench lock transact --config door.lock.json --connect \\
              127.0.0.1:5000 --json

        --at TIME first moves the lock's virtual clock to TIME (as `clock set --untrusted`). Exit \
        status: 0 granted, 1 denied, 2 usage, 3 the credential could not be reached.
        """)

    @OptionGroup var config: LockConfigOption
    @Option(help: ArgumentHelp("The credential's address.", valueName: "host:port"))
    var connect: String = "127.0.0.1:\(SocketCredentialServer.defaultPort)"
    @Flag(help: "Print the outcome as JSON.")
    var json = false
    @Option(help: ArgumentHelp("Run at this time (ISO-8601): moves the lock's virtual clock there first.", valueName: "time"))
    var at: String?
    @Option(help: ArgumentHelp("APDU framing on the stream: raw or length.", valueName: "framing"))
    var framing: String = SocketFraming.raw.rawValue
    @Flag(inversion: .prefixedNo, help: "Ask for FAST in AUTH0 once a Kpersistent is cached (default: the configuration's \"protocol\": {\"fast\": …}, true unless set).")
    var fast: Bool?
    @Option(help: ArgumentHelp("Milliseconds to wait for each response.", valueName: "ms"))
    var timeout: Int = 5000
    @Flag(help: "Include every APDU (hex) in the output.")
    var transcript = false
    @OptionGroup var readerFaults: ReaderFaultOptions

    func validate() throws {
        guard SocketFraming(rawValue: framing) != nil else { throw ValidationError("--framing must be raw or length") }
        _ = try SocketCLI.address(connect)
        if let at { guard RFC3339.parse(at) != nil else { throw ValidationError("--at \"\(at)\" is not an ISO-8601 time like 2026-03-02T09:00:00Z") } }
    }

    func run() throws {
        let (host, port) = try SocketCLI.address(connect)
        let service = try config.service(faults: readerFaults.set)
        if let at {
            do { try service.lock.setClock(RFC3339.parse(at)!, trusted: false) } catch {
                throw UserError(message: error.description, code: ExitCodes.environment)
            }
        }
        // The reader offers what the lock's policy supports, newest first.
        let faults = readerFaults.set
        service.withReader { reader in
            if let fast { reader.configuration.useFast = fast }
            reader.configuration.faults = faults
        }
        let outcome = try service.transact(connectingTo: host, port: port, framing: SocketFraming(rawValue: framing)!,
                                           timeoutMilliseconds: Int32(clamping: timeout))
        print(OutcomeReport(outcome, bolt: service.lock.boltName, transcript: transcript).rendered(json: json))
        if !outcome.granted { throw ExitCode(ExitCodes.negative) }
    }
}
