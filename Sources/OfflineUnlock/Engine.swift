import ByteCore
import Codecs
import Foundation
import Synchronization

/// The reader this engine decides for: its group and sub identifiers (16 bytes each).
public struct ReaderIdentity: Equatable, Sendable {
    public var groupID: [UInt8]
    public var subID: [UInt8]
    public init(groupID: [UInt8], subID: [UInt8]) { self.groupID = groupID; self.subID = subID }
}

/// The offline-unlock decision, as a pure function of (presentation, state, configuration, time).
///
/// Checks in order, the first failure deciding:
/// 1. protocol version supported (`unsupported_version`), not below the policy minimum or below
///    what this credential used before (`downgrade`);
/// 2. transaction id not seen recently (`replay`);
/// 3. clock not below the high-water mark minus leeway (`clock_rollback`);
/// 4. revocation documents presented: each decodes (`malformed_input`), is from a trusted issuer
///    — a trusted key by kid, or a certificate (x5chain) a trusted issuer CA signed, valid when
///    the MSO was signed — with a good signature (`untrusted_issuer`), digests match (`digest_mismatch`); one signed
///    no earlier than the last applied changes that issuer's list (OVERWRITE or APPEND, then its
///    entries to remove; one list per issuer); their signed time may restore
///    clock trust (within the bound of `TrustedClock.evidence`; never a document with MSO key 7 true);
/// 5. the access document: one presented whose device key is the AUTH1 key (else, if documents
///    were presented, `document_key_mismatch`), verified as above, its validity iteration not
///    below the one held for this credential (`credential_issuer_removed`) nor 8 or more below
///    its issuer's AccessIteration (`iteration_removed`; `ValidityIteration`); otherwise the
///    cached one for this key (`iteration_removed` too); otherwise, for a key the lock trusts without
///    a document (`TrustStore.credentialKeys`), a grant unless a revocation list names its hash
///    (`revoked`); otherwise `missing_document` when the credential announced one (5E bit 0) and
///    delivered none, else `unknown_credential`; its signed time may restore clock trust;
/// 6. clock trusted (`time_not_verified` for a document whose MSO key 7 asks for verified time,
///    else `clock_untrusted`); only now are expired revocation entries pruned;
/// 7. validity span ≤ policy maximum (`validity_too_long`), now ≥ validFrom − leeway
///    (`not_yet_valid`), now ≤ validUntil + leeway (`expired`); an issuer certificate the
///    document carries is valid now, ± leeway (`untrusted_issuer`);
/// 8. not revoked by key hash or document id in the list of the document's issuer (`revoked`);
/// 9. a rule names this reader and grants its action (capabilities, when the rule names any,
///    include an unsecure), and the document names no reader rule ids (this reader defines
///    none) (`wrong_reader`); one such rule's schedule ids let it open now — inside one of its
///    allow schedules when it names any, in none of its deny schedules — and a weekly window no
///    rule names contains now, when the document has such windows (`outside_schedule`); a lock
///    whose policy says it supports no schedules refuses a document using any (`schedules_not_supported`).
/// A verified access document is cached even when a later check denies (so a credential denied
/// outside its schedule does not need step-up again); an expired one is not. The state keeps it
/// decoded and verified in memory too (`VerifiedDocuments`): a decision from the cache repeats
/// checks 1–3 and 6–9, not the decoding, issuer signature and digests of step 5.
public struct DecisionCore: Sendable {
    public var reader: ReaderIdentity
    public var policy: LockPolicy
    public var trust: TrustStore
    /// A deliberate fault (`lock … --fault ignore-validity-iteration`), never a setting: validity
    /// iterations are neither remembered nor checked (the Aliro 0.9.4 §7.2.3 cases catch it).
    public var ignoresValidityIteration = false

    public init(reader: ReaderIdentity, policy: LockPolicy, trust: TrustStore) {
        self.reader = reader; self.policy = policy; self.trust = trust
    }

