import ByteCore
import Codecs
import Crypto
import Foundation
import TrustModel
import OfflineUnlock
import Synchronization

/// The trust service: grants, devices and credentials in, access and revocation documents out,
/// exactly the documents `lockbench doc issue|revoke` write and the lock reads. All state lives in
/// the storage seam, so any number of instances can share one database.
public final class TrustService: Sendable {
    public let storage: any TrustStorage
    public let issuerKey: P256.Signing.PrivateKey
    /// The issuer key's kid, written into every document it signs: derived once.
    let issuerKeyID: [UInt8]
    public let settings: TrustSettings
    public let clock: any TrustClock
    public let tokens: TokenAuthority
    /// Concurrent refresh-token rotations, handled together (`TrustService+Tokens`).
    let rotations: Coalescer<Rotation, Rotated>
    /// Concurrent polls' signed keys, stored together by compare-and-swap (`poll`).
    let keyWrites: Coalescer<KeyWrite, [KeyRecord]?>
    /// Whether this instance has looked for a pre-row approval index (`migrateLegacyIndex`): once
    /// is enough on the write path; the purge timer looks every time.
    let legacyApprovalIndexChecked = Atomic(false)
    /// Whether the site has webhook subscribers: nil until read (once per process, inside the
    /// first change's transaction), set again by `WebhookDispatcher` on every pass and forgotten
    /// when this process adds or deletes one. Keeps the settings read out of every change.
    let webhookSubscribers = Mutex<Bool?>(nil)
    /// When this instance last recorded a refused poll per device: a phone retrying with a revoked
    /// token is recorded once a minute, not once per request (each record is a durable write).
    let refusedPollsNoted = Mutex<[String: Date]>([:])
    /// The signed time of each document this instance issued, by its bytes, until it is
    /// replaced: a re-issue signs strictly after the document it replaces (`SigningOrder`), and
    /// reading that time back out of the stored bytes (a CBOR parse of the document and its MSO)
    /// was 4 % of a key refresh's server CPU. Keyed by the whole document, so a document this
    /// instance did not sign (another instance's, an older process's) is simply not found and is
    /// parsed. At most `signedTimesKept` entries.
    let signedTimes = Mutex<[DocumentBytes: Date]>([:])
    static let signedTimesKept = 16_384

    /// A document's bytes as a dictionary key, hashed in one pass over the buffer (`[UInt8]`'s own
    /// hash feeds the hasher a byte at a time, which cost more than half of what the memory saved).
    struct DocumentBytes: Hashable, Sendable {
        let bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
    }

    public init(storage: any TrustStorage, issuerKey: P256.Signing.PrivateKey, tokenKey: P256.Signing.PrivateKey,
                settings: TrustSettings = TrustSettings(), clock: any TrustClock = SystemClock()) async throws {
        self.storage = storage
        self.issuerKey = issuerKey
        issuerKeyID = CoseSign1.keyIdentifier(issuerPublicKey: Primitives.point(of: issuerKey))
        self.settings = settings
        self.clock = clock
        self.tokens = try await TokenAuthority(key: tokenKey, settings: settings, clock: clock)
        rotations = Coalescer { batch in try await storage.write { tx in try await Self.rotate(batch, settings: settings, tx: tx) } }
        keyWrites = Coalescer { batch in try await storage.write { tx in try await Self.store(batch, tx: tx) } }
    }

    /// Whole seconds: documents carry RFC 3339 times without fractions.
    public func now() -> Date { Date(timeIntervalSince1970: clock.now().timeIntervalSince1970.rounded(.down)) }

    // MARK: devices and credentials

    /// Registers a device and the credential key it carries; returns a one-time login code.
    public func addDevice(id: String, user: String, credentialKey: [UInt8]) async throws -> String {
        try Self.checkName(id, "device id"); try Self.checkName(user, "user")
        guard (try? P256.Signing.PublicKey(x963Representation: credentialKey)) != nil else {
            throw TrustError(.invalidRequest, "the credential key is not a P-256 public key (65 bytes, 04‖x‖y)")
        }
        let now = now()
        return try await storage.write { tx in
            if try await tx.device(id) != nil { throw TrustError(.conflict, "device \(id) exists") }
            try await tx.putDevice(DeviceRecord(id: id, user: user, credentialKey: credentialKey, createdAt: now, updatedAt: now))
            try await self.webhook([WebhookItem(type: "device-enrolled", device: id)], tx: tx)
            return try await self.tokens.newEnrollment(device: id, tx: tx, now: now)
        }
    }

