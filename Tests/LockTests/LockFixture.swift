import ByteCore
import Codecs
import Crypto
import Foundation
@testable import Lock
import OfflineUnlock

/// A lock built from real files (configuration, reader key, issuer key) with a frozen clock, and
/// the documents and presentations its tests hand it.
struct LockFixture {
    let t0 = RFC3339.parse("2026-03-02T09:00:00Z")!
    let issuer = P256.Signing.PrivateKey()
    let credential = P256.Signing.PrivateKey()
    let group = [UInt8](repeating: 0xA1, count: 16), sub = [UInt8](repeating: 0xB1, count: 16)

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
        try AccessDocument.issue(access: AccessData(id: [0xD1], readers: [ReaderRule(groupID: group)]),
                                 credentialPublicKey: Primitives.point(of: credential),
                                 validity: .init(signed: t0.addingTimeInterval(-60), validFrom: t0.addingTimeInterval(-60), validUntil: t0.addingTimeInterval(until)),
                                 issuerKey: issuer).encoded()
    }

    func presentation(_ docs: [[UInt8]] = []) -> Presentation {
        Presentation(credentialPublicKey: Primitives.point(of: credential), transactionID: Primitives.randomBytes(16),
                     interface: .nfc, protocolVersion: 0x0100, fast: false, accessDocuments: docs)
    }
}
