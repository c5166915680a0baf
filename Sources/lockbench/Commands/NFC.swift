import CommandLineSupport
import ArgumentParser
import ByteCore
import Foundation
import LockRuntime
import NFC
import VirtualPN532
#if canImport(Glibc)
import Glibc
#endif

struct NFCCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nfc",
        abstract: "NFC readers through libnfc, and LockBench's virtual PN532.",
        subcommands: [VirtualReaderCommand.self, ListCommand.self]
    )
}


struct VirtualReaderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "virtual-reader",
        abstract: "Run a virtual PN532 reader that libnfc opens as pn532_uart:/dev/pts/N.",
        discussion: """
        Prints the connstring to give libnfc (LIBNFC_DEVICE=<connstring> nfc-list, or `lockbench lock \
        run` with that connstring) and keeps running until SIGINT/SIGTERM or `quit`. Lines on stdin (and \
        on the --control FIFO) place or take out the card:
          insert [UID-HEX]   put a card in the field (7-byte UID by default)
          remove             take it out (a transaction in flight fails)
          status             print whether a card is in the field
          quit               stop the reader
        One libnfc client at a time, like a real serial port.

        With --key, `insert` places a phone credential (the access protocol's credential side) \
        instead of a plain test card, so a lock in another process taps it:
          lockbench nfc virtual-reader --link /tmp/reader --no-card \\
            --key alice.key.pem --document alice.access.cbor \\
            --trust-reader lock.json
          lockbench lock run --config lock.json --nfc pn532_uart:/tmp/reader
        The phone trusts the lock's reader from --trust-reader: a reader identity (NAME.reader.json), \
        the lock's configuration, or the reader's key PEM with --reader-group HEX (--credential-key, \
        --reader-identity and --lock-config are older spellings of --key and --trust-reader). It is one \
        phone across inserts: it keeps what it learnt (FAST).
        """
    )

    @Option(name: .long, help: ArgumentHelp("Also offer the reader at this stable symlink path (connstring pn532_uart:PATH).", valueName: "path"))
    var link: String?

    @Option(name: .customLong("card-uid"), help: ArgumentHelp("UID of the card, hex (4, 7 or 10 bytes).", valueName: "hex"))
    var cardUID: String?

    @Flag(name: .customLong("no-card"), help: "Start with an empty field.")
    var noCard = false

    @Option(name: .long, help: ArgumentHelp("A FIFO to create that accepts the same commands as stdin, e.g. `echo remove > PATH`.", valueName: "path"))
    var control: String?

    @Flag(name: .long, help: "Log frames the reader drops and sessions it opens to stderr.")
    var verbose = false

    @Flag(name: .customLong("no-console"), help: "Do not read commands from stdin (use --control); stdin is not read either when it is a terminal this process does not own (a background job).")
    var noConsole = false

    @OptionGroup var credential: PhoneOptions

    func validate() throws {
        if let cardUID {
            guard let uid = Hex.decode(cardUID), [4, 7, 10].contains(uid.count) else {
                throw ValidationError("--card-uid must be 4, 7 or 10 bytes of hex, e.g. 04A2246A1B5C80")
            }
            guard uid[0] != 0x88 else { throw ValidationError("--card-uid cannot start with 88 (the cascade tag)") }
        }
    }

    func run() throws {
        let uid = cardUID.flatMap(Hex.decode) ?? VirtualCard.defaultUID
        let phone = try credential.makeSession()
        let reader: VirtualReader
        do {
            let log: (@Sendable (String) -> Void)?
            if verbose { log = { line in emitError("virtual-pn532: \(line)") } } else { log = nil }
            reader = try VirtualReader(link: link, log: log)
        } catch {
            throw UserError(message: "cannot start the virtual reader: \(error)", code: ExitCodes.environment)
        }
        // `insert` places the phone when one was described, else a plain test card.
        let console = VirtualReaderConsole(reader: reader, defaultUID: uid, card: { _ -> APDUResponder in
            if let phone { return phone }
            return SimpleCard()
        })
        let command = console.command
        emitLine("virtual PN532 ready")
        emitLine("connstring: \(reader.connstring)")
        emitLine("device: \(reader.devicePath)")
        if let path = reader.linkPath { emitLine("link: \(path) -> \(reader.devicePath)") }
        if let phone { emitLine(SoftwarePhone.summary(phone)) }
        if !noCard { command("insert") } else { emitLine("card: none") }
        emitLine("try: LIBNFC_DEVICE=\(reader.connstring) nfc-list")

        let signals = StopSignals { _ in console.finish() }
        if Console.start(noConsole: noConsole, command: "nfc virtual-reader", alternatives: "give commands through --control FIFO, stop it with SIGINT or SIGTERM") {
            Thread.detachNewThread {
                while let line = readLine() { command(line.trimmingCharacters(in: .whitespaces)) }
                // stdin closed: keep serving until a signal (so `… virtual-reader < /dev/null &` works).
            }
        }
        if let control {
            if mkfifo(control, 0o600) != 0 && errno != EEXIST {
                reader.stop()
                throw UserError(message: "cannot create the control FIFO \(control): \(String(cString: strerror(errno)))", code: ExitCodes.environment)
            }
            emitLine("control: \(control)")
            Thread.detachNewThread {
                // O_RDWR: the FIFO never reports EOF when a writer closes it.
                guard let handle = FileHandle(forUpdatingAtPath: control) else { return }
                var pending = Data()
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { return }
                    pending.append(chunk)
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                        pending.removeSubrange(pending.startIndex...newline)
                        command(line.trimmingCharacters(in: .whitespaces))
                    }
                }
            }
        }
        console.waitUntilFinished()
        withExtendedLifetime(signals) {}
        reader.stop()
        if let control { unlink(control) }
        emitLine("virtual PN532 stopped")
    }
}

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the NFC readers libnfc finds, with their connstrings.",
        discussion: """
        libnfc finds USB readers by itself; serial readers and the virtual reader only when configured: \
        LIBNFC_DEVICE=pn532_uart:/dev/ttyUSB0 (or /etc/nfc/libnfc.conf). Exit code 3 when there is none.
        """
    )

    @Flag(name: .long, help: "JSON output: an array of {connstring, name, chip, error}.")
    var json = false

    struct Entry: Codable, Equatable {
        var connstring: String
        var name: String?
        var chip: String?
        var error: String?
    }

    func run() throws {
        let context: NFCContext
        do { context = try NFCContext() } catch {
            throw UserError(message: "\(error)", code: ExitCodes.environment)
        }
        var entries: [Entry] = []
        for connstring in context.listDevices() {
            do {
                let device = try context.open(connstring)
                let info = (try? device.information()) ?? ""
                let chip = info.split(separator: "\n").first { $0.hasPrefix("chip: ") }.map { String($0.dropFirst(6)) }
                entries.append(Entry(connstring: connstring, name: device.name, chip: chip, error: nil))
                device.close()
            } catch {
                entries.append(Entry(connstring: connstring, name: nil, chip: nil, error: "\(error)"))
            }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            emitLine(String(decoding: try encoder.encode(entries), as: UTF8.self))
        } else {
            for e in entries {
                if let error = e.error {
                    emitLine("\(e.connstring)\tcannot open: \(error)")
                } else {
                    emitLine("\(e.connstring)\t\(e.name ?? "")\t\(e.chip ?? "")")
                }
            }
        }
        if entries.isEmpty {
            emitError("No NFC reader found. \(NFCError.connstringExamples)")
            throw ExitCode(ExitCodes.environment)
        }
    }
}

