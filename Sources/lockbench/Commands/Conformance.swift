import AccessProtocol
import ArgumentParser
import BLE
import ByteCore
import Codecs
import Conformance
import ConformanceRadios
import Foundation
import LockRuntime
import NFC
import PhoneRadios
import PhoneSeam
import SocketTransport

struct ConformanceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conformance",
        abstract: "Check your own phone or reader against docs/protocol.md, one behaviour per check.",
        discussion: """
        `conformance credential` plays the lock's reader against a phone you built; `conformance reader` \
        plays the phone against a lock or reader you built. Each check is one behaviour of \
        docs/protocol.md (its section is printed), runs in a fresh transaction, and is named after the \
        Aliro Certification Tool case it matches where one does. `conformance list` prints the \
        catalogue; docs/conformance.md says which test-plan cases are covered and why.

        Exit status: 0 every applicable check passed, 1 a check failed, 2 usage, 3 the device or radio \
        could not be reached.
        """,
        subcommands: [ConformanceCredential.self, ConformanceReader.self, ConformanceList.self, ConformanceTrustedKeys.self])
}

/// Output, transcript and selection flags shared by both directions.
struct ConformanceOutputOptions: ParsableArguments {
    @Flag(help: "Print the report as JSON (same as --format json).")
    var json = false

    @Option(help: ArgumentHelp("Report format: text (one line per check), json, or junit (one testcase per check, for CI).", valueName: "format"))
    var format: String = "text"

    @Option(help: ArgumentHelp("Write every APDU, with its decoded TLVs, to this file (read it back with `lockbench trace`).", valueName: "file"))
    var transcript: String?

    @Flag(name: .customLong("transcript-secrets"), help: ArgumentHelp("Also write the ephemeral private keys and FAST keys of LockBench's side, so `lockbench trace` can open the secure channels (like SSLKEYLOGFILE: keep such a file private)."))
    var transcriptSecrets = false

    @Option(name: .customLong("only"), parsing: .upToNextOption, help: ArgumentHelp("Run only these checks (ids from `conformance list`).", valueName: "id"))
    var only: [String] = []

    @Option(name: .customLong("skip"), parsing: .upToNextOption, help: ArgumentHelp("Leave out these checks (ids from `conformance list`), e.g. rdr.fast against a reader set for standard transactions.", valueName: "id"))
    var skip: [String] = []

    @Option(help: ArgumentHelp("Also write the report as JUnit XML to this file (written on Ctrl-C too, with unfinished checks skipped).", valueName: "file"))
    var junit: String?

    @Option(help: ArgumentHelp("Also write the report as one self-contained HTML page to this file (written on Ctrl-C too, with unfinished checks not run).", valueName: "file"))
    var html: String?

    @Flag(help: ArgumentHelp("Fail (exit 1) on advisories too: rules of LockBench's own that no official case states (printed as `warn`)."))
    var strict = false

    @Option(name: .customLong("events"), help: ArgumentHelp("Also publish the run on a Unix-domain socket as it goes, for a bench console (`lockbench console --conformance unix:PATH`): the checks planned, each result as it ends, the counts. The run waits up to 2 s for a first viewer (a console polls for the socket); one that connects later gets the run so far.", valueName: "unix:path"))
    var events: String?

    func validate() throws {
        guard ["text", "json", "junit"].contains(format) else { throw ValidationError("--format must be text, json or junit") }
        if transcriptSecrets && transcript == nil { throw ValidationError("--transcript-secrets needs --transcript FILE") }
        if let events, EventSocket.path(of: events) == nil {
            throw ValidationError("--events \(events.prefix(80)): give unix:PATH (a Unix-domain socket path, e.g. unix:/tmp/conformance.events)")
        }
    }

    /// The `--events` socket, listening; exit 3 when it cannot be made.
    func openEvents() throws -> EventSocket? {
        guard let events, let path = EventSocket.path(of: events) else { return nil }
        do { return try EventSocket(path: path, replay: 1024) } catch {
            throw UserError(message: "--events: \(error)", code: ExitCodes.environment)
        }
    }