    /// A new one-time login code for a device (re-authorization after its tokens expired).
    public func enroll(device: String) async throws -> String {
        let now = now()
        return try await storage.write { tx in
            guard let d = try await tx.device(device) else { throw TrustError(.notFound, "no device \(device)") }
            guard d.credentialState == .active || d.credentialState == .suspended else {
                throw TrustError(.final, "device \(device)'s credential is \(d.credentialState.rawValue)")
            }
            return try await self.tokens.newEnrollment(device: device, tx: tx, now: now)
        }
    }

    public func devices(user: String? = nil) async throws -> [DeviceRecord] {
        try await storage.read { tx in try await tx.devices(user: user) }
    }

    /// A device's history, oldest first (`DeviceEvent`: its keys issued, refreshed and deleted, the
    /// changes that caused it, its pushes, refused polls and refreshes), the newest `retained`.
    public func deviceHistory(device: String) async throws -> [DeviceEvent] {
        try Self.checkName(device, "device id")
        return try await storage.read { tx in
            let events = try await tx.deviceEvents(device: device)
            if events.isEmpty, try await tx.device(device) == nil { throw TrustError(.notFound, "no device \(device)") }
            return events
        }
    }

    /// Suspend, resume, deactivate (final) or delete a device's credential (Schlage guide). A
    /// suspended or deactivated credential is revoked by its key hash, so every lock denies it
    /// once any phone has carried the new list there; resume lifts the suspension.
    public func setCredential(device: String, to target: CredentialState, reason: String? = nil) async throws -> TrustChange {
        let now = now()
        return try await storage.write { tx in
            guard var d = try await tx.device(device) else { throw TrustError(.notFound, "no device \(device)") }
            let from = d.credentialState
            switch (from, target) {
            case (.deactivated, .deleted), (.suspended, .deleted), (.active, .deleted): break
            case (.deactivated, _), (.deleted, _):
                throw TrustError(.final, "device \(device)'s credential is \(from.rawValue); deactivation is final")
            case (.active, .suspended), (.suspended, .active), (.active, .deactivated), (.suspended, .deactivated): break
            case (let a, let b) where a == b:
                throw TrustError(.conflict, "device \(device)'s credential is already \(a.rawValue)")
            default:
                throw TrustError(.invalidRequest, "cannot go from \(from.rawValue) to \(target.rawValue)")
            }
            d.credentialState = target
            d.updatedAt = now
            try await tx.putDevice(d)
            let cause = "credential:\(device)"
            var entries = try await tx.revocations()
            let keys = try await tx.keys(device: device)
            if target == .active {
                entries.removeAll { $0.cause == cause }
            } else if !entries.contains(where: { $0.cause == cause }) {
                let until = max(keys.map(\.validUntil).max() ?? now, now.addingTimeInterval(self.settings.keyLifetime))
                entries.append(RevocationRecord(publicKeyHash: RevocationEntry.hash(credentialPublicKey: d.credentialKey),
                                                expiry: until, cause: cause))
            }
            try await tx.replaceRevocations(entries)
            let serial = try await self.publishRevocations(tx, now: now)
            try await self.sync(device: d, tx: tx, now: now)
            var affected = [TrustChange.Affected(device: device, trigger: .credentialChanged)]
            affected += try await self.devicesSharingLocks(with: d.user, except: device, tx: tx)
            return try await self.announced(TrustChange(affected: affected, revocationSerial: serial), tx)
        }
    }

    // MARK: grants

    public func addGrant(id: String, user: String, readers: [String], schedules: [String] = []) async throws -> TrustChange {
        try Self.checkName(id, "grant id"); try Self.checkName(user, "user")
        try Self.checkRules(readers, schedules)
        let now = now()
        return try await storage.write { tx in
            if try await tx.grant(id) != nil { throw TrustError(.conflict, "grant \(id) exists") }
            try await tx.putGrant(GrantRecord(id: id, user: user, readers: readers, schedules: schedules, updatedAt: now))
            for d in try await tx.devices(user: user) { try await self.sync(device: d, tx: tx, now: now) }
            return try await self.announced(TrustChange(affected: try await tx.devices(user: user).map { .init(device: $0.id, trigger: .grantIssued) }), tx)
        }
    }