    public func decide(_ p: Presentation, state: inout EngineState, at now: Date) -> Decision {
        let keyHex = Hex.encode(p.credentialPublicKey)
        var version: String { ProtocolVersionText.format(p.protocolVersion) }
        state.noteDecision()

        // 1. Versions.
        guard policy.supportedProtocolVersions.contains(p.protocolVersion) else {
            return .deny(.unsupportedVersion, detail: "protocol version \(version) is not one of \(policy.supportedProtocolVersions.map(ProtocolVersionText.format))")
        }
        if p.protocolVersion < policy.minimumProtocolVersion {
            return .deny(.downgrade, detail: "protocol version \(version) is below the lock's minimum \(ProtocolVersionText.format(policy.minimumProtocolVersion))")
        }
        if let before = state.highestVersion[keyHex], p.protocolVersion < before {
            return .deny(.downgrade, detail: "credential used \(ProtocolVersionText.format(before)) before and now offers \(version)")
        }

        // 2. Replay.
        let tid = Hex.encode(p.transactionID)
        if state.recent.contains(tid) {
            return .deny(.replay, detail: "transaction id \(tid) was already used")
        }
        if policy.replayWindow > 0 { state.rememberTransaction(tid, window: policy.replayWindow) }

        // 3. Rollback (trust comes later: documents may restore it).
        if state.clock.check(now, leeway: policy.clockLeeway) == .clockRollback {
            return .deny(.clockRollback, detail: "time \(RFC3339.format(now)) is below the high-water mark \(RFC3339.format(state.clock.highWaterMark!))")
        }

        // 4. Revocation documents: each changes its own issuer's list unless signed before the last one applied.
        for bytes in p.revocationDocuments {
            let doc: RevocationDocument
            let issuer: String
            do {
                doc = try RevocationDocument(parsing: bytes)
                try doc.document.verify(trust: trust)
                issuer = Hex.encode(doc.document.issuerKeyID ?? [])
            } catch {
                return .deny(error.denyReason, detail: "revocation document: \(error.reason)")
            }
            state.clock.evidence(doc.document, now: now, leeway: policy.clockLeeway, maxLifetime: policy.maxDocumentLifetime)
            guard now <= doc.expiry.addingTimeInterval(policy.clockLeeway) else { continue }
            do {
                if let change = try state.revocationLists.apply(doc.revocation, signed: doc.issued, issuer: issuer) {
                    state.pendingRevocationChanges.changes.append(change)
                }
            } catch {
                return .deny(error.denyReason, detail: "revocation document: \(error.reason)")
            }
        }

        // 5. The access document.
        let access: AccessDocument
        if !p.accessDocuments.isEmpty {
            var parsed = [(AccessDocument, [UInt8])]()
            for bytes in p.accessDocuments {
                do {
                    let doc = try AccessDocument(parsing: bytes)
                    try doc.document.verify(trust: trust)
                    parsed.append((doc, bytes))
                } catch {
                    return .deny(error.denyReason, detail: "access document: \(error.reason)")
                }
            }
            guard let match = parsed.first(where: { $0.0.credentialPublicKey == p.credentialPublicKey }) else {
                return .deny(.documentKeyMismatch, detail: "no presented access document is bound to the key that signed AUTH1 (\(keyHex.prefix(16))…)")
            }
            access = match.0
            state.clock.evidence(access.document, now: now, leeway: policy.clockLeeway, maxLifetime: policy.maxDocumentLifetime)
            // Validity iterations (Aliro 0.9.4 §7.2.3): a refused document is not cached, and a
            // held one the issuer removed goes too.
            if !ignoresValidityIteration {
                let held = cachedDocument(keyHex, state: &state)
                if let refusal = ValidityIteration.refusal(access, held: held, state: state) {
                    if let held, ValidityIteration.isRemoved(held, state: state) {
                        state.setDocument(nil, for: keyHex)
                        state.verified.remove(keyHex)
                    }
                    return refusal
                }
                ValidityIteration.observe(access, state: &state)
            }
            if now <= access.validity.validUntil.addingTimeInterval(policy.clockLeeway),
               access.validity.validUntil.timeIntervalSince(access.validity.validFrom) <= policy.maxDocumentLifetime {
                cache(access, bytes: match.1, key: keyHex, state: &state)
            }
        } else if let doc = cachedDocument(keyHex, state: &state) {
            if !ignoresValidityIteration, ValidityIteration.isRemoved(doc, state: state) {
                return .deny(.iterationRemoved, detail: "the document \(Hex.encode(doc.id)) this lock holds for key \(keyHex.prefix(16))… has validity iteration \(doc.validity.validityIteration ?? 0), \(ValidityIteration.removalThreshold) or more below its issuer's AccessIteration \(state.accessIterations[ValidityIteration.issuer(of: doc)] ?? 0) (Aliro 0.9.4 §7.2.3)")
            }
            access = doc
        } else if trust.credentialKeys.contains(p.credentialPublicKey) {
            // A key provisioned out of band (`trustedCredentialKeys`): granted on AUTH1 alone,
            // unless a trusted issuer's revocation list names its hash (NFC_RDR_STEPUP_RD).
            if let hit = state.revocationLists.revocation(ofKey: p.credentialPublicKey) {
                return .deny(.revoked, detail: "trusted credential key \(keyHex.prefix(16))… is revoked by its key hash (issuer \(hit.issuer) revocation list signed \(RFC3339.format(hit.issued)))")
            }
            state.clock.observe(now)
            state.setVersion(max(state.highestVersion[keyHex] ?? 0, p.protocolVersion), for: keyHex)
            return .grant(credentialID: CredentialKeyList.credentialID(p.credentialPublicKey))
        } else if p.announcedAccessDocument {
            return .deny(.missingDocument, detail: "the credential announced an access document (5E bit 0) but its step-up answer held none, and the lock has none for key \(keyHex.prefix(16))…")
        } else {
            return .deny(.unknownCredential, detail: "no access document for credential key \(keyHex.prefix(16))…")
        }
        let docID = Hex.encode(access.id)

        // 6. Clock trust. A document asking for time verification (MSO key 7) restored nothing
        // above: a lock without verified time refuses it by that rule.
        if state.clock.check(now, leeway: policy.clockLeeway) == .clockUntrusted, access.document.timeVerificationRequired {
            return .deny(.timeNotVerified, detail: "document \(docID) requires time verification (MSO key 7 true) and the lock's clock is not trusted since power loss; an operator must set it (clock set) or a document without key 7 signed after \(state.clock.highWaterMark.map(RFC3339.format) ?? "now") restore it")
        }
        if let reason = state.clock.check(now, leeway: policy.clockLeeway) {
            return .deny(reason, detail: "the lock's clock is not trusted since power loss; set it or present a document signed after \(state.clock.highWaterMark.map(RFC3339.format) ?? "now")")
        }

        // Expired revocation entries go only now, under a trusted clock (one set ahead must not
        // drop them for good).
        state.pendingRevocationChanges.changes += state.revocationLists.prune(before: now.addingTimeInterval(-policy.clockLeeway))

        // 7. Validity.
        let v = access.validity
        let span = v.validUntil.timeIntervalSince(v.validFrom)
        if span > policy.maxDocumentLifetime {
            return .deny(.validityTooLong, detail: "document \(docID) is valid for \(DurationText.format(span)), the lock allows at most \(DurationText.format(policy.maxDocumentLifetime))")
        }
        if now < v.validFrom.addingTimeInterval(-policy.clockLeeway) {
            return .deny(.notYetValid, detail: "document \(docID) is valid from \(RFC3339.format(v.validFrom)); now is \(RFC3339.format(now))")
        }
        if now > v.validUntil.addingTimeInterval(policy.clockLeeway) {
            state.setDocument(nil, for: keyHex)
            state.verified.remove(keyHex)
            return .deny(.expired, detail: "document \(docID) expired at \(RFC3339.format(v.validUntil)); now is \(RFC3339.format(now))")
        }

        // The issuer certificate, when the document's issuer is certified, is valid now too
        // (NFC_RDR_NEG_STEPUP_AD_ISSUER_CERT_EXPIRED); `verify` checked it at the signing time.
        if !trust.skipsIssuerCertificateChecks, let certificate = try? access.document.issuerCertificate(),
           !certificate.isValid(at: now, leeway: policy.clockLeeway) {
            return .deny(.untrustedIssuer, detail: "document \(docID): its issuer certificate (\(certificate.subjectName)) is valid \(RFC3339.format(certificate.notBefore))–\(RFC3339.format(certificate.notAfter)); now is \(RFC3339.format(now))")
        }

        // 8. Revocation, by the list of the document's own issuer.
        let issuer = Hex.encode(access.document.issuerKeyID ?? [])
        if let (entry, listSigned) = state.revocationLists.revocation(of: issuer, credentialPublicKey: p.credentialPublicKey, documentID: access.id) {
            let by = entry.publicKeyHash != nil && entry.publicKeyHash == RevocationEntry.hash(credentialPublicKey: p.credentialPublicKey)
                ? "credential key hash" : "document id \(docID)"
            return .deny(.revoked, detail: "revoked by \(by) (issuer \(issuer) revocation list signed \(RFC3339.format(listSigned)))")
        }

        // 9. Rules and schedules.
        let rules = access.access.readers.filter { $0.matches(groupID: reader.groupID, subID: reader.subID) }
        guard !rules.isEmpty else {
            return .deny(.wrongReader, detail: "document \(docID) opens \(access.access.readers.map(\.description).joined(separator: ", ")), not reader \(Hex.encode(reader.groupID)):\(Hex.encode(reader.subID))")
        }
        // A rule that names capabilities grants only those: the lock's action is an unsecure.
        let acting = rules.filter(\.grantsUnsecure)
        guard !acting.isEmpty else {
            return .deny(.wrongReader, detail: "document \(docID): no rule naming this reader grants its action, an unsecure (capability bits 1–4): \(rules.map(\.description).joined(separator: ", "))")
        }
        // Reader rule ids name rules the reader defines itself; this reader defines none, so a
        // rule it cannot evaluate cannot grant (NFC_RDR_NEG_STEPUP_AD_UNKNOWN_READER_RULE).
        if !access.access.readerRuleIDs.isEmpty {
            let ids = access.access.readerRuleIDs.map { "0x" + String($0, radix: 16, uppercase: true) }.joined(separator: ", ")
            return .deny(.wrongReader, detail: "document \(docID) names reader rule ids \(ids); this reader defines no reader rules")
        }
        // A lock set without schedule support cannot tell whether now is inside one: a document
        // that uses any is refused (NFC_RDR_NEG_STEPUP_AD_SCHEDULE_IN_ACCESS_RULE_AND_READER).
        if !policy.supportsSchedules {
            let named = acting.filter { $0.allowScheduleIDs != 0 || $0.denyScheduleIDs != 0 }
            if !access.access.scheduleEntries.isEmpty || !named.isEmpty {
                return .deny(.schedulesNotSupported, detail: "document \(docID) uses schedules (\(access.access.scheduleEntries.count) schedule entries; rules with schedule ids: \(named.isEmpty ? "none" : named.map(\.description).joined(separator: ", "))) and this lock is set not to evaluate schedules (policy supportsSchedules false)")
            }
        }
        let zone = "UTC\(policy.scheduleUTCOffsetMinutes >= 0 ? "+" : "")\(policy.scheduleUTCOffsetMinutes)m"
        // Allow / deny schedule ids of the rules naming this reader (the official schedule
        // cases): one rule whose schedules let it open suffices.
        let entries = access.access.scheduleEntries
        let refusals = acting.map { $0.scheduleRefusal(entries, at: now, utcOffsetMinutes: policy.scheduleUTCOffsetMinutes) }
        if !refusals.contains(where: { $0 == nil }) {
            return .deny(.outsideSchedule, detail: "\(RFC3339.format(now)) (\(zone)): " + zip(acting, refusals).map { "rule \($0.0): \($0.1 ?? "")" }.joined(separator: "; "))
        }
        // Weekly windows no rule names: document-wide, one must contain now (LockBench's rule).
        let schedules = access.access.documentWideSchedules
        if !schedules.isEmpty, !schedules.contains(where: { $0.contains(now, utcOffsetMinutes: policy.scheduleUTCOffsetMinutes) }) {
            return .deny(.outsideSchedule, detail: "\(RFC3339.format(now)) (\(zone)) is outside \(schedules.map(\.description).joined(separator: "; "))")
        }

        state.clock.observe(now)
        state.setVersion(max(state.highestVersion[keyHex] ?? 0, p.protocolVersion), for: keyHex)
        return .grant(credentialID: docID)
    }