    var effectiveFormat: String { json ? "json" : format }

    func selected<S, P>(_ all: [ConformanceCheck<S, P>]) throws -> [ConformanceCheck<S, P>] {
        for (flag, ids) in [("--only", only), ("--skip", skip)] {
            for id in ids where !all.contains(where: { $0.id == id }) {
                throw ValidationError("\(flag) \(id): no such check; `lockbench conformance list` prints them")
            }
        }
        return all.filter { (only.isEmpty || only.contains($0.id)) && !skip.contains($0.id) }
    }

    /// Runs the checks in order. In text each line is printed when its check ends and, on a
    /// terminal, a progress line on stderr says how far the run is and what the device must do
    /// (`awaiting`). Ctrl-C (or SIGTERM) prints the report so far, unfinished checks `not run`,
    /// writes the transcript and JUnit so far, and exits 130.
    func execute<S, P>(_ checks: [ConformanceCheck<S, P>], _ subject: S, _ profile: P, direction: String, transport: String,
                       recorder: TranscriptRecorder?, awaiting: @escaping (ConformanceCheck<S, P>) -> String?) throws {
        let run = ConformanceRun(checks, direction: direction, transport: transport)
        let text = effectiveFormat == "text"
        let progress = ProgressLine(enabled: text && isatty(STDERR_FILENO) == 1)
        let events = try openEvents()
        defer { events?.close() }
        events?.publish(ConformanceEvents.started(direction: direction, transport: transport, checks: checks.map(\.id), at: Date()), isStart: true)
        events?.waitForViewer(timeout: 2)
        let stop = StopSignals { _ in
            progress.clear()
            let report = run.report
            events?.publish(ConformanceEvents.finished(report, interrupted: true))
            events?.close()
            try? self.writeFiles(report, recorder: recorder)
            if text {
                for r in report.results where r.status == .notRun { emitLine(ConformanceReport.line(r, width: run.idWidth)) }
                emitLine(report.summary + " (interrupted)")
            } else {
                self.printDocument(report)
            }
            Foundation.exit(130)
        }
        withExtendedLifetime(stop) {
            run.run(checks, subject, profile, starting: { i, check in
                progress.show("checks \(i)/\(run.total) · \(check.id)" + (awaiting(check).map { " · \($0)" } ?? ""))
            }, ended: { i, result in
                progress.clear()
                if text { emitLine(ConformanceReport.line(result, width: run.idWidth)) }
                events?.publish(ConformanceEvents.check(result, index: i, total: run.total))
            })
        }
        progress.clear()
        let report = run.report
        events?.publish(ConformanceEvents.finished(report, interrupted: false))
        try writeFiles(report, recorder: recorder)
        if text { emitLine(report.summary) } else { printDocument(report) }
        if !report.allPassed(strict: strict) { throw ExitCode(ExitCodes.negative) }
    }

    private func printDocument(_ report: ConformanceReport) {
        switch effectiveFormat {
        case "json": print(report.json())
        case "junit": print(report.junit(strict: strict), terminator: "")
        default: for line in report.lines() { emitLine(line) }
        }
    }

    /// The transcript (`--transcript`) and JUnit (`--junit`) files.
    private func writeFiles(_ report: ConformanceReport, recorder: TranscriptRecorder?) throws {
        var files: [(String, String)] = []
        if let transcript, let recorder {
            let t = recorder.snapshot
            files.append((transcript, t.encoded { session in TraceDecoder().decode(session, in: t) }))
        }
        if let junit { files.append((junit, report.junit(strict: strict))) }
        if let html { files.append((html, report.html(strict: strict))) }
        for (path, text) in files {
            do { try text.write(toFile: path, atomically: true, encoding: .utf8) } catch {
                throw UserError(message: "cannot write \(path): \(error.localizedDescription)", code: ExitCodes.environment)
            }
        }
    }
}

/// One line on stderr that is rewritten in place (a terminal only): how far a run is.
final class ProgressLine: Sendable {
    let enabled: Bool
    init(enabled: Bool) { self.enabled = enabled }
    func show(_ text: String) {
        guard enabled else { return }
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + text).utf8))
    }
    func clear() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}