/// The `insert`/`remove`/`status`/`quit` commands of `nfc virtual-reader`, from stdin, the
/// control FIFO and signals (any thread).
final class VirtualReaderConsole: Sendable {
    private let reader: VirtualReader
    private let defaultUID: [UInt8]
    /// The responder `insert` places in the field, given the UID it uses.
    private let card: @Sendable (_ uid: [UInt8]) -> APDUResponder
    /// Whether `finish` was called; commands run one at a time under it.
    private let finished = Monitor(false)

    init(reader: VirtualReader, defaultUID: [UInt8], card: @escaping @Sendable (_ uid: [UInt8]) -> APDUResponder) {
        self.reader = reader
        self.defaultUID = defaultUID
        self.card = card
    }

    func finish() { finished.withLock { $0 = true } }

    func waitUntilFinished() { finished.wait(until: nil, for: { $0 }) { _, _ in } }

    func command(_ line: String) {
        let words = line.split(separator: " ").map(String.init)
        if ["quit", "exit", "stop"].contains(words.first?.lowercased() ?? "") { finish(); return }
        finished.withLock { _ in run(words) }
    }

    private func run(_ words: [String]) {
        switch words.first?.lowercased() {
        case "insert":
            let uid = words.count > 1 ? Hex.decode(words[1]) : defaultUID
            guard let uid else { emitLine("error: bad UID \(words[1])"); return }
            do {
                try reader.insert(card(uid), uid: uid)
                emitLine("card: inserted UID \(uid.hex)")
            } catch {
                emitLine("error: \(error)")
            }
        case "remove":
            reader.remove()
            emitLine("card: removed")
        case "status":
            emitLine(reader.card.map { "card: in the field, UID \($0.uid.hex)" } ?? "card: none")
        case nil:
            break
        default:
            emitLine("error: unknown command \(words[0]); use insert [UID], remove, status or quit")
        }
    }
}
