import Codecs

/// Whose behaviour a software phone copies where the public facts leave a choice.
public enum PhoneProfile: String, Sendable, CaseIterable {
    /// LockBench's own phone: `91`/`92` in the AUTH1 answer, `7F66` sizes in the FCI, `6A88` for
    /// a version it did not list, a step-up SELECT answered when it follows AUTH1.
    case lockbench
    /// The public reference device as it was observed (ALIRO-FACTS "What the public reference user
    /// device actually sends"; aliro-actuator `user_device.py`): no `91`/`92`, no `7F66`, `6985`
    /// for an unsupported version, strict Le, ENVELOPE without a step-up SELECT (which it answers
    /// `6D00`).
    case reference

    /// The status word for an AUTH0 naming a version the phone did not list.
    var unsupportedVersion: StatusWord { self == .reference ? .conditionsNotSatisfied : .referencedDataNotFound }
    /// Whether the FCI carries `7F66` (maximum command and response sizes).
    var announcesSizes: Bool { self == .lockbench }
    /// Whether the phone knows the step-up AID at all.
    var knowsStepUpSelect: Bool { self == .lockbench }

    /// `configuration` with what this profile fixes: the timestamps it sends, strict Le, the
    /// step-up SELECT policy.
    public func apply(to configuration: inout CredentialConfiguration) {
        configuration.profile = self
        guard self == .reference else { return }
        configuration.credentialTimestamp = nil
        configuration.revocationTimestamp = nil
        configuration.strictLe = true
        configuration.stepUpSelect = .optional
    }
}