struct ConformanceCredential: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "credential",
        abstract: "Check a phone (credential) you built: LockBench plays the lock's reader.",
        discussion: """
        Tell the phone under test to trust the reader identity you pass (from `lockbench key reader`), \
        then point LockBench at it over one radio:

          lockbench conformance credential --reader-identity door.reader.json \\
              --connect 127.0.0.1:5000
          lockbench conformance credential --reader-identity door.reader.json \\
              --nfc acr122_usb
          lockbench conformance credential --reader-identity door.reader.json \\
              --ble hci0

        With --connect the phone listens on TCP (one APDU per write, one transaction per connection). \
        With --nfc the phone (or a virtual PN532 holding it) stays in the field; each check re-selects \
        it; a first plain transaction learns what the phone announces (FCI, signaling bitmap), and \
        checks that need something it did not announce report "not applicable" with the reason. With \
        --ble LockBench advertises as a lock and runs the official ble_user_device cases instead \
        (docs/conformance-ble.md): the phone connects once per transaction, sends the initiate, and \
        each check's verdict is its case's pass criteria.
        """)

    @Option(name: .customLong("reader-identity"), help: ArgumentHelp("The reader identity the phone trusts (NAME.reader.json from `lockbench key reader`).", valueName: "file"))
    var readerIdentity: String
    @Option(help: ArgumentHelp("The phone listens on TCP at this address.", valueName: "host:port"))
    var connect: String?
    @Option(help: ArgumentHelp("The phone is in the field of this libnfc reader (connstring).", valueName: "connstring"))
    var nfc: String?
    @Option(help: ArgumentHelp("Advertise as a lock on this BLE controller transport (hci0, uart:…, tcp:HOST:PORT, unix:PATH).", valueName: "transport"))
    var ble: String?
    @Option(help: ArgumentHelp("With --ble: write the HCI traffic to this btsnoop file.", valueName: "file"))
    var btsnoop: String?
    @Option(name: .customLong("issuer"), parsing: .upToNextOption, help: ArgumentHelp("Public key (PEM) of the issuer of the phone's documents; repeatable. The official step-up cases verify each document's signature: without it they are not applicable.", valueName: "file"))
    var issuers: [String] = []
    @Flag(name: .customLong("reader-certificates"),
          help: "The phone was provisioned as the official reader-certificate cases' operator prompt says (it trusts the reader issuer key 043928f3… for reader group 00113344667799AA00113344667799AA; LockBench's phone: its reader-issuer-ca option, 00113344667799AA00113344667799AA=FILE): run the cert.* checks, which play the official reader with its certificates.")
    var readerCertificates = false
    @Flag(name: .customLong("sixteen-reader-groups"),
          help: "The phone's access credential trusts the sixteen reader groups 00113344667799AA00113344667799AB…CE of the official case NFC_UD_STANDARD_SIXTEEN_GROUPIDENTIFIER_ONE_AC, with the case's reader keys (LockBench's phone: --trust-official-reader-groups): run standard.sixteen-groups.")
    var sixteenReaderGroups = false
    @Option(name: .customLong("element-id"), help: ArgumentHelp("The element identifier the step-up checks ask for in namespace aliro-a (the tool's th_access_element_id).", valueName: "id"))
    var elementID: String = DocType.accessElement
    @Option(help: ArgumentHelp("With --ble: seconds to wait for the phone in each step of a check.", valueName: "seconds"))
    var timeout: Int = 15
    @Flag(help: ArgumentHelp("With --ble: the phone runs its remote keyless entry flow (e.g. `ble phone --rke unsecure`): run the blerke_ud checks instead of the others."))
    var rke = false
    @OptionGroup var output: ConformanceOutputOptions

    func validate() throws {
        guard (1...600).contains(timeout) else { throw ValidationError("--timeout must be 1…600 seconds") }
        if rke && ble == nil { throw ValidationError("--rke goes with --ble") }
        guard !elementID.isEmpty, elementID.utf8.count <= 64 else { throw ValidationError("--element-id must be 1…64 bytes") }
        let radios = [connect, nfc, ble].compactMap { $0 }
        guard radios.count == 1 else { throw ValidationError("give exactly one of --connect HOST:PORT, --nfc CONNSTRING, --ble TRANSPORT") }
        if let connect { _ = try SocketCLI.address(connect) }
        if btsnoop != nil && ble == nil { throw ValidationError("--btsnoop goes with --ble") }
    }

    func run() throws {
        let identity = try ReaderIdentityFile.identity(readerIdentity)
        let recorder = output.transcript.map { _ in TranscriptRecorder(recordSecrets: output.transcriptSecrets) }
        if let ble { return try runBLE(ble, identity: identity, recorder: recorder) }
        let checks = try output.selected(CredentialCatalogue.all)
        let opener: LinkOpener
        let transport: String
        var interface = RadioInterface.nfc
        var cleanup: () -> Void = {}
        // LockBench is the reader: the phone under test comes through the lock's own `CardReader`s.
        if let connect {
            let (host, port) = try SocketCLI.address(connect)
            let links = try CardReaderLinks(SocketReader(configuration: .init(host: host, port: port, rearmDelay: 0)), waitForCard: 2)
            opener = links.open
            transport = "socket \(connect)"
            interface = .socket
        } else {
            let nfc = nfc!
            let links: CardReaderLinks<LibNFCReader>
            do { links = try CardReaderLinks(LibNFCReader(configuration: .init(connstring: nfc, apduTimeout: 3000))) } catch {
                throw UserError(message: "cannot open the NFC reader \(nfc): \(error)", code: ExitCodes.environment)
            }
            opener = links.open
            transport = "nfc \(nfc)"
            cleanup = links.close
        }
        defer { cleanup() }
        let issuerKeys = try issuers.map { try KeyFiles.publicKey($0, what: "issuer key") }
        let phone = CredentialUnderTest(open: opener, identity: identity, interface: interface, recorder: recorder, elementID: elementID)
        var profile = CredentialProfile.discover(phone, issuerKeys: issuerKeys)
        profile.readerCertificates = readerCertificates
        profile.sixteenReaderGroups = sixteenReaderGroups
        if profile.fci == nil, let problem = profile.problem, problem.hasPrefix("could not reach") {
            throw UserError(message: "\(transport): \(problem)", code: ExitCodes.environment)
        }
        try output.execute(checks, phone, profile, direction: "credential", transport: transport, recorder: recorder) { _ in nil }
    }
}