    /// Changes a grant's readers or schedules: its keys are re-issued with a new document id and
    /// the old documents are revoked (a narrowed grant must not keep opening the old readers).
    public func modifyGrant(id: String, readers: [String]?, schedules: [String]?) async throws -> TrustChange {
        let now = now()
        return try await storage.write { tx in
            guard var g = try await tx.grant(id) else { throw TrustError(.notFound, "no grant \(id)") }
            guard g.state == .active else { throw TrustError(.conflict, "grant \(id) is revoked") }
            try Self.checkRules(readers ?? g.readers, schedules ?? g.schedules)
            g.readers = readers ?? g.readers
            g.schedules = schedules ?? g.schedules
            g.revision += 1
            g.updatedAt = now
            try await tx.putGrant(g)
            let serial = try await self.revokeDocuments(of: try await tx.keys(grant: id), cause: "grant:\(id)#\(g.revision - 1)", tx: tx, now: now)
            for d in try await tx.devices(user: g.user) { try await self.sync(device: d, tx: tx, now: now) }
            return try await self.announced(TrustChange(affected: try await tx.devices(user: g.user).map { .init(device: $0.id, trigger: .grantModified) },
                                                        revocationSerial: serial), tx)
        }
    }

    /// Revokes a grant (with the administrator's reason): its keys are deleted from phones at their
    /// next poll, and its documents revoked so offline phones are denied once the list reaches the lock.
    public func revokeGrant(id: String, reason: String) async throws -> TrustChange {
        let now = now()
        return try await storage.write { tx in
            guard var g = try await tx.grant(id) else { throw TrustError(.notFound, "no grant \(id)") }
            guard g.state == .active else { throw TrustError(.conflict, "grant \(id) is already revoked") }
            g.state = .revoked
            g.reason = reason
            g.revision += 1
            g.updatedAt = now
            try await tx.putGrant(g)
            let serial = try await self.revokeDocuments(of: try await tx.keys(grant: id), cause: "grant:\(id)", tx: tx, now: now)
            for d in try await tx.devices(user: g.user) { try await self.sync(device: d, tx: tx, now: now) }
            var affected = try await tx.devices(user: g.user).map { TrustChange.Affected(device: $0.id, trigger: .grantRevoked) }
            affected += try await self.devicesSharingLocks(readers: g.readers, exceptUser: g.user, tx: tx)
            return try await self.announced(TrustChange(affected: affected, revocationSerial: serial), tx)
        }
    }

    public func grants(user: String? = nil) async throws -> [GrantRecord] {
        try await storage.read { tx in try await tx.grants(user: user) }
    }

    // MARK: polling

    /// A phone's poll: brings the device's keys up to date (issue what is missing, re-issue what
    /// passed `expectedUpdate` or whose grant changed, delete what lost its grant), then answers
    /// everything written after `since`, or nil when nothing was.
    ///
    /// The cost is in round trips on the one serialized write path, so a poll reads everything it
    /// decides from in one consistent read (`pollState`, the login's family checked in it too) and
    /// answers from it when nothing is due. When something is due it signs the new documents
    /// outside any transaction (in parallel across polls), and stores them by compare-and-swap,
    /// together with the other polls of the moment (`store`): only if the device's newest key and
    /// the revocation list are still those it read. Any change in between (a grant, a credential
    /// state, another poll of the same device) moves one of those, and the poll falls back to
    /// re-planning inside the write (`sync`).
    public func poll(device: String, since: Int64?, family: String? = nil) async throws -> PollResult? {
        let now = now()
        let state = try await storage.pollState(device: device, family: family)
        if state.familyRevoked {
            // In the device's history (if it exists: a forged name must not add rows), at most once
            // a minute per device.
            let due = refusedPollsNoted.withLock { noted in
                if let last = noted[device], now.timeIntervalSince(last) < 60 { return false }
                if noted.count >= 10_000 { noted.removeAll() }
                noted[device] = now
                return true
            }
            if state.device != nil, due {
                try? await storage.write { tx in
                    try await tx.appendDeviceEvents(try await tx.numbered([DeviceEvent(seq: 0, device: device, kind: .pollFailed, at: now, reason: "login-revoked",
                                                                                       detail: "the token's login was revoked or ended")]), keep: DeviceEvent.retained)
                    try await self.webhook([WebhookItem(type: "key-refresh-failed", device: device, reason: "login-revoked")], tx: tx)
                }
            }
            throw TrustError(.invalidToken, "the token's login was revoked")
        }
        guard let d = state.device else { throw TrustError(.invalidToken, "device \(device) is gone") }
        let snapshot = Snapshot(state: state, device: d)
        guard snapshot.due(now: now, settings: settings) else {
            return Self.changes(keys: state.keys, list: state.list, since: since, current: state.sequence)
        }
        let prepared = try plan(snapshot, now: now)
        if !(state.list.map { Self.revocationDue($0, now: now, lifetime: settings.revocationLifetime) } ?? false) {
            var changed = prepared.values.map(\.key).sorted { $0.id < $1.id }
            changed += snapshot.unwanted.map { var tomb = $0; tomb.document = nil; return tomb }
            let write = KeyWrite(device: device, keysAt: state.keys.map(\.sequence).max(), listAt: state.list?.sequence, keys: changed, at: now)
            if let written = try await keyWrites.submit(write) {
                let ids = Set(written.map(\.id))
                return Self.changes(keys: state.keys.filter { !ids.contains($0.id) } + written, list: state.list, since: since,
                                    current: written.last?.sequence ?? state.sequence)
            }
        }
        return try await storage.write { tx in
            guard let d = try await tx.device(device) else { throw TrustError(.invalidToken, "device \(device) is gone") }
            try await self.sync(device: d, tx: tx, now: now, prepared: prepared)
            return try await self.changes(device: device, since: since, tx: tx)
        }.result
    }

