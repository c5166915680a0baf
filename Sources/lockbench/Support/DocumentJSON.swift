import ByteCore
import Codecs
import Foundation
import OfflineUnlock

/// The JSON form of any document, for `lockbench doc show`.
struct DocumentJSON: Encodable {
    struct Validity: Encodable { var signed: String; var validFrom: String; var validUntil: String; var lifetime: String }
    struct Reader: Encodable { var group: String; var sub: String? }
    struct Access: Encodable { var version: Int; var id: String; var idText: String?; var readers: [Reader]; var schedules: [String] }
    struct Revocation: Encodable { var serial: UInt64; var entries: [RevocationEntry] }

    var file: String
    var docType: String
    var issuerKid: String?
    /// "verified", "not checked (pass --issuer)", or the reason verification failed.
    var issuer: String
    var validity: Validity
    var credentialPublicKey: String?
    var credentialKeyHash: String?
    var access: Access?
    var revocation: Revocation?
    var size: Int

    init(file: String, bytes: [UInt8], trust: TrustStore?) throws {
        let doc: IssuedDocument
        do { doc = try IssuedDocument(parsing: bytes) } catch {
            throw UserError(message: "\(file): not a LockBench document: \(error)")
        }
        self.file = file
        size = bytes.count
        docType = doc.docType
        issuerKid = doc.issuerKeyID.map(Hex.encode)
        if let trust {
            do { try doc.verify(trust: trust); issuer = "verified" } catch { issuer = "FAILED: \(error)" }
        } else {
            issuer = "not checked (pass --issuer)"
        }
        let v = doc.validity
        validity = Validity(signed: RFC3339.format(v.signed), validFrom: RFC3339.format(v.validFrom),
                            validUntil: RFC3339.format(v.validUntil), lifetime: DurationText.format(v.validUntil.timeIntervalSince(v.validFrom)))
        credentialPublicKey = doc.deviceKey.map(Hex.encode)
        credentialKeyHash = doc.deviceKey.map { Hex.encode(RevocationEntry.hash(credentialPublicKey: $0)) }
        switch doc.docType {
        case IssuedDocument.DocType.access:
            do {
                let a = try AccessDocument(document: doc).access
                access = Access(version: a.version, id: Hex.encode(a.id),
                                idText: String(bytes: a.id, encoding: .utf8).flatMap { $0.allSatisfy { $0.isASCII && !$0.isNewline } ? $0 : nil },
                                readers: a.readers.map { Reader(group: Hex.encode($0.groupID), sub: $0.subID.map(Hex.encode)) },
                                schedules: a.schedules.map(\.description))
            } catch { throw UserError(message: "\(file): \(error)") }
        case IssuedDocument.DocType.revocation:
            do {
                let r = try RevocationDocument(document: doc).revocation
                revocation = Revocation(serial: r.serial, entries: r.entries)
            } catch { throw UserError(message: "\(file): \(error)") }
        default:
            break
        }
    }

    var verified: Bool { issuer == "verified" }

    var text: String {
        var lines = ["\(file): \(docType == IssuedDocument.DocType.access ? "access" : docType == IssuedDocument.DocType.revocation ? "revocation" : docType) document (\(docType), \(size) bytes)",
                     "  issuer kid   \(issuerKid ?? "none")  \(issuer)",
                     "  signed       \(validity.signed)",
                     "  valid        \(validity.validFrom) … \(validity.validUntil) (\(validity.lifetime))"]
        if let k = credentialPublicKey { lines.append("  credential   \(k)") }
        if let a = access {
            lines.append("  id           \(a.id)\(a.idText.map { " (\"\($0)\")" } ?? "")")
            for r in a.readers { lines.append("  opens        group \(r.group)" + (r.sub.map { " sub \($0)" } ?? " (every reader)")) }
            lines.append("  schedules    " + (a.schedules.isEmpty ? "any time" : a.schedules.joined(separator: "; ")))
        }
        if let r = revocation {
            lines.append("  serial       \(r.serial)")
            for e in r.entries {
                var what = [String]()
                if let h = e.publicKeyHash { what.append("key hash \(Hex.encode(h))") }
                if let d = e.documentID { what.append("document id \(Hex.encode(d))") }
                lines.append("  revokes      \(what.joined(separator: ", ")) until \(RFC3339.format(e.expiry))")
            }
            if r.entries.isEmpty { lines.append("  revokes      nothing (an empty list)") }
        }
        return lines.joined(separator: "\n")
    }
}