extension ConformanceCredential {
    /// Over BLE the official ble_user_device cases (docs/conformance-ble.md), LockBench the lock.
    func runBLE(_ ble: String, identity: ReaderSigningIdentity, recorder: TranscriptRecorder?) throws {
        let checks = try output.selected(rke ? BLECredentialCatalogue.remoteKeylessEntry : BLECredentialCatalogue.all)
        let phone: BLEPhoneUnderTest
        do {
            phone = try BLEPhoneUnderTest(ble: ble, identity: identity, btsnoop: btsnoop, timeout: TimeInterval(timeout), recorder: recorder)
            phone.readerCertificates = readerCertificates
        } catch {
            throw UserError(message: "cannot start BLE on \(ble): \(error)", code: ExitCodes.environment)
        }
        defer { phone.stop() }
        phone.issuerKeys = try issuers.map { try KeyFiles.publicKey($0, what: "issuer key") }
        phone.elementID = elementID
        // The certificate cases need no connection until the phone is provisioned for them.
        let needed = checks.filter { readerCertificates || !BLECredentialCatalogue.certificateCases.contains($0.id) }.map(\.transactions).reduce(0, +)
        if output.effectiveFormat == "text" {
            emitLine("advertising as a lock on \(ble); connect the phone (once per check): \(checks.count) checks need at least \(needed) connections")
        }
        try output.execute(checks, phone, (), direction: "credential", transport: "ble \(ble)", recorder: recorder) { check in
            "waiting for the phone to connect" + (check.transactions > 1 ? " (\(check.transactions) connections)" : "")
        }
    }
}

