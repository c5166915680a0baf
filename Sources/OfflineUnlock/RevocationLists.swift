import ByteCore
import Foundation

/// The revocation list one issuer published, as the lock holds it.
public struct IssuerRevocationList: Equatable, Sendable, Codable {
    /// The serial of the document it came from; only a higher one from the same issuer replaces it.
    public var serial: UInt64
    /// That document's signed time.
    public var issued: Date
    public var entries: [RevocationEntry]

    public init(serial: UInt64, issued: Date, entries: [RevocationEntry]) {
        self.serial = serial; self.issued = issued; self.entries = entries
    }
}

/// One change to a lock's revocation lists. The lock writes each to its audit log: who may open
/// the door changed without anyone tapping it.
public struct RevocationChange: Equatable, Sendable {
    public enum Kind: String, Sendable {
        /// A verified document with a higher serial replaced the issuer's list.
        case replaced
        /// Expired entries were dropped (only ever under a trusted clock).
        case pruned
    }
    public var kind: Kind
    /// The issuer's kid (hex), or `RevocationLists.legacyIssuer`.
    public var issuer: String
    /// The serial before the change (nil: the lock held no list from this issuer).
    public var previousSerial: UInt64?
    public var serial: UInt64
    /// Entries in the list after the change.
    public var entries: Int
    /// Entries a prune removed.
    public var removedEntries: Int

    public var description: String {
        switch kind {
        case .replaced:
            return "revocation list of issuer \(issuer) replaced: serial \(previousSerial.map(String.init) ?? "none") → \(serial), \(entries) entr\(entries == 1 ? "y" : "ies")"
        case .pruned:
            return "revocation list of issuer \(issuer) (serial \(serial)): \(removedEntries) expired entr\(removedEntries == 1 ? "y" : "ies") pruned, \(entries) left"
        }
    }
}

/// The lock's revocation lists, one per issuer (by kid). A list only ever revokes documents signed
/// by its own issuer — by the credential keys it names or by document id — so one issuer can
/// neither lift nor impose another's revocations, and each issuer's serial counts on its own.
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

    /// Takes `list` from `issuer` when its serial is higher than the one held; the change, if any.
    mutating func offer(_ list: IssuerRevocationList, issuer: String) -> RevocationChange? {
        let held = lists[issuer]
        guard list.serial > held?.serial ?? 0 else { return nil }
        lists[issuer] = list
        return RevocationChange(kind: .replaced, issuer: issuer, previousSerial: held?.serial, serial: list.serial,
                                entries: list.entries.count, removedEntries: 0)
    }

    /// Drops entries that expired before `cutoff`; one change per list that lost any. The caller
    /// prunes only under a trusted clock.
    mutating func prune(before cutoff: Date) -> [RevocationChange] {
        var changes = [RevocationChange]()
        for issuer in lists.keys.sorted() {
            guard var list = lists[issuer] else { continue }
            let before = list.entries.count
            list.entries.removeAll { $0.expiry < cutoff }
            guard list.entries.count < before else { continue }
            if issuer == Self.legacyIssuer && list.entries.isEmpty { lists[issuer] = nil } else { lists[issuer] = list }
            changes.append(RevocationChange(kind: .pruned, issuer: issuer, previousSerial: list.serial, serial: list.serial,
                                            entries: list.entries.count, removedEntries: before - list.entries.count))
        }
        return changes
    }

    /// The entry of any issuer's list that names this key's hash, its issuer and its list's serial:
    /// a key trusted without a document has no issuer of its own, so every trusted issuer's list
    /// applies to it.
    func revocation(ofKey credentialPublicKey: [UInt8]) -> (RevocationEntry, issuer: String, serial: UInt64)? {
        let hash = RevocationEntry.hash(credentialPublicKey: credentialPublicKey)
        for issuer in lists.keys.sorted() {
            guard let list = lists[issuer], let e = list.entries.first(where: { $0.publicKeyHash == hash }) else { continue }
            return (e, issuer, list.serial)
        }
        return nil
    }

    /// The entry revoking a document of `issuer` bound to this key or with this id, and the serial
    /// of its list.
    func revocation(of issuer: String, credentialPublicKey: [UInt8], documentID: [UInt8]) -> (RevocationEntry, UInt64)? {
        for key in [issuer, Self.legacyIssuer] {
            guard let list = lists[key] else { continue }
            if let e = list.entries.first(where: { $0.revokes(credentialPublicKey: credentialPublicKey, documentID: documentID) }) {
                return (e, list.serial)
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
