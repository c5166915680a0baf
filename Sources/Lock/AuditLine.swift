import AccessProtocol
import ByteCore
import Foundation
import OfflineUnlock

/// The JSON of an audit line, written member by member (`JSONWriter`) rather than through
/// `JSONEncoder`: it is written while the phone waits for its answer, on caches a tap finds cold.
/// Same members and shapes as the `Codable` conformances, which read it back (`AuditLog.scan`);
/// keys sorted. The members a tap does not write (clock mode, revocation lists) go through
/// `JSONEncoder`.
extension AuditEntry {
    func jsonBody() throws -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("credential"); if let credential { w.string(credential) } else { w.null() }
        w.key("decision"); w.string(decision)
        if let detail { w.key("detail"); w.string(detail) }
        if let layer { w.key("layer"); w.string(layer) }
        if let reason { w.key("reason"); w.string(reason) }
        w.key("seq"); w.integer(seq)
        if let state { w.key("state"); try state.write(to: &w) }
        w.key("time"); w.string(time)
        w.key("transaction"); w.string(transaction)
        w.key("transport"); w.string(transport)
        w.endObject()
        return w.bytes
    }
}

extension StateDelta {
    func write(to w: inout JSONWriter) throws {
        w.beginObject()
        if let accessIterations {
            w.key("accessIterations")
            w.beginObject()
            for (k, v) in accessIterations.sorted(by: { $0.key < $1.key }) { w.key(k); w.integer(v) }
            w.endObject()
        }
        if let bolt { w.key("bolt"); try bolt.write(to: &w) }
        if let clock { w.key("clock"); w.raw(try Self.encoded(clock)) }
        if let documents {
            w.key("documents")
            w.beginObject()
            for (k, v) in documents.sorted(by: { $0.key < $1.key }) { w.key(k); w.string(v.base64EncodedString()) }
            w.endObject()
        }
        if let documentsRemoved { w.key("documentsRemoved"); w.strings(documentsRemoved) }
        if let reader {
            w.key("reader")
            w.beginArray()
            for learning in reader { learning.write(to: &w) }
            w.endArray()
        }
        if let revocationLists { w.key("revocationLists"); w.raw(try Self.encoded(revocationLists)) }
        if let revocationListsRemoved { w.key("revocationListsRemoved"); w.strings(revocationListsRemoved) }
        if let transactionWindow { w.key("transactionWindow"); w.strings(transactionWindow) }
        if let transactions { w.key("transactions"); w.strings(transactions) }
        if let trustedClock {
            w.key("trustedClock")
            w.beginObject()
            if let mark = trustedClock.highWaterMark { w.key("highWaterMark"); try w.number(mark.timeIntervalSinceReferenceDate) }
            w.key("trusted"); w.bool(trustedClock.trusted)
            w.endObject()
        }
        if let versions {
            w.key("versions")
            w.beginObject()
            for (k, v) in versions.sorted(by: { $0.key < $1.key }) { w.key(k); w.integer(v) }
            w.endObject()
        }
        w.endObject()
    }

    private static func encoded<T: Encodable>(_ value: T) throws -> [UInt8] {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try e.encode(value))
    }
}

extension LockStateMachine.State {
    /// As the synthesized `Codable` has it: `{"secured":{}}`, `{"unsecured":{"relockAt":…}}`, `{"jammed":{}}`.
    func write(to w: inout JSONWriter) throws {
        w.beginObject()
        switch self {
        case .secured: w.key("secured"); w.beginObject(); w.endObject()
        case .unsecured(let relockAt):
            w.key("unsecured"); w.beginObject(); w.key("relockAt"); try w.number(relockAt.timeIntervalSinceReferenceDate); w.endObject()
        case .jammed: w.key("jammed"); w.beginObject(); w.endObject()
        }
        w.endObject()
    }
}

extension ReaderLearning {
    /// As its `Codable` has it: keys hex, `usedFast` and `forgetsPersistentKey` only when true.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        if let credentialPublicKey { w.key("credentialPublicKey"); w.string(Hex.encode(credentialPublicKey)) }
        if let deviceEphemeralKey { w.key("deviceEphemeralKey"); w.string(Hex.encode(deviceEphemeralKey)) }
        if forgetsPersistentKey { w.key("forgetsPersistentKey"); w.bool(true) }
        if let persistentKey { w.key("persistentKey"); w.string(Hex.encode(persistentKey)) }
        if usedFast { w.key("usedFast"); w.bool(true) }
        w.endObject()
    }
}