struct ConformanceReader: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reader",
        abstract: "Check a lock or reader you built: LockBench plays the phone.",
        discussion: """
        LockBench presents a phone (the key, documents and trusted reader you give, as for `credential \
        serve`) once per check, each time with the behaviour the check needs (a wrong device signature, \
        a wrong tag, no common version, chained answers…), and judges what your reader sends back. Make \
        your reader run one transaction per presentation:

          # your reader connects once per check:
          lockbench conformance reader --listen 5000 --key phone.key.pem \\
              --document phone.access.cbor --trust-reader door.reader.json
          # your reader opens pn532_uart:/tmp/reader:
          lockbench conformance reader --nfc virtual:/tmp/reader --key …
          # LockBench scans for your lock:
          lockbench conformance reader --ble tcp:127.0.0.1:9102 --key …

        The phone is tolerant of a missing Le (so rdr.le can report it rather than break the run).

        Some official cases expect the reader set up otherwise (docs/conformance.md): run them with \
        --only against a reader so set. rdr.fast: set for FAST; rdr.stepup.same-doc-twice: stepping up \
        at every tap; rdr.neg.stepup.time-verification and rdr.neg.stepup.schedule-time-verification: \
        without verified time (a LockBench lock: `lockbench clock power-loss`); \
        rdr.neg.stepup.schedules-unsupported: not supporting schedules (`config create --no-schedules`); \
        rdr.stepup.rd: holding the credential keys of its three phones (`lockbench conformance trusted-keys`).
        """)

    @Option(help: ArgumentHelp("Listen on this TCP port; the reader connects once per check.", valueName: "port"))
    var listen: Int?
    @Option(help: ArgumentHelp("`virtual` or `virtual:LINKPATH`: a virtual PN532 the reader opens through libnfc (pn532_uart:…).", valueName: "virtual"))
    var nfc: String?
    @Option(help: ArgumentHelp("Act as a phone (central) on this BLE controller transport.", valueName: "transport"))
    var ble: String?
    @Option(help: ArgumentHelp("With --ble: write the HCI traffic to this btsnoop file.", valueName: "file"))
    var btsnoop: String?
    @Option(help: ArgumentHelp("Seconds to wait for the reader in each check.", valueName: "seconds"))
    var timeout: Int = 15
    @Option(help: ArgumentHelp("Protocol versions the phone offers, most preferred first, e.g. 1.0,0.9.", valueName: "list"))
    var versions: String = "1.0"
    @Option(name: .customLong("issuer-key"), help: ArgumentHelp("The site issuer's private key (PEM) the lock trusts: the official step-up cases hand the lock documents of their own (one defect each), minted with it. Without it they are not applicable.", valueName: "file"))
    var issuerKey: String?
    @Option(name: .customLong("issuer-ca-key"), help: ArgumentHelp("With --issuer-key: the private key (PEM) of the issuer CA the lock trusts (config create --issuer-ca): the issuer certificate cases certify the issuer with it. Without it they are not applicable.", valueName: "file"))
    var issuerCAKey: String?
    @Option(help: ArgumentHelp("The lock's current time (ISO-8601) around which minted documents are valid (default: now).", valueName: "time"))
    var now: String?
    @OptionGroup var phone: PhoneOptions
    @OptionGroup var output: ConformanceOutputOptions

    func validate() throws {
        let radios = [listen.map(String.init), nfc, ble].compactMap { $0 }
        guard radios.count == 1 else { throw ValidationError("give exactly one of --listen PORT, --nfc virtual[:LINK], --ble TRANSPORT") }
        if let listen { guard (0...65535).contains(listen) else { throw ValidationError("--listen must be 0…65535") } }
        if let nfc { guard nfc == "virtual" || nfc.hasPrefix("virtual:") else { throw ValidationError("--nfc takes virtual or virtual:LINKPATH (LockBench plays the card in a virtual PN532)") } }
        guard phone.isGiven else { throw ValidationError("--key: the phone's private key (PEM, from `lockbench key credential`), with --document and --trust-reader") }
        guard (1...600).contains(timeout) else { throw ValidationError("--timeout must be 1…600 seconds") }
        if btsnoop != nil && ble == nil { throw ValidationError("--btsnoop goes with --ble") }
        _ = try SocketCLI.versions(versions, flag: "--versions")
        if let now { guard RFC3339.parse(now) != nil else { throw ValidationError("--now \"\(now)\" is not an ISO-8601 time like 2026-03-02T09:00:00Z") } }
    }

    func run() throws {
        let interface: RadioInterface = ble != nil ? .ble : listen != nil ? .socket : .nfc
        let session = try phone.makeSession(interface: interface == .ble ? .ble : .nfc, versions: try SocketCLI.versions(versions, flag: "--versions"))!
        // Over BLE the official ble_reader cases (docs/conformance-ble.md), not the NFC ones.
        let checks = try output.selected(ble != nil ? BLEReaderCatalogue.all : ReaderCatalogue.all)
        let recorder = output.transcript.map { _ in TranscriptRecorder(recordSecrets: output.transcriptSecrets) }
        let text = output.effectiveFormat == "text"
        let spec: PhoneRadioSpec
        if let listen { spec = .socket(host: "127.0.0.1", port: UInt16(listen)) }
        else if let nfc { spec = .pn532(link: nfc.hasPrefix("virtual:") ? String(nfc.dropFirst("virtual:".count)) : nil) }
        else { spec = .ble(transport: ble!) }
        var options = PhoneRadioSpec.Options()
        options.btsnoop = btsnoop
        let radio: any PhoneRadio
        do { radio = try spec.radio(options) } catch {
            throw UserError(message: "cannot start the phone's radio: \(error)", code: ExitCodes.environment)
        }
        defer { radio.close() }
        switch spec {
        case .socket: if text { emitLine("listening on \(radio.address)") }
        case .pn532:
            emitError("virtual PN532 ready; connstring: \(radio.address)")
            guard radio.waitForLock(timeout: 60) else {
                throw UserError(message: "no reader opened \(radio.address) within 60 s", code: ExitCodes.environment)
            }
        default: break
        }
        var base = session.configuration
        base.interface = interface == .ble ? .ble : .nfc
        let issuer = try issuerKey.map { try KeyFiles.privateKey($0, what: "issuer key") }
        let issuerCA = try issuerCAKey.map { try KeyFiles.privateKey($0, what: "issuer CA key") }
        let reader = ReaderUnderTest(radio: radio, base: base, recorder: recorder, timeout: TimeInterval(timeout),
                                     issuer: issuer, issuerCA: issuerCA, now: now.flatMap { RFC3339.parse($0) } ?? Date())
        let needed = checks.map(\.transactions).reduce(0, +)
        if text {
            emitLine("\(checks.count) checks need \(needed) transactions from the reader under test: \(Self.instruction(listen: listen, nfc: nfc)) once per transaction; each check is printed when it ends")
        }
        try output.execute(checks, reader, (), direction: "reader", transport: Self.transportLabel(spec, radio), recorder: recorder) { check in
            "awaiting the reader's transaction" + (check.transactions > 1 ? "s (\(check.transactions))" : "")
        }
    }

    /// The radio as the report names it: `socket 127.0.0.1:5000`, `nfc pn532_uart:/dev/pts/4`, `ble tcp:…`.
    static func transportLabel(_ spec: PhoneRadioSpec, _ radio: any PhoneRadio) -> String {
        switch spec {
        case .socket: return "socket \(radio.address)"
        case .pn532, .vpicc: return "nfc \(radio.address)"
        case .ble: return "ble \(radio.address)"
        }
    }

    /// What the tester makes the reader do for each transaction, per radio.
    static func instruction(listen: Int?, nfc: String?) -> String {
        if listen != nil { return "connect the reader to the port and run a transaction" }
        if nfc != nil { return "let the reader poll the virtual PN532 (the phone is placed in its field, then removed)" }
        return "let the lock advertise; LockBench connects as the phone"
    }
}