    /// Whether the reader must step up: no usable (verified, unexpired) cached document for this
    /// key, no trusted time, or the credential says it carries something newer than the lock
    /// holds (`timestamps`): an access document signed after the cached one, or a revocation
    /// document signed after the list the lock holds from the cached document's issuer (or any,
    /// when it holds none); or the cached document is revoked (the phone may carry its re-grant,
    /// signed in the same second as the one the lock holds). Without the timestamp rule a lock holding an unexpired document would
    /// never fetch the newer revocation list a phone carries until the document expired.
    public func wantsStepUp(credentialPublicKey: [UInt8], timestamps: SignedTimestamps = .none, state: EngineState, at now: Date) -> Bool {
        if state.clock.check(now, leeway: policy.clockLeeway) != nil { return true }
        var state = state  // a miss in the memo is remembered in this copy only
        guard let doc = cachedDocument(Hex.encode(credentialPublicKey), state: &state) else { return true }
        if now > doc.validity.validUntil.addingTimeInterval(policy.clockLeeway) { return true }
        // A held document its issuer has since removed (Aliro 0.9.4 §7.2.3): the phone may carry
        // the re-issued one.
        if !ignoresValidityIteration, ValidityIteration.isRemoved(doc, state: state) { return true }
        // A cached document the held list revokes decides nothing but a denial: the phone may
        // carry its re-grant (a new document, whatever its signed time), so ask. Only a revoked
        // phone pays for it, with its own time.
        if state.revocationLists.revocation(of: Hex.encode(doc.document.issuerKeyID ?? []), credentialPublicKey: credentialPublicKey,
                                            documentID: doc.id) != nil { return true }
        if let signed = timestamps.credential, signed > doc.validity.signed { return true }
        if let signed = timestamps.revocation {
            let held = state.revocationLists[Hex.encode(doc.document.issuerKeyID ?? [])]?.issued
            if held.map({ signed > $0 }) ?? true { return true }
        }
        return false
    }

