import AccessProtocol
import ByteCore
import Codecs
import Conformance
import Foundation

/// A finished transaction's APDUs for a viewer (`lock run --events`): one `apdus` event after
/// its decision, naming each command and each status word in words (`trace`'s names), so a
/// console shows what was said, not only what was decided. Payloads stay encrypted here: the
/// lock's keys do not leave the lock.
public enum ViewerAPDUs {
    struct Line: Encodable {
        var direction: String
        var label: String
        var meaning: String
        var hex: String
    }
    struct Event: Encodable {
        var kind = "apdus"
        var transaction: String
        var apdus: [Line]
    }

    /// The `apdus` event of `outcome` as one JSON line (at most `limit` APDUs, the rest counted).
    public static func event(_ outcome: TransactionOutcome, limit: Int = 64) -> String {
        var lines = outcome.transcript.prefix(limit).map { entry -> Line in
            let meaning: String
            switch entry.direction {
            case .command:
                meaning = Names.command(entry.bytes)
            case .response:
                let n = entry.bytes.count
                meaning = n >= 2 ? "\(Hex.encode(Array(entry.bytes.suffix(2))).uppercased()) \(Names.status(StatusWord(entry.bytes[n - 2], entry.bytes[n - 1])))" : "no status word"
            }
            return Line(direction: entry.direction == .command ? "reader → phone" : "phone → reader", label: entry.label, meaning: meaning,
                        hex: Hex.encode(Array(entry.bytes.prefix(512))) + (entry.bytes.count > 512 ? "…" : ""))
        }
        if outcome.transcript.count > limit {
            lines.append(Line(direction: "", label: "…", meaning: "\(outcome.transcript.count - limit) more APDUs", hex: ""))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(Event(transaction: outcome.transactionID, apdus: lines))) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