struct ConformanceList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the checks: id, official Aliro Certification Tool case, docs/protocol.md section, what it checks.")

    @Flag(help: "As JSON.")
    var json = false

    struct Entry: Encodable {
        var direction: String, id: String, officialCase: String?, section: String, title: String, advisory: Bool
    }

    /// Every catalogue: NFC or socket (`credential`, `reader`) and BLE (`ble-credential` with
    /// `conformance credential --ble`, its RKE checks with `--rke`; `ble-reader` with `conformance reader --ble`).
    static func entries() -> [Entry] {
        func rows<S, P>(_ direction: String, _ checks: [ConformanceCheck<S, P>]) -> [Entry] {
            checks.map { Entry(direction: direction, id: $0.id, officialCase: $0.officialCase, section: $0.section, title: $0.title, advisory: $0.advisory) }
        }
        return rows("credential", CredentialCatalogue.all) + rows("reader", ReaderCatalogue.all)
            + rows("ble-credential", BLECredentialCatalogue.all + BLECredentialCatalogue.remoteKeylessEntry)
            + rows("ble-reader", BLEReaderCatalogue.all)
    }

    func run() throws {
        let entries = Self.entries()
        if json { print(KeyFiles.json(entries)); return }
        for e in entries {
            emitLine("\(e.direction.padding(toLength: 14, withPad: " ", startingAt: 0)) \(e.id.padding(toLength: 40, withPad: " ", startingAt: 0)) \((e.officialCase ?? "-").padding(toLength: 56, withPad: " ", startingAt: 0)) \(e.section)  \(e.title)\(e.advisory ? " (advisory)" : "")")
        }
    }
}