    /// The document cached for `key` (hex) if it decodes and verifies against `trust`: from the
    /// state's memo when it knows these bytes, else decoded and verified now and remembered.
    func cachedDocument(_ key: String, state: inout EngineState) -> AccessDocument? {
        guard let bytes = state.cachedDocuments[key] else { return nil }
        if let known = state.verified.verdict(key: key, bytes: bytes, trust: trust) { return known.document }
        let verdict = verify(cached: bytes)
        state.verified.record(verdict, key: key, bytes: bytes, trust: trust)
        return verdict.document
    }

    private func verify(cached bytes: [UInt8]) -> VerifiedDocuments.Verdict {
        guard let doc = try? AccessDocument(parsing: bytes), (try? doc.document.verify(trust: trust)) != nil else { return .rejected }
        return .verified(doc)
    }

    /// Decodes and verifies each cached document the state's memo does not know yet, and forgets
    /// what is no longer cached. The engine calls it whenever it is handed a state (one read from
    /// disk has an empty memo: every entry is verified here once, not in each transaction).
    public func verifyCachedDocuments(_ state: inout EngineState) {
        state.verified.prune(keeping: state.cachedDocuments)
        for key in state.cachedDocuments.keys { _ = cachedDocument(key, state: &state) }
    }

    private func cache(_ doc: AccessDocument, bytes: [UInt8], key: String, state: inout EngineState) {
        state.setDocument(bytes, for: key)
        state.verified.record(.verified(doc), key: key, bytes: bytes, trust: trust)
        guard policy.maxCachedDocuments >= 0, state.cachedDocuments.count > policy.maxCachedDocuments else { return }
        // Evict the documents that expire soonest (never the one just added); one that does not
        // decode or verify counts as expired. The memo keeps them in that order; when it does
        // not know every cached document (a state edited from outside), sort them all.
        let excess = state.cachedDocuments.count - policy.maxCachedDocuments
        if state.verified.count == state.cachedDocuments.count {
            let victims = state.verified.soonestExpiring(excess) { $0 != key && state.documents[$0] != nil }
            for k in victims {
                state.setDocument(nil, for: k)
                state.verified.remove(k)
            }
            return
        }
        let others = state.cachedDocuments.keys.filter { $0 != key }
        let expiries = others.map { k in (k, cachedDocument(k, state: &state)?.validity.validUntil ?? .distantPast) }
            .sorted { $0.1 < $1.1 }
        for (k, _) in expiries.prefix(state.cachedDocuments.count - policy.maxCachedDocuments) {
            state.setDocument(nil, for: k)
            state.verified.remove(k)
        }
    }
}

