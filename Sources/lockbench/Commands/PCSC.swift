import ArgumentParser
import Foundation
import LockRuntime
import PCSC

struct PCSCCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pcsc",
        abstract: "PC/SC readers through pcscd: the CCID desk readers libnfc does not drive.",
        discussion: """
        Most USB NFC readers sold today (ACS ACR1252U, HID Omnikey 5022/5427, Identiv uTrust) are CCID \
        readers that the desktop reaches through pcsc-lite's daemon, pcscd. A lock runs on one with \
        `lockbench lock run --nfc pcsc` (the first reader) or `--nfc "pcsc:READER NAME"`. Without \
        hardware, the virtual reader driver vsmartcard-vpcd gives pcscd two readers, "Virtual PCD 00 00" \
        and "Virtual PCD 00 01", and `lockbench credential serve --vpicc 127.0.0.1:35963` puts a \
        software phone on the first (see docs/pcsc.md).
        """,
        subcommands: [PCSCListCommand.self]
    )
}

struct PCSCListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the readers pcscd offers, with the card on each.",
        discussion: """
        Prints one line per reader: its name (what `lock run --nfc "pcsc:NAME"` takes), whether a card is on it, \
        and the card's ATR. Exit codes: 0 at least one reader, 1 pcscd offers none, 3 pcscd is not \
        running.
        """
    )

    @Flag(help: "JSON output: {readers: [{name, card, atr}]}.")
    var json = false

    struct PCSCFailure: Encodable {
        var readers: [Reader]
        var error: String
    }

    struct Reader: Encodable {
        var name: String
        var card: Bool
        var atr: String?
    }

    func run() throws {
        let readers: [Reader]
        do {
            let context = try PCSCContext()
            readers = try context.readers().map { name in
                let state = try context.waitForChange(of: name, from: nil, timeoutMilliseconds: 0)
                let card = state?.hasUsableCard ?? false
                return Reader(name: name, card: card, atr: card ? state?.atr.map { String(format: "%02X", $0) }.joined() : nil)
            }
        } catch {
            // A script reading --json gets JSON on this way out too: no reader, and why.
            if json { emitLine(KeyFiles.compactJSON(PCSCFailure(readers: [], error: "\(error)"))) }
            throw UserError(message: "\(error)", code: ExitCodes.environment)
        }
        if json {
            emitLine(KeyFiles.compactJSON(["readers": readers]))
        } else if readers.isEmpty {
            emitLine("pcscd offers no reader: " + PCSCError.readerAdvice)
        } else {
            for r in readers {
                emitLine("\(r.name)\t" + (r.atr.map { "card, ATR \($0)" } ?? "no card"))
            }
        }
        if readers.isEmpty { throw ExitCode(ExitCodes.negative) }
    }
}

extension Doctor {
    /// pcscd answers; it offers a reader. Warnings, not problems: libnfc readers need neither.
    static func pcscChecks() -> [Check] {
        let context: PCSCContext
        do { context = try PCSCContext() } catch {
            return [Check(id: "pcscd", title: "pcscd (PC/SC readers)", status: .warning,
                          detail: "pcscd is not running (\(error.pcscCode.map { String(format: "0x%08X", $0) } ?? "")): PC/SC readers (--nfc pcsc) are unavailable",
                          fix: "sudo apt-get install pcscd && sudo systemctl start pcscd.socket   (or: sudo pcscd -f -a)")]
        }
        var checks = [Check(id: "pcscd", title: "pcscd (PC/SC readers)", status: .ok, detail: "pcscd answers", fix: nil)]
        let readers = (try? context.readers()) ?? []
        checks.append(readers.isEmpty
            ? Check(id: "pcsc-readers", title: "PC/SC readers", status: .warning, detail: "pcscd offers no reader",
                    fix: "plug in a CCID reader (package libccid), or for the virtual one: sudo apt-get install vsmartcard-vpcd && sudo systemctl restart pcscd")
            : Check(id: "pcsc-readers", title: "PC/SC readers", status: .ok,
                    detail: readers.map { "\"\($0)\"" }.joined(separator: ", ") + "; use --nfc \"pcsc:\(readers[0])\"", fix: nil))
        return checks
    }
}
