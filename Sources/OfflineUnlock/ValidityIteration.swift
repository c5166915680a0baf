import ByteCore
import Foundation

/// Aliro 0.9.4 §7.2.3 as the official reader cases enforce it: the lock remembers, per issuer,
/// the highest access-document validity iteration it has seen (MSO validityInfo key `"5"`), the
/// issuer's *AccessIteration*. A document whose iteration lies `removalThreshold` (8) or more
/// below it is invalid: the issuer has moved on and removed what it did not re-issue
/// (`iteration_removed`). A document of a credential whose iteration is below the one the lock
/// holds for that credential from the same issuer is an old one brought back
/// (`credential_issuer_removed`). A document without an iteration is ordered by its signed time
/// alone (docs/protocol.md §9). Cases: nfc_rdr_neg_stepup_ad_validity_iteration.py @ 0b6dfe1d,
/// nfc_rdr_neg_stepup_ad_credential_issuer_removed.py (index id 67542056480),
/// nfc_rdr_stepup_fast_kpersistent_removed.py (index id 67311585279).
public enum ValidityIteration {
    /// "…difference is 8, so Aliro v0.9.4 section 7.2.3 makes this Access Document invalid"
    /// (NFC_RDR_STEPUP_FAST_KPERSISTENT_REMOVED: AccessIteration 9, document 1).
    public static let removalThreshold = 8

    /// The issuer a document's iteration counts for: its kid (hex), as the revocation lists name it.
    static func issuer(of doc: AccessDocument) -> String { Hex.encode(doc.document.issuerKeyID ?? []) }

    /// Whether `iteration` is removed under an issuer whose AccessIteration is `access`.
    public static func isRemoved(_ iteration: Int, accessIteration access: Int?) -> Bool {
        guard let access else { return false }
        // Subtraction of two Ints from hostile documents must not trap: an overflowing gap is
        // beyond any threshold, in the direction of the operands.
        let (gap, overflow) = access.subtractingReportingOverflow(iteration)
        return overflow ? access > iteration : gap >= removalThreshold
    }

    /// The refusal of `doc` for credential `key` (hex), or nil when the rule lets it through.
    /// `held` is the document the lock holds for this credential (nil: none).
    static func refusal(_ doc: AccessDocument, held: AccessDocument?, state: EngineState) -> Decision? {
        guard let i = doc.validity.validityIteration else { return nil }
        let issuer = issuer(of: doc), docID = Hex.encode(doc.id)
        if let held, held.document.issuerKeyID == doc.document.issuerKeyID, let h = held.validity.validityIteration, i < h {
            return .deny(.credentialIssuerRemoved, detail: "document \(docID) has validity iteration \(i), below the \(h) of the document this lock holds for the credential from issuer \(issuer.isEmpty ? "(no kid)" : issuer) (Aliro 0.9.4 §7.2.3)")
        }
        if let a = state.accessIterations[issuer], isRemoved(i, accessIteration: a) {
            return .deny(.iterationRemoved, detail: "document \(docID) has validity iteration \(i), \(removalThreshold) or more below issuer \(issuer.isEmpty ? "(no kid)" : issuer)'s AccessIteration \(a) (Aliro 0.9.4 §7.2.3)")
        }
        return nil
    }

    /// Whether the lock holds `doc` for a credential but may not decide on it: the issuer's
    /// AccessIteration has moved `removalThreshold` past it (the reader steps up for a newer one).
    static func isRemoved(_ doc: AccessDocument, state: EngineState) -> Bool {
        guard let i = doc.validity.validityIteration else { return false }
        return isRemoved(i, accessIteration: state.accessIterations[issuer(of: doc)])
    }

    /// Raises the issuer's AccessIteration to `doc`'s iteration (a verified, accepted document).
    static func observe(_ doc: AccessDocument, state: inout EngineState) {
        guard let i = doc.validity.validityIteration else { return }
        let issuer = issuer(of: doc)
        if i > state.accessIterations[issuer] ?? Int.min { state.setAccessIteration(i, for: issuer) }
    }
}