    /// Keys a poll signed, to store if the device's keys and the list are still at these versions.
    struct KeyWrite: Sendable {
        var device: String
        var keysAt: Int64?
        var listAt: Int64?
        var keys: [KeyRecord]
        /// When the poll signed them (the history's time).
        var at: Date
    }

    /// Stores many polls' keys in three statements: the versions they were planned from, checked
    /// all at once; the sequence numbers of all that still hold; the keys. Nil for a poll whose
    /// device or list moved (or that an earlier poll of the same device in the batch moved).
    static func store(_ batch: [KeyWrite], tx: any TrustTransaction) async throws -> [Result<[KeyRecord]?, Error>] {
        var versions = try await tx.pollVersions(devices: batch.map(\.device))
        var accepted = [Bool](repeating: false, count: batch.count)
        var total = 0
        for (i, w) in batch.enumerated() where !w.keys.isEmpty && versions.keys[w.device] == w.keysAt && versions.list == w.listAt {
            accepted[i] = true
            total += w.keys.count
            versions.keys[w.device] = Int64.min   // moved: a second poll of this device in the batch re-plans
        }
        guard total > 0 else { return batch.map { _ in .success(nil) } }
        var next = try await tx.reserveSequences(total)
        var out = [Result<[KeyRecord]?, Error>]()
        var all = [KeyRecord]()
        var events = [DeviceEvent]()
        for (i, w) in batch.enumerated() {
            guard accepted[i] else { out.append(.success(nil)); continue }
            let keys = w.keys.map { k in var k = k; k.sequence = next; next += 1; return k }
            all += keys
            events += DeviceEvent.of(keys, at: w.at)
            out.append(.success(keys))
        }
        try await tx.putKeys(all)
        // The history, in the same commit: two more statements per batch, not per key.
        try await tx.appendDeviceEvents(events, keep: DeviceEvent.retained)
        return out
    }

    /// A poll's answer (nil: nothing changed), boxed so "no answer yet" and "nothing changed" differ.
    struct Changes: Sendable { var result: PollResult? }

    /// Everything of `device` written after `since` (all current keys when `since` is nil).
    func changes(device: String, since: Int64?, tx: any TrustTransaction) async throws -> Changes {
        let keys = try await tx.keys(device: device, after: since ?? 0)
        return Changes(result: Self.changes(keys: keys, list: try await tx.revocationList(), since: since,
                                            current: try await tx.currentSequence()))
    }

