import ByteCore
import Codecs
import Foundation
import OfflineUnlock

/// The JSON form of any document, for `lockbench doc show` (here, outside the CLI, so the fuzz
/// target `docshow` renders arbitrary documents the way the command does).
public struct DocumentJSON: Encodable {
    public struct Validity: Encodable { public var signed: String; public var validFrom: String; public var validUntil: String; public var lifetime: String }
    public struct Reader: Encodable { public var group: String; public var sub: String? }
    public struct Access: Encodable { public var version: Int; public var id: String; public var idText: String?; public var readers: [Reader]; public var schedules: [String] }
    /// RevocationData: the change mode, the entries added and the entries removed.
    public struct Revocation: Encodable {
        public var changeMode: RevocationData.ChangeMode
        public var entries: [RevocationEntry]
        public var entriesToRemove: [RevocationEntry]
    }
    /// The issuer certificate issuerAuth carries (x5chain), as read; `error` when it does not read.
    public struct Certificate: Encodable {
        public var subject: String?; public var issuedBy: String?; public var notBefore: String?; public var notAfter: String?; public var error: String?
    }
    /// The bytes are no document, or a document whose access or revocation data does not parse.
    public struct Unreadable: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    public var file: String
    public var docType: String
    public var issuerKid: String?
    public var issuerCertificate: Certificate?
    /// "verified", "not checked (pass --issuer)", or the reason verification failed.
    public var issuer: String
    public var validity: Validity
    /// MSO key 7: the lock accepts the document only under a clock it already trusts.
    public var timeVerificationRequired: Bool
    public var credentialPublicKey: String?
    public var credentialKeyHash: String?
    public var access: Access?
    public var revocation: Revocation?
    public var size: Int

    public init(file: String, bytes: [UInt8], trust: TrustStore?) throws(Unreadable) {
        let doc: IssuedDocument
        do { doc = try IssuedDocument(parsing: bytes) } catch {
            throw Unreadable(message: "\(file): not a LockBench document: \(error)")
        }
        self.file = file
        size = bytes.count
        docType = doc.docType
        issuerKid = doc.issuerKeyID.map(Hex.encode)
        do {
            issuerCertificate = try doc.issuerCertificate().map {
                Certificate(subject: $0.subjectName, issuedBy: $0.issuerName, notBefore: RFC3339.format($0.notBefore), notAfter: RFC3339.format($0.notAfter))
            }
        } catch {
            issuerCertificate = Certificate(error: error.reason)
        }
        if let trust {
            do { try doc.verify(trust: trust); issuer = "verified" } catch { issuer = "FAILED: \(error)" }
        } else {
            issuer = issuerCertificate == nil ? "not checked (pass --issuer)" : "not checked (pass --issuer-ca)"
        }
        let v = doc.validity
        validity = Validity(signed: RFC3339.format(v.signed), validFrom: RFC3339.format(v.validFrom),
                            validUntil: RFC3339.format(v.validUntil), lifetime: DurationText.format(v.validUntil.timeIntervalSince(v.validFrom)))
        timeVerificationRequired = doc.timeVerificationRequired
        credentialPublicKey = doc.deviceKey.map(Hex.encode)
        credentialKeyHash = doc.deviceKey.map { Hex.encode(RevocationEntry.hash(credentialPublicKey: $0)) }
        switch doc.docType {
        case IssuedDocument.DocType.access:
            do {
                let a = try AccessDocument(document: doc).access
                access = Access(version: a.version, id: Hex.encode(a.id),
                                idText: String(bytes: a.id, encoding: .utf8).flatMap { $0.allSatisfy { $0.isASCII && !$0.isNewline } ? $0 : nil },
                                readers: a.readers.map { Reader(group: Hex.encode($0.groupID), sub: $0.subID.map(Hex.encode)) },
                                schedules: a.scheduleEntries.map(\.description))
            } catch { throw Unreadable(message: "\(file): \(error)") }
        case IssuedDocument.DocType.revocation:
            do {
                let r = try RevocationDocument(document: doc).revocation
                revocation = Revocation(changeMode: r.changeMode, entries: r.entries, entriesToRemove: r.entriesToRemove)
            } catch { throw Unreadable(message: "\(file): \(error)") }
        default:
            break
        }
    }

    public var verified: Bool { issuer == "verified" }

    public var text: String {
        var lines = ["\(file): \(docType == IssuedDocument.DocType.access ? "access" : docType == IssuedDocument.DocType.revocation ? "revocation" : docType) document (\(docType), \(size) bytes)",
                     "  issuer kid   \(issuerKid ?? "none")  \(issuer)"]
        if let c = issuerCertificate {
            lines.append("  certificate  " + (c.error.map { "unreadable: \($0)" }
                ?? "\(c.subject ?? "?") by \(c.issuedBy ?? "?"), valid \(c.notBefore ?? "?") … \(c.notAfter ?? "?")"))
        }
        lines += ["  signed       \(validity.signed)",
                  "  valid        \(validity.validFrom) … \(validity.validUntil) (\(validity.lifetime))"]
        if timeVerificationRequired { lines.append("  time         verification required (MSO key 7): accepted only by a lock whose clock is trusted") }
        if let k = credentialPublicKey { lines.append("  credential   \(k)") }
        if let a = access {
            lines.append("  id           \(a.id)\(a.idText.map { " (\"\($0)\")" } ?? "")")
            for r in a.readers { lines.append("  opens        group \(r.group)" + (r.sub.map { " sub \($0)" } ?? " (every reader)")) }
            lines.append("  schedules    " + (a.schedules.isEmpty ? "any time" : a.schedules.joined(separator: "; ")))
        }
        if let r = revocation {
            lines.append("  change mode  \(r.changeMode)" + (r.changeMode == .overwrite ? " (replaces the lock's list of this issuer)" : " (adds to the lock's list of this issuer)"))
            func described(_ e: RevocationEntry) -> String {
                var what = [String]()
                if let h = e.publicKeyHash { what.append("key hash \(Hex.encode(h))") }
                if let d = e.documentID { what.append("document id \(Hex.encode(d))") }
                return what.joined(separator: ", ") + (e.expiry.map { " until \(RFC3339.format($0))" } ?? " (no expiry)")
            }
            for e in r.entries { lines.append("  revokes      \(described(e))") }
            for e in r.entriesToRemove { lines.append("  lifts        \(described(e))") }
            if r.entries.isEmpty && r.entriesToRemove.isEmpty {
                lines.append(r.changeMode == .overwrite ? "  revokes      nothing (an empty list)" : "  revokes      nothing (no change)")
            }
        }
        return lines.joined(separator: "\n")
    }
}