extension ReaderIdentityFile {
    /// The signing identity a reader identity file describes.
    static func identity(_ path: String) throws -> ReaderSigningIdentity {
        let (file, dir) = try load(path)
        let keyPath = file.signingKey.hasPrefix("/") ? file.signingKey : dir + "/" + file.signingKey
        return ReaderSigningIdentity(signingKey: try KeyFiles.privateKey(keyPath, what: "reader signing key"),
                              groupID: try KeyFiles.id16(file.groupID, flag: "\(path) groupID"),
                              subID: try KeyFiles.id16(file.subID, flag: "\(path) subID"))
    }
}

/// `--fault` on `lock run` and `lock transact`: a lock that misbehaves on purpose, for testing
/// `conformance reader` itself.
struct ReaderFaultOptions: ParsableArguments {
    @Option(name: .customLong("fault"), help: ArgumentHelp("Misbehave on purpose (repeatable): \(ReaderFaults.names.map(\.0).joined(separator: ", ")).", valueName: "name"))
    var faults: [String] = []

    func validate() throws {
        for name in faults where !ReaderFaults.names.contains(where: { $0.0 == name }) {
            throw ValidationError("unknown --fault \(name); one of \(ReaderFaults.names.map(\.0).joined(separator: ", "))")
        }
    }

    var set: ReaderFaults {
        faults.reduce(into: ReaderFaults()) { s, name in if let f = ReaderFaults.names.first(where: { $0.0 == name })?.1 { s.formUnion(f) } }
    }
}

struct ConformanceTrustedKeys: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trusted-keys",
        abstract: "Print the credential keys rdr.stepup.rd taps with, for the lock to trust without a document.",
        discussion: """
        The official NFC_RDR_STEPUP_RD expects a reader provisioned out of band with the credential keys \
        of its phones: the one carrying the revocation lists (a fixed key of LockBench's) and the case's \
        two phones that carry no document. One hex key per line, the format of a lock's \
        trustedCredentialKeys file:

          lockbench conformance trusted-keys > stepup-rd.keys
          lockbench config create … --trusted-credential-keys stepup-rd.keys
        """)

    func run() throws {
        print("# rdr.stepup.rd (NFC_RDR_STEPUP_RD): the list carrier, then the case's access_credential1 and access_credential2")
        for key in ReaderCatalogue.stepUpRDTrustedKeys { print(key) }
    }
}
