import Foundation
import OfflineUnlock

/// A minimal stand-in for the offline-unlock engine (replaced by the engine's decider once
/// merged): grants keys it knows, wants step-up until it has seen documents for a key.
final class TestDecider: AccessDecider {
    var known: Set<[UInt8]>
    var stepUpFor: Set<[UInt8]> = []
    private(set) var presentations: [Presentation] = []

    init(known: [[UInt8]]) { self.known = Set(known) }

    func wantsStepUp(credentialPublicKey: [UInt8]) -> Bool { stepUpFor.contains(credentialPublicKey) }

    func decide(_ presentation: Presentation) -> Decision {
        presentations.append(presentation)
        if stepUpFor.contains(presentation.credentialPublicKey) && presentation.accessDocuments.isEmpty {
            return .deny(.unknownCredential, detail: "no access document")
        }
        return known.contains(presentation.credentialPublicKey) ? .grant(credentialID: "test") : .deny(.unknownCredential, detail: "unknown key")
    }
}
