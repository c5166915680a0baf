import ByteCore
import Codecs
import Crypto
import Foundation
import LockBenchTestSupport
@testable import Lock
import OfflineUnlock

/// A lock built from real files (configuration, reader key, issuer key) with a frozen clock, and
/// the documents and presentations its tests hand it.
struct LockFixture {
    let t0 = TestFixtures.monday
    let issuer = P256.Signing.PrivateKey()
    let credential = P256.Signing.PrivateKey()
    let group = TestFixtures.groupID, sub = TestFixtures.subID

    func makeConfig(_ dir: String, policy: LockPolicy = LockPolicy()) throws -> String {
        let reader = P256.Signing.PrivateKey()
        try PrivateKeyFile.write(reader, to: dir + "/reader.key.pem", overwrite: true)
        try issuer.publicKey.pemRepresentation.write(toFile: dir + "/issuer.pub.pem", atomically: true, encoding: .utf8)
        let config = LockConfiguration(model: "NDE", firmware: "03.20.00",
                                       reader: .init(signingKey: "reader.key.pem", groupID: Hex.encode(group), subID: Hex.encode(sub)),
                                       trustedIssuers: ["issuer.pub.pem"], policy: policy, stateDirectory: "state",
                                       clock: RFC3339.format(t0))
        let path = dir + "/lock.json"
        try config.encoded().write(to: URL(fileURLWithPath: path))
        return path
    }

    func document(until: TimeInterval = 8 * 3600) throws -> [UInt8] {
        TestFixtures.accessDocument(credentialPublicKey: Primitives.point(of: credential), id: [0xD1],
                                    from: t0.addingTimeInterval(-60), until: t0.addingTimeInterval(until), issuer: issuer)
    }

    func presentation(_ docs: [[UInt8]] = [], revocation: [[UInt8]] = []) -> Presentation {
        var p = Presentation(credentialPublicKey: Primitives.point(of: credential), transactionID: Primitives.randomBytes(16),
                             interface: .nfc, protocolVersion: 0x0100, fast: false, accessDocuments: docs)
        p.revocationDocuments = revocation
        return p
    }
}
