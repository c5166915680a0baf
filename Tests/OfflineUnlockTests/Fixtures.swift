import ByteCore
import Codecs
import Crypto
import Foundation
import Synchronization
import LockBenchTestSupport
@testable import OfflineUnlock
import XCTest

/// Fixed keys and times for engine tests.
struct Fixture {
    static let t0 = TestFixtures.monday
    let issuer = TestFixtures.key(0x11)
    let otherIssuer = TestFixtures.key(0x22)
    let credential = TestFixtures.key(0x33)
    let otherCredential = TestFixtures.key(0x44)
    let reader = ReaderIdentity(groupID: TestFixtures.groupID, subID: TestFixtures.subID)
    var policy = LockPolicy()

    var credentialKey: [UInt8] { Primitives.point(of: credential) }
    var issuerPoint: [UInt8] { Primitives.point(of: issuer) }

    func trust() -> TrustStore { try! TrustStore(issuerPublicKeys: [issuerPoint]) }

    func core() -> DecisionCore { DecisionCore(reader: reader, policy: policy, trust: trust()) }

    func accessDocument(key: [UInt8]? = nil, id: [UInt8] = [0xD0, 0x01], readers: [ReaderRule]? = nil,
                        schedules: [WeeklySchedule] = [], from: Date = Fixture.t0.addingTimeInterval(-3600),
                        until: Date = Fixture.t0.addingTimeInterval(8 * 3600), signed: Date? = nil,
                        by issuerKey: P256.Signing.PrivateKey? = nil, iteration: Int? = nil, timeVerificationRequired: Bool = false) -> [UInt8] {
        TestFixtures.accessDocument(credentialPublicKey: key ?? credentialKey, id: id, readers: readers ?? [try! ReaderRule(groupID: reader.groupID)],
                                    schedules: schedules, from: from, until: until, signed: signed, issuer: issuerKey ?? issuer,
                                    validityIteration: iteration, timeVerificationRequired: timeVerificationRequired)
    }

    func revocationDocument(order: UInt64, entries: [RevocationEntry], issued: Date = Fixture.t0.addingTimeInterval(-60),
                            expiry: Date = Fixture.t0.addingTimeInterval(30 * 86_400), by issuerKey: P256.Signing.PrivateKey? = nil) -> [UInt8] {
        TestFixtures.revocationDocument(order: order, entries: entries, issued: issued, expiry: expiry, issuer: issuerKey ?? issuer)
    }

    static let tidCounter = Atomic<UInt8>(0)
    func presentation(key: [UInt8]? = nil, access: [[UInt8]] = [], revocation: [[UInt8]] = [], version: UInt16 = 0x0100,
                      tid: [UInt8]? = nil) -> Presentation {
        let n = Fixture.tidCounter.wrappingAdd(1, ordering: .relaxed).newValue
        return Presentation(credentialPublicKey: key ?? credentialKey,
                            transactionID: tid ?? (Primitives.randomBytes(15) + [n]),
                            interface: .socket, protocolVersion: version, fast: false,
                            accessDocuments: access, revocationDocuments: revocation)
    }
}