/// The engine as the access protocol sees it (`AccessDecider`): the pure `DecisionCore` plus
/// mutable state and a time source. The time source is injected (the lock passes its virtual
/// clock), so the engine never reads the system clock itself. Thread-safe.
public final class OfflineUnlockEngine: AccessDecider, Sendable {
    public let core: DecisionCore
    private struct Held {
        var state: EngineState
        var onStateChange: (@Sendable (EngineState) -> Void)?
    }
    private let held: Mutex<Held>
    private let now: @Sendable () -> Date
    /// Called with the new state after each decision, before `decide` returns (the lock persists it).
    public var onStateChange: (@Sendable (EngineState) -> Void)? {
        get { held.withLock { $0.onStateChange } }
        set { held.withLock { $0.onStateChange = newValue } }
    }

    /// Verifies each cached document of `state` once, here (see `DecisionCore.verifyCachedDocuments`).
    public init(core: DecisionCore, state: EngineState, now: @escaping @Sendable () -> Date) {
        self.core = core
        var state = state
        core.verifyCachedDocuments(&state)
        self.held = Mutex(Held(state: state))
        self.now = now
    }

    /// Setting it verifies the cached documents the state's memo does not know (none, for a state
    /// read from this property and modified), and makes the changes untracked (`EngineChanges`).
    public var state: EngineState {
        get { held.withLock { $0.state } }
        set {
            var s = newValue
            core.verifyCachedDocuments(&s)
            s.markUntracked()
            held.withLock { [s] in $0.state = s }
        }
    }