    /// The answer to a poll from `since`, given the device's keys (at least those written after
    /// it), the latest list and the sequence the answer is current to (the next cursor).
    static func changes(keys: [KeyRecord], list: RevocationListRecord?, since: Int64?, current: Int64) -> PollResult? {
        let cursor = since ?? 0
        let fresh = keys.filter { $0.sequence > cursor }.sorted { $0.sequence < $1.sequence }
        let listChanged = list.map { $0.sequence > cursor } ?? false
        if since != nil && fresh.isEmpty && !listChanged { return nil }
        return PollResult(
            cursor: String(current),
            keys: fresh.compactMap { k in
                k.document.map { .init(id: k.id, grant: k.grant, document: Data($0).base64EncodedString(), iteration: k.iteration,
                                       validUntil: RFC3339.format(k.validUntil), expectedUpdate: RFC3339.format(k.expectedUpdate)) }
            },
            deleted: since == nil ? [] : fresh.filter { $0.document == nil }.map(\.id),
            revocation: (listChanged || since == nil) ? list.map { .init(serial: $0.serial, document: Data($0.document).base64EncodedString()) } : nil)
    }

    /// What `sync` decides from, read in one snapshot.
    struct Snapshot: Sendable {
        var device: DeviceRecord
        var keys: [String: KeyRecord]
        var grants: [GrantRecord]
        var list: RevocationListRecord?

        init(device: DeviceRecord, keys: [String: KeyRecord], grants: [GrantRecord], list: RevocationListRecord?) {
            self.device = device; self.keys = keys; self.grants = grants; self.list = list
        }

        /// From a poll's one read; `grants` are the user's, of which a credential that holds keys wants the active ones.
        init(state: PollState, device d: DeviceRecord) {
            self.init(device: d, keys: Dictionary(state.keys.map { ($0.id, $0) }) { a, _ in a },
                      grants: d.credentialState.holdsKeys ? state.grants.filter { $0.state == .active && $0.user == d.user } : [],
                      list: state.list)
        }

        /// Keys to issue or re-issue: a wanted key that is missing, deleted, from an older grant
        /// revision, or past its expectedUpdate.
        func stale(now: Date) -> [GrantRecord] {
            grants.filter { g in
                guard let k = keys[KeyRecord.id(grant: g.id, device: device.id)] else { return true }
                return k.document == nil || k.grantRevision != g.revision || now >= k.expectedUpdate
            }
        }

        /// Live keys no grant wants any more (to be deleted: tombstones).
        var unwanted: [KeyRecord] {
            let wanted = Set(grants.map { KeyRecord.id(grant: $0.id, device: device.id) })
            return keys.values.filter { $0.document != nil && !wanted.contains($0.id) }.sorted { $0.id < $1.id }
        }

        func due(now: Date, settings: TrustSettings) -> Bool {
            !stale(now: now).isEmpty || !unwanted.isEmpty
                || list.map { TrustService.revocationDue($0, now: now, lifetime: settings.revocationLifetime) } ?? false
        }
    }

    func snapshot(device: String, tx: any TrustTransaction) async throws -> Snapshot {
        guard let d = try await tx.device(device) else { throw TrustError(.invalidToken, "device \(device) is gone") }
        let keys = Dictionary(uniqueKeysWithValues: try await tx.keys(device: device).map { ($0.id, $0) })
        let grants = d.credentialState.holdsKeys ? try await tx.grants(user: d.user).filter { $0.state == .active } : []
        return Snapshot(device: d, keys: keys, grants: grants, list: try await tx.revocationList())
    }

    /// A key signed ahead of its transaction, valid only if the key it replaces is unchanged.
    struct PreparedKey: Sendable {
        var basedOn: Int64?
        var key: KeyRecord
    }

    func plan(_ s: Snapshot, now: Date) throws -> [String: PreparedKey] {
        var out = [String: PreparedKey]()
        for g in s.stale(now: now) {
            let old = s.keys[KeyRecord.id(grant: g.id, device: s.device.id)]
            out[KeyRecord.id(grant: g.id, device: s.device.id)] = PreparedKey(basedOn: old?.sequence, key: try issue(grant: g, device: s.device, old: old, now: now))
        }
        return out
    }

