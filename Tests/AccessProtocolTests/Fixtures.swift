import ByteCore
import Codecs
import Crypto
import Foundation
import LockBenchTestSupport
import OfflineUnlock
@testable import AccessProtocol

/// Fixed keys, ids and times for protocol tests, and the real offline-unlock engine as decider.
enum Fixture {
    static func key(_ byte: UInt8) -> P256.Signing.PrivateKey { TestFixtures.key(byte) }
    static let readerKey = key(0x51)
    static let otherReaderKey = key(0x52)
    static let credentialKey = key(0x53)
    static let otherCredentialKey = key(0x54)
    static let issuerKey = key(0x55)
    static let otherIssuerKey = key(0x56)
    static let groupID = TestFixtures.groupID
    static let subID = TestFixtures.subID
    /// A Monday, 09:00 UTC.
    static let time = TestFixtures.monday

    static var identity: AccessProtocol.ReaderSigningIdentity { .init(signingKey: readerKey, groupID: groupID, subID: subID) }

    static func readerConfiguration(versions: [UInt16] = [ProtocolVersion.v1_0]) -> ReaderConfiguration {
        ReaderConfiguration(identity: identity, supportedVersions: versions)
    }

    /// The engine of a lock with this reader, trusting `issuerKey`, its clock trusted at `time`.
    static func engine(policy: LockPolicy = LockPolicy(), clock: TrustedClock = TrustedClock(trustedAt: time),
                       now: Date = time) -> OfflineUnlockEngine {
        let core = DecisionCore(reader: OfflineUnlock.ReaderIdentity(groupID: groupID, subID: subID), policy: policy,
                                trust: try! TrustStore(issuerPublicKeys: [issuerKey.publicBytes]))
        return OfflineUnlockEngine(core: core, state: EngineState(clock: clock), now: { now })
    }

    static func accessDocument(for key: P256.Signing.PrivateKey = credentialKey, id: String = "alice-1",
                               readers: [ReaderRule]? = nil, schedules: [WeeklySchedule] = [],
                               from: Date = time.addingTimeInterval(-3600), until: Date = time.addingTimeInterval(8 * 3600),
                               signed: Date? = nil, by issuer: P256.Signing.PrivateKey = issuerKey,
                               timeVerificationRequired: Bool = false) -> [UInt8] {
        TestFixtures.accessDocument(credentialPublicKey: key.publicBytes, id: Array(id.utf8), readers: readers,
                                    schedules: schedules, from: from, until: until, signed: signed, issuer: issuer,
                                    timeVerificationRequired: timeVerificationRequired)
    }

    static func revocationDocument(revoking key: P256.Signing.PrivateKey = credentialKey, order: UInt64 = 1) -> [UInt8] {
        let entry = try! RevocationEntry(publicKeyHash: RevocationEntry.hash(credentialPublicKey: key.publicBytes),
                                         expiry: time.addingTimeInterval(30 * 86_400))
        return TestFixtures.revocationDocument(order: order, entries: [entry], issued: time.addingTimeInterval(-60),
                                               expiry: time.addingTimeInterval(30 * 86_400), issuer: issuerKey)
    }

    static func credential(trusting key: P256.Signing.PrivateKey = readerKey, versions: [UInt16] = [ProtocolVersion.v1_0],
                           faults: CredentialFaults = [], accessDocuments: [[UInt8]]? = nil, revocationDocuments: [[UInt8]] = [],
                           random: RandomSource = SystemRandom()) -> CredentialSession {
        CredentialSession(configuration: CredentialConfiguration(
            signingKey: credentialKey, trustedReaders: [TrustedReader(groupID: groupID, publicKey: key.publicBytes)],
            accessDocuments: accessDocuments ?? [accessDocument()], revocationDocuments: revocationDocuments,
            versions: versions, faults: faults),
            random: random)
    }
}

/// Records what the engine was asked, passing everything through.
final class RecordingDecider: AccessDecider {
    let inner: AccessDecider
    private(set) var presentations: [Presentation] = []
    init(_ inner: AccessDecider) { self.inner = inner }
    func wantsStepUp(credentialPublicKey: [UInt8], timestamps: SignedTimestamps) -> Bool {
        inner.wantsStepUp(credentialPublicKey: credentialPublicKey, timestamps: timestamps)
    }
    func decide(_ presentation: Presentation) -> Decision {
        presentations.append(presentation)
        return inner.decide(presentation)
    }
}
