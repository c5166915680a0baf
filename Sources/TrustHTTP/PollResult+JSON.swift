import TrustModel
import TrustCore
import HTTPServing
import ByteCore

/// A poll's answer written member by member (`JSONWriter`): it goes out on every poll that found
/// something, and `JSONEncoder` was a measurable part of a key refresh's CPU time. Same members
/// and shapes as `PollResult`'s `Codable` (which phones decode it with), keys sorted.
extension PollResult {
    func json() -> [UInt8] {
        var w = JSONWriter(capacity: 256 + keys.count * 700 + (revocation?.document.utf8.count ?? 0))
        w.beginObject()
        w.key("cursor"); w.string(cursor)
        w.key("deleted"); w.strings(deleted)
        w.key("keys")
        w.beginArray()
        for k in keys {
            w.beginObject()
            w.key("document"); w.string(k.document)
            w.key("expectedUpdate"); w.string(k.expectedUpdate)
            w.key("grant"); w.string(k.grant)
            w.key("id"); w.string(k.id)
            w.key("iteration"); w.integer(k.iteration)
            w.key("validUntil"); w.string(k.validUntil)
            w.endObject()
        }
        w.endArray()
        if let revocation {
            w.key("revocation")
            w.beginObject()
            w.key("document"); w.string(revocation.document)
            w.key("serial"); w.integer(revocation.serial)
            w.endObject()
        }
        w.endObject()
        return w.bytes
    }
}
