import AccessProtocol
import ByteCore
import Codecs
import Conformance
import Foundation

/// A finished transaction's APDUs for a viewer (`lock run --events`): one `apdus` event after
/// its decision, naming each command and each status word in words (`trace`'s names), so a
/// console shows what was said, not only what was decided. The secure-channel payloads the lock
/// sealed or opened itself come with their plaintext decoded (`opened`); keys never leave it.
public enum ViewerAPDUs {
    struct Line: Encodable {
        var direction: String
        var label: String
        var meaning: String
        var hex: String
        /// The payload in the clear, as the lock sealed or opened it, in trace's words.
        var opened: [String]?
    }
    struct Event: Encodable {
        var kind = "apdus"
        var transaction: String
        var apdus: [Line]
    }

    /// The `apdus` event of `outcome` as one JSON line (at most `limit` APDUs, the rest counted).
    public static func event(_ outcome: TransactionOutcome, limit: Int = 64) -> String {
        var plaintexts: [Int: OpenedPayload] = [:]
        for payload in outcome.opened where payload.entry < limit { plaintexts[payload.entry] = payload }
        var lines = outcome.transcript.prefix(limit).enumerated().map { index, entry -> Line in
            let meaning: String
            switch entry.direction {
            case .command:
                meaning = Names.command(entry.bytes)
            case .response:
                let n = entry.bytes.count
                meaning = n >= 2 ? "\(Hex.encode(Array(entry.bytes.suffix(2))).uppercased()) \(Names.status(StatusWord(entry.bytes[n - 2], entry.bytes[n - 1])))" : "no status word"
            }
            let opened = plaintexts[index].map { payload in
                TraceDecoder.describe(plaintext: payload.plaintext, label: payload.label, fromReader: entry.direction == .command)
                    .prefix(40).map { $0.count > 400 ? String($0.prefix(400)) + "…" : $0 }
            }
            return Line(direction: entry.direction == .command ? "reader → phone" : "phone → reader", label: entry.label, meaning: meaning,
                        hex: Hex.encode(Array(entry.bytes.prefix(512))) + (entry.bytes.count > 512 ? "…" : ""), opened: opened)
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