    /// Signs the access document of one grant on one device's credential.
    func issue(grant g: GrantRecord, device d: DeviceRecord, old: KeyRecord?, now: Date) throws -> KeyRecord {
        // Same document id while the grant is unchanged (one revocation entry covers every
        // iteration); a new one when the grant changed.
        let docID = old.flatMap { $0.grantRevision == g.revision ? $0.documentID : nil } ?? Primitives.randomBytes(8)
        // The re-issue count, for the phone and the API. It is not written into the document:
        // Aliro 0.9.4 §7.2.3 (as the official reader cases enforce it) compares validity
        // iterations across all of an issuer's documents and refuses one 8 or more below the
        // highest seen, so per-key counters would turn a long-lived key invalid once any other
        // key had been re-issued eight times. Order at the lock comes from signed time.
        let iteration = (old?.iteration ?? 0) + 1
        // Strictly after the document it replaces, which a lock may hold (SigningOrder).
        let previous = old?.document.flatMap { d in signedTimes.withLock { $0.removeValue(forKey: DocumentBytes(d)) } ?? IssuedDocument.signedTime(of: d) }
        let validity = IssuedDocument.Validity(signed: SigningOrder.signedTime(now: now, after: previous), validFrom: now, validUntil: now.addingTimeInterval(settings.keyLifetime),
                                               expectedUpdate: now.addingTimeInterval(settings.pollInterval))
        let access = try AccessData(id: docID, readers: try g.readers.map { try ReaderRule(parsing: $0) },
                                    schedules: try g.schedules.map { try WeeklySchedule(parsing: $0) })
        let doc = try AccessDocument.issue(access: access, credentialPublicKey: d.credentialKey, validity: validity, issuerKey: issuerKey,
                                           issuerKeyID: issuerKeyID, timeVerificationRequired: settings.timeVerificationRequired ?? false)
        let encoded = doc.encoded()
        signedTimes.withLock { known in
            if known.count >= Self.signedTimesKept { known.removeAll(keepingCapacity: true) }
            known[DocumentBytes(encoded)] = validity.signed
        }
        return KeyRecord(id: KeyRecord.id(grant: g.id, device: d.id), grant: g.id, device: d.id, document: encoded, documentID: docID,
                         iteration: iteration, grantRevision: g.revision, validUntil: validity.validUntil,
                         expectedUpdate: validity.expectedUpdate!, sequence: 0)
    }

    /// Brings one device's keys in line with its grants and credential state, inside a write.
    func sync(device d: DeviceRecord, tx: any TrustTransaction, now: Date, prepared: [String: PreparedKey] = [:]) async throws {
        let s = try await snapshot(device: d.id, tx: tx)
        var written = [KeyRecord]()
        for g in s.stale(now: now) {
            let id = KeyRecord.id(grant: g.id, device: d.id)
            let old = s.keys[id]
            var key: KeyRecord
            if let p = prepared[id], p.basedOn == old?.sequence, p.key.grantRevision == g.revision {
                key = p.key
            } else {
                key = try issue(grant: g, device: d, old: old, now: now)
            }
            key.sequence = try await tx.nextSequence()
            try await tx.putKey(key)
            written.append(key)
        }
        for k in s.unwanted {
            var tomb = k
            tomb.document = nil
            tomb.sequence = try await tx.nextSequence()
            try await tx.putKey(tomb)
            written.append(tomb)
        }
        try await tx.appendDeviceEvents(DeviceEvent.of(written, at: now), keep: DeviceEvent.retained)
        if let list = s.list, Self.revocationDue(list, now: now, lifetime: settings.revocationLifetime) {
            _ = try await publishRevocations(tx, now: now)
        }
    }

    // MARK: revocation lists

    /// Revokes the documents of `keys` by document id until they would have expired anyway.
    func revokeDocuments(of keys: [KeyRecord], cause: String, tx: any TrustTransaction, now: Date) async throws -> UInt64? {
        let live = keys.filter { $0.validUntil > now }
        guard !live.isEmpty else { return nil }
        var entries = try await tx.revocations()
        for k in live where !entries.contains(where: { $0.documentID == k.documentID }) {
            entries.append(RevocationRecord(documentID: k.documentID, expiry: k.validUntil, cause: cause))
        }
        try await tx.replaceRevocations(entries)
        return try await publishRevocations(tx, now: now)
    }

    /// Issues the next revocation document: the whole list (OVERWRITE) of every entry that has not
    /// lapsed. The serial is the service's own count (phones and door reports name lists by it);
    /// the document orders itself for locks by its signed time.
    func publishRevocations(_ tx: any TrustTransaction, now: Date) async throws -> UInt64 {
        let entries = try await tx.revocations().filter { $0.expiry > now }
        try await tx.replaceRevocations(entries)
        let previous = try await tx.revocationList()
        let serial = (previous?.serial ?? 0) + 1
        let data = RevocationData(changeMode: .overwrite, entries: try entries.map {
            try RevocationEntry(publicKeyHash: $0.publicKeyHash, documentID: $0.documentID, expiry: $0.expiry)
        })
        // Signed strictly after the previous list (SigningOrder): a lock holding it must see this one as newer.
        let issued = SigningOrder.signedTime(now: now, after: previous.flatMap { try? RevocationDocument(parsing: $0.document) }?.issued)
        let doc = RevocationDocument.issue(revocation: data, issued: issued, expiry: now.addingTimeInterval(settings.revocationLifetime),
                                           issuerKey: issuerKey)
        try await tx.putRevocationList(RevocationListRecord(serial: serial, document: doc.encoded(), sequence: try await tx.nextSequence()))
        return serial
    }