    /// What the decisions since the last call changed (the lock records it; see `EngineChanges`).
    public func takeChanges() -> EngineChanges {
        held.withLock { $0.state.takeChanges() }
    }

    /// Puts back what `changes` (from `takeChanges`) changed: decisions the lock could not record.
    public func undo(_ changes: EngineChanges) {
        held.withLock { $0.state.undo(changes) }
    }

    /// The trusted clock now (without copying the state).
    public var trustedClock: TrustedClock { held.withLock { $0.state.clock } }

    /// The id (hex) of the verified access document cached for this key, if any (for the audit log).
    public func cachedDocumentID(credentialPublicKey: [UInt8]) -> String? {
        held.withLock { core.cachedDocument(Hex.encode(credentialPublicKey), state: &$0.state).map { Hex.encode($0.id) } }
    }

    /// The revocation list changes of the decisions since the last call (the lock audits them).
    public func takeRevocationChanges() -> [RevocationChange] {
        held.withLock { $0.state.takeRevocationChanges() }
    }

    public func wantsStepUp(credentialPublicKey: [UInt8], timestamps: SignedTimestamps) -> Bool {
        held.withLock { core.wantsStepUp(credentialPublicKey: credentialPublicKey, timestamps: timestamps, state: $0.state, at: now()) }
    }

    public func decide(_ presentation: Presentation) -> Decision {
        let (decision, snapshot, onStateChange) = held.withLock { h in
            let decision = core.decide(presentation, state: &h.state, at: now())
            return (decision, h.state, h.onStateChange)
        }
        onStateChange?(snapshot)
        return decision
    }
}
