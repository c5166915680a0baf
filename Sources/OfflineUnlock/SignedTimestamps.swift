import Foundation

/// What a credential says, in its AUTH1 answer (`91`, `92`) or FAST cryptogram, about the
/// documents it carries: the signed time of its access document and of its revocation document.
/// Unauthenticated hints — a credential can claim anything — so they only ever make the lock ask
/// for the documents (step-up), whose signatures then decide; they never change a decision.
public struct SignedTimestamps: Sendable, Equatable {
    /// nil: not sent, or zeros (the credential has none). A timestamp that is present but not a
    /// time counts as newer than anything (the lock cannot tell, so it asks).
    public var credential: Date?
    public var revocation: Date?

    public static let none = SignedTimestamps()

    public init(credential: Date? = nil, revocation: Date? = nil) {
        self.credential = credential
        self.revocation = revocation
    }
}