    /// A list past half its lifetime is re-issued at the next poll, so locks never hold an expired one.
    static func revocationDue(_ list: RevocationListRecord, now: Date, lifetime: TimeInterval) -> Bool {
        guard let doc = try? RevocationDocument(parsing: list.document) else { return true }
        return now >= doc.issued.addingTimeInterval(lifetime / 2)
    }

    public func revocationList() async throws -> RevocationListRecord? {
        try await storage.read { tx in try await tx.revocationList() }
    }

    // MARK: who should poll

    /// An administrative change, announced on the change feed as part of its own transaction (so
    /// the instances that hold the affected phones' push subscriptions push once it commits).
    /// Webhook subscribers get it as events, written in the same transaction.
    func announced(_ change: TrustChange, _ tx: any TrustTransaction) async throws -> TrustChange {
        try await tx.announce(change)
        // Each affected device's history says why it was told to poll.
        let events = change.affected.compactMap { a in
            DeviceEvent.Kind(trigger: a.trigger).map { DeviceEvent(seq: 0, device: a.device, kind: $0, at: now(), detail: change.revocationSerial.map { "revocation serial \($0)" }) }
        }
        try await tx.appendDeviceEvents(try await tx.numbered(events), keep: DeviceEvent.retained)
        if try await hasWebhookSubscribers(tx) { try await Self.recordWebhookEvents(change, at: now(), tx: tx) }
        return change
    }

    func devicesSharingLocks(with user: String, except device: String, tx: any TrustTransaction) async throws -> [TrustChange.Affected] {
        let readers = try await tx.grants(user: user).filter { $0.state == .active }.flatMap(\.readers)
        return try await devicesSharingLocks(readers: readers, exceptUser: nil, tx: tx).filter { $0.device != device }
    }

    /// Devices of other users with an active grant on one of these readers' groups: they should
    /// poll for the new revocation list and carry it to the locks.
    func devicesSharingLocks(readers: [String], exceptUser: String?, tx: any TrustTransaction) async throws -> [TrustChange.Affected] {
        let groups = Set(readers.map { $0.split(separator: ":").first.map(String.init)?.lowercased() ?? "" })
        var users = Set<String>()
        for g in try await tx.grants(user: nil) where g.state == .active && g.user != exceptUser {
            if g.readers.contains(where: { groups.contains($0.split(separator: ":").first.map(String.init)?.lowercased() ?? "") }) {
                users.insert(g.user)
            }
        }
        var out = [TrustChange.Affected]()
        for u in users.sorted() {
            for d in try await tx.devices(user: u) { out.append(.init(device: d.id, trigger: .lockGrantsRevoked)) }
        }
        return out
    }

    // MARK: checks

    static func checkName(_ s: String, _ what: String) throws(TrustError) {
        guard !s.isEmpty, s.utf8.count <= 64, s.allSatisfy({ $0.isLetter || $0.isNumber || "-_.@".contains($0) }), !s.contains("/") else {
            throw TrustError(.invalidRequest, "\(what) \"\(s.prefix(80))\" must be 1–64 letters, digits, '-', '_', '.', '@'")
        }
    }

    static func checkRules(_ readers: [String], _ schedules: [String]) throws(TrustError) {
        guard !readers.isEmpty else { throw TrustError(.invalidRequest, "a grant names at least one reader (GROUP or GROUP:SUB, hex)") }
        guard readers.count <= 32, schedules.count <= 32 else { throw TrustError(.invalidRequest, "at most 32 readers and 32 schedules") }
        for r in readers {
            do { _ = try ReaderRule(parsing: r) } catch { throw TrustError(.invalidRequest, "reader \"\(r.prefix(80))\": \(error.reason)") }
        }
        for s in schedules {
            do { _ = try WeeklySchedule(parsing: s) } catch { throw TrustError(.invalidRequest, "schedule \"\(s.prefix(80))\": \(error.reason)") }
        }
    }
}
