import ByteCore
import Codecs
import Crypto
import Foundation
@testable import OfflineUnlock
import XCTest

/// Fixed keys and times for engine tests.
struct Fixture {
    static let t0 = RFC3339.parse("2026-03-02T09:00:00Z")!   // a Monday
    let issuer = try! Primitives.signingPrivateKey(raw: Array(repeating: 0x11, count: 32))
    let otherIssuer = try! Primitives.signingPrivateKey(raw: Array(repeating: 0x22, count: 32))
    let credential = try! Primitives.signingPrivateKey(raw: Array(repeating: 0x33, count: 32))
    let otherCredential = try! Primitives.signingPrivateKey(raw: Array(repeating: 0x44, count: 32))
    let reader = ReaderIdentity(groupID: Array(repeating: 0xA1, count: 16), subID: Array(repeating: 0xB1, count: 16))
    var policy = LockPolicy()

    var credentialKey: [UInt8] { Primitives.point(of: credential) }
    var issuerPoint: [UInt8] { Primitives.point(of: issuer) }

    func trust() -> TrustStore { try! TrustStore(issuerPublicKeys: [issuerPoint]) }

    func core() -> DecisionCore { DecisionCore(reader: reader, policy: policy, trust: trust()) }

    func accessDocument(key: [UInt8]? = nil, id: [UInt8] = [0xD0, 0x01], readers: [ReaderRule]? = nil,
                        schedules: [WeeklySchedule] = [], from: Date = Fixture.t0.addingTimeInterval(-3600),
                        until: Date = Fixture.t0.addingTimeInterval(8 * 3600), signed: Date? = nil,
                        by issuerKey: P256.Signing.PrivateKey? = nil) -> [UInt8] {
        let rules = readers ?? [try! ReaderRule(groupID: reader.groupID)]
        let data = try! AccessData(id: id, readers: rules, schedules: schedules)
        return try! AccessDocument.issue(access: data, credentialPublicKey: key ?? credentialKey,
                                         validity: .init(signed: signed ?? from, validFrom: from, validUntil: until),
                                         issuerKey: issuerKey ?? issuer).encoded()
    }

    func revocationDocument(serial: UInt64, entries: [RevocationEntry], issued: Date = Fixture.t0.addingTimeInterval(-60),
                            expiry: Date = Fixture.t0.addingTimeInterval(30 * 86_400), by issuerKey: P256.Signing.PrivateKey? = nil) -> [UInt8] {
        RevocationDocument.issue(revocation: RevocationData(serial: serial, entries: entries), issued: issued,
                                 expiry: expiry, issuerKey: issuerKey ?? issuer).encoded()
    }

    static var tidCounter: UInt8 = 0
    func presentation(key: [UInt8]? = nil, access: [[UInt8]] = [], revocation: [[UInt8]] = [], version: UInt16 = 0x0100,
                      tid: [UInt8]? = nil) -> Presentation {
        Fixture.tidCounter &+= 1
        return Presentation(credentialPublicKey: key ?? credentialKey,
                            transactionID: tid ?? (Primitives.randomBytes(15) + [Fixture.tidCounter]),
                            interface: .socket, protocolVersion: version, fast: false,
                            accessDocuments: access, revocationDocuments: revocation)
    }
}
