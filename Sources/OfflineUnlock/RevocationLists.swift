import ByteCore
import Codecs
import Foundation

/// The revocation list one issuer published, as the lock holds it: the entries of every list
/// document applied so far, and the signed time of the last one.
public struct IssuerRevocationList: Equatable, Sendable, Codable {
    /// The signed time of the last document applied; one signed earlier is ignored.
    public var issued: Date
    public var entries: [RevocationEntry]

    public init(issued: Date, entries: [RevocationEntry]) {
        self.issued = issued; self.entries = entries
    }

    /// Before 2026-11-27 the held list also had a serial (LockBench's lists then carried one in
    /// RevocationData key 1, where the official format has the change mode): read and dropped.
    enum CodingKeys: String, CodingKey { case issued, entries }
}

/// One change to a lock's revocation lists. The lock writes each to its audit log: who may open
/// the door changed without anyone tapping it.
public struct RevocationChange: Equatable, Sendable {
    public enum Kind: String, Sendable {
        /// A verified document, signed no earlier than the last one applied, changed the issuer's list.
        case applied
        /// Expired entries were dropped (only ever under a trusted clock).
        case pruned
    }
    public var kind: Kind
    /// The issuer's kid (hex), or `RevocationLists.legacyIssuer`.
    public var issuer: String
    /// The change mode of the document applied (nil for a prune).
    public var mode: RevocationData.ChangeMode?
    /// The signed time of the list before the change (nil: the lock held no list from this issuer).
    public var previousIssued: Date?
    public var issued: Date
    /// Entries in the list after the change.
    public var entries: Int
    /// Entries the change added and removed.
    public var addedEntries: Int
    public var removedEntries: Int

    public var description: String {
        switch kind {
        case .applied:
            return "revocation list of issuer \(issuer) changed (\(mode ?? .overwrite), signed \(RFC3339.format(issued)); "
                + "before: \(previousIssued.map { RFC3339.format($0) } ?? "none")): +\(addedEntries) −\(removedEntries), \(entries) entr\(entries == 1 ? "y" : "ies")"
        case .pruned:
            return "revocation list of issuer \(issuer) (signed \(RFC3339.format(issued))): \(removedEntries) expired entr\(removedEntries == 1 ? "y" : "ies") pruned, \(entries) left"
        }
    }
}

/// The lock's revocation lists, one per issuer (by kid). A list only ever revokes documents signed
/// by its own issuer — by the credential keys it names or by document id — so one issuer can
/// neither lift nor impose another's revocations, and each issuer's lists are ordered on their own.
public struct RevocationLists: Equatable, Sendable {
    /// The key of a list read from a state file written before lists were per issuer: its issuer
    /// is unknown, so it applies to every document (a revoked phone stays revoked) until its
    /// entries expire.
    public static let legacyIssuer = "*"

    public private(set) var lists: [String: IssuerRevocationList] = [:]

    public init(_ lists: [String: IssuerRevocationList] = [:]) { self.lists = lists }

    public subscript(issuer: String) -> IssuerRevocationList? { lists[issuer] }
    public var count: Int { lists.count }
    public var values: Dictionary<String, IssuerRevocationList>.Values { lists.values }

    /// The most entries one issuer's list may hold: APPEND documents add to a list, so a lock
    /// bounds it rather than trust every issuer to.
    public static let maxEntriesPerIssuer = 10_000

    /// Applies a verified revocation document of `issuer` signed at `signed`, when that is not
    /// earlier than the last one applied (documents signed in the same second apply in the order
    /// they arrive: the official NFC_RDR_STEPUP_RD signs its six in one second); OVERWRITE empties
    /// the list first, then the entries are added and the entries to remove taken out. The
    /// change, if the list changed; an error when the list would exceed its bound (nothing applied).
    mutating func apply(_ data: RevocationData, signed: Date, issuer: String) throws(DocumentError) -> RevocationChange? {
        let held = lists[issuer]
        if let held, signed < held.issued { return nil }
        var entries = data.changeMode == .overwrite ? [] : held?.entries ?? []
        for e in data.entries where !entries.contains(e) { entries.append(e) }
        entries.removeAll { held in data.entriesToRemove.contains { $0.removes(held) } }
        guard entries.count <= Self.maxEntriesPerIssuer else {
            throw DocumentError(.malformed, "the revocation list of issuer \(issuer) would hold \(entries.count) entries; a LockBench lock holds at most \(Self.maxEntriesPerIssuer) per issuer")
        }
        let before = held?.entries ?? []
        let added = entries.filter { !before.contains($0) }.count, removed = before.filter { !entries.contains($0) }.count
        lists[issuer] = IssuerRevocationList(issued: max(signed, held?.issued ?? signed), entries: entries)
        guard held == nil || added + removed > 0 || signed > held!.issued else { return nil }
        return RevocationChange(kind: .applied, issuer: issuer, mode: data.changeMode, previousIssued: held?.issued, issued: signed,
                                entries: entries.count, addedEntries: added, removedEntries: removed)
    }

    /// Drops entries that expired before `cutoff`; one change per list that lost any. The caller
    /// prunes only under a trusted clock.
    mutating func prune(before cutoff: Date) -> [RevocationChange] {
        var changes = [RevocationChange]()
        for issuer in lists.keys.sorted() {
            guard var list = lists[issuer] else { continue }
            let before = list.entries.count
            list.entries.removeAll { $0.expiry.map { $0 < cutoff } ?? false }
            guard list.entries.count < before else { continue }
            if issuer == Self.legacyIssuer && list.entries.isEmpty { lists[issuer] = nil } else { lists[issuer] = list }
            changes.append(RevocationChange(kind: .pruned, issuer: issuer, mode: nil, previousIssued: list.issued, issued: list.issued,
                                            entries: list.entries.count, addedEntries: 0, removedEntries: before - list.entries.count))
        }
        return changes
    }

    /// The entry of any issuer's list that names this key's hash, its issuer and that list's signed time:
    /// a key trusted without a document has no issuer of its own, so every trusted issuer's list
    /// applies to it.
    func revocation(ofKey credentialPublicKey: [UInt8]) -> (RevocationEntry, issuer: String, issued: Date)? {
        let hash = RevocationEntry.hash(credentialPublicKey: credentialPublicKey)
        for issuer in lists.keys.sorted() {
            guard let list = lists[issuer], let e = list.entries.first(where: { $0.publicKeyHash == hash }) else { continue }
            return (e, issuer, list.issued)
        }
        return nil
    }

    /// The entry revoking a document of `issuer` bound to this key or with this id, and the signed
    /// time of its list.
    func revocation(of issuer: String, credentialPublicKey: [UInt8], documentID: [UInt8]) -> (RevocationEntry, Date)? {
        for key in [issuer, Self.legacyIssuer] {
            guard let list = lists[key] else { continue }
            if let e = list.entries.first(where: { $0.revokes(credentialPublicKey: credentialPublicKey, documentID: documentID) }) {
                return (e, list.issued)
            }
        }
        return nil
    }
}

extension RevocationLists: Codable {
    public init(from decoder: Decoder) throws {
        lists = try decoder.singleValueContainer().decode([String: IssuerRevocationList].self)
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(lists)
    }
}

/// Changes made by decisions and not yet taken by the lock (in memory only; see
/// `EngineState.takeRevocationChanges`).
struct PendingRevocationChanges: Sendable {
    var changes: [RevocationChange] = []
}

extension PendingRevocationChanges: Equatable {
    /// Not part of the state's value: two states are equal when what they persist is.
    static func == (_: PendingRevocationChanges, _: PendingRevocationChanges) -> Bool { true }
}
