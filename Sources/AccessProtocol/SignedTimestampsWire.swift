import ByteCore
import Codecs
import Foundation
import OfflineUnlock

/// The `91` / `92` timestamps on the wire (docs/protocol.md §6, §8): 20 ASCII bytes
/// `YYYY-MM-DDTHH:MM:SSZ`, or 20 zero bytes for none. Read tolerantly — they are optional, and
/// only ever make the lock ask for documents: absent or zeros is none; present but not such a
/// time counts as newer than anything (`Date.distantFuture`), so the lock asks rather than guess.
extension SignedTimestamps {
    /// From an AUTH1 answer.
    public init(_ answer: Auth1ResponsePlaintext) {
        self.init(credential: Self.time(answer.credentialTimestamp), revocation: Self.time(answer.revocationTimestamp))
    }

    /// From an opened FAST cryptogram (`5E 02 bitmap ‖ 91 14 ts ‖ 92 14 ts`); none when it does
    /// not parse.
    public init(cryptogramPlaintext plain: [UInt8]) {
        guard let fields = try? TLV.parseFields(plain) else { self.init(); return }
        self.init(credential: Self.time(fields.first(Tag.Auth1.credentialTimestamp)?.value),
                  revocation: Self.time(fields.first(Tag.Auth1.revocationTimestamp)?.value))
    }

    /// The time in one timestamp field; nil when absent or all zeros.
    public static func time(_ field: [UInt8]?) -> Date? {
        guard let field, field.contains(where: { $0 != 0 }) else { return nil }
        guard field.count == 20, field[19] == UInt8(ascii: "Z"), let text = String(bytes: field, encoding: .ascii),
              let date = RFC3339.parse(text) else { return .distantFuture }
        return date
    }

    /// The field for `date`: 20 ASCII bytes (what a credential sends).
    public static func field(_ date: Date) -> [UInt8] { Array(RFC3339.format(date).utf8) }
}
