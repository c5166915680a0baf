import Foundation

/// `EngineState.cachedDocuments`, decoded and verified, by credential key (hex): what lets a
/// decision use a cached access document without decoding it and checking its issuer signature
/// and digests again. In memory only — never encoded, never compared: the state file keeps the
/// bytes, and a state read from disk (which is not authenticated) is verified once per entry when
/// an engine takes it (`DecisionCore.verifyCachedDocuments`), not once per transaction.
///
/// An entry counts only for exactly the bytes cached under its key, verified under the same trust
/// store. Anything else — bytes replaced or removed without the engine, another trust store — is a
/// miss, and a miss decodes and verifies as if there were no memo: the memo saves work, it never
/// changes a decision. Everything that depends on time, reader, schedule, revocation, clock,
/// replay or version is still checked on every decision.
struct VerifiedDocuments: Sendable {
    enum Verdict: Sendable {
        case verified(AccessDocument)
        /// The bytes did not decode or verify: they count as no document.
        case rejected

        var document: AccessDocument? {
            if case .verified(let d) = self { return d } else { return nil }
        }
    }

    private struct Entry: Sendable {
        /// The cached bytes the verdict is about (usually the same buffer: comparing is O(1)).
        var bytes: [UInt8]
        var verdict: Verdict
        /// When the document stops counting (`distantPast` for a rejected one): eviction order.
        var until: Date { verdict.document?.validity.validUntil ?? .distantPast }
    }

    /// The trust store every entry was verified under.
    private var trust: TrustStore?
    private var entries: [String: Entry] = [:]
    /// The entries' keys, soonest expiry first (then by key): which to evict is found at the
    /// front, not by sorting the cache on every step-up.
    private var byExpiry: [(until: Date, key: String)] = []

    var count: Int { entries.count }

    /// The verdict on `bytes` cached under `key`, when already known under `trust`.
    func verdict(key: String, bytes: [UInt8], trust: TrustStore) -> Verdict? {
        guard let entry = entries[key], entry.bytes == bytes, self.trust == trust else { return nil }
        return entry.verdict
    }

    mutating func record(_ verdict: Verdict, key: String, bytes: [UInt8], trust: TrustStore) {
        if self.trust != trust { entries = [:]; byExpiry = []; self.trust = trust }
        remove(key)
        let entry = Entry(bytes: bytes, verdict: verdict)
        entries[key] = entry
        byExpiry.insert((entry.until, key), at: position(entry.until, key))
    }

    mutating func remove(_ key: String) {
        guard let old = entries.removeValue(forKey: key) else { return }
        let i = position(old.until, key)
        if i < byExpiry.count, byExpiry[i].key == key { byExpiry.remove(at: i) }
    }

    /// Forgets the entries of keys no longer cached.
    mutating func prune(keeping cached: [String: [UInt8]]) {
        guard entries.keys.contains(where: { cached[$0] == nil }) else { return }
        entries = entries.filter { cached[$0.key] != nil }
        byExpiry.removeAll { entries[$0.key] == nil }
    }

    /// Up to `count` keys for which `include` holds, soonest expiry first.
    func soonestExpiring(_ count: Int, where include: (String) -> Bool) -> [String] {
        var out: [String] = []
        for e in byExpiry where include(e.key) {
            if out.count == count { break }
            out.append(e.key)
        }
        return out
    }

    /// Where (`until`, `key`) is or would be in `byExpiry` (binary search).
    private func position(_ until: Date, _ key: String) -> Int {
        var low = 0, high = byExpiry.count
        while low < high {
            let mid = (low + high) / 2
            let e = byExpiry[mid]
            if e.until < until || (e.until == until && e.key < key) { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

extension VerifiedDocuments: Equatable {
    /// Derived data: two engine states are equal when what they persist is.
    static func == (_: VerifiedDocuments, _: VerifiedDocuments) -> Bool { true }
}
