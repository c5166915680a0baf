import Codecs
import Crypto
import Foundation
import OfflineUnlock

/// The values engine, protocol and lock tests share: fixed keys from one repeated byte, the reader
/// group, the time every test runs at, and documents issued from them.
public enum TestFixtures {
    /// A Monday, 09:00 UTC.
    public static let monday = RFC3339.parse("2026-03-02T09:00:00Z")!
    public static let groupID = [UInt8](repeating: 0xA1, count: 16)
    public static let subID = [UInt8](repeating: 0xB1, count: 16)

    /// A P-256 signing key whose scalar is 32 × `byte` (fixed, so vectors and logs repeat).
    public static func key(_ byte: UInt8) -> P256.Signing.PrivateKey {
        try! Primitives.signingPrivateKey(raw: Array(repeating: byte, count: 32))
    }

    /// An access document for `credentialPublicKey`, valid from `from` to `until`, opening the
    /// readers of `readers` (default: the group `groupID`), signed by `issuer`.
    public static func accessDocument(credentialPublicKey: [UInt8], id: [UInt8], readers: [ReaderRule]? = nil,
                                      schedules: [WeeklySchedule] = [], from: Date, until: Date, signed: Date? = nil,
                                      issuer: P256.Signing.PrivateKey, validityIteration: Int? = nil,
                                      timeVerificationRequired: Bool = false) -> [UInt8] {
        let data = try! AccessData(id: id, readers: readers ?? [try! ReaderRule(groupID: groupID)], schedules: schedules)
        return try! AccessDocument.issue(access: data, credentialPublicKey: credentialPublicKey,
                                         validity: .init(signed: signed ?? from, validFrom: from, validUntil: until, validityIteration: validityIteration),
                                         issuerKey: issuer, timeVerificationRequired: timeVerificationRequired).encoded()
    }

    /// A whole revocation list (OVERWRITE) with `entries`, signed `order` seconds after `issued`
    /// (a lock applies an issuer's lists in the order they were signed), expiring at `expiry`,
    /// signed by `issuer`.
    public static func revocationDocument(order: UInt64, entries: [RevocationEntry], issued: Date, expiry: Date,
                                          issuer: P256.Signing.PrivateKey) -> [UInt8] {
        RevocationDocument.issue(revocation: RevocationData(changeMode: .overwrite, entries: entries), issued: issued.addingTimeInterval(TimeInterval(order)),
                                 expiry: expiry, issuerKey: issuer).encoded()
    }
}
