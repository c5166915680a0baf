import ByteCore
import Codecs
import Crypto
import Foundation
import OfflineUnlock
@testable import AccessProtocol

/// Fixed keys and ids for protocol tests.
enum Fixture {
    static let readerKey = try! P256.Signing.PrivateKey(rawRepresentation: Hex.decode("1111111111111111111111111111111111111111111111111111111111111111")!)
    static let otherReaderKey = try! P256.Signing.PrivateKey(rawRepresentation: Hex.decode("2222222222222222222222222222222222222222222222222222222222222222")!)
    static let credentialKey = try! P256.Signing.PrivateKey(rawRepresentation: Hex.decode("3333333333333333333333333333333333333333333333333333333333333333")!)
    static let groupID = Hex.decode("00112233445566778899aabbccddeeff")!
    static let subID = Hex.decode("0102030405060708090a0b0c0d0e0f10")!
    static let time = Date(timeIntervalSince1970: 1_798_000_000)

    static var identity: AccessProtocol.ReaderIdentity { AccessProtocol.ReaderIdentity(signingKey: readerKey, groupID: groupID, subID: subID) }

    static func readerConfiguration(versions: [UInt16] = [ProtocolVersion.v1_0]) -> ReaderConfiguration {
        ReaderConfiguration(identity: identity, supportedVersions: versions)
    }

    static func credential(trusting key: P256.Signing.PrivateKey = readerKey, versions: [UInt16] = [ProtocolVersion.v1_0],
                           faults: CredentialFaults = [], accessDocuments: [[UInt8]] = [], revocationDocuments: [[UInt8]] = [],
                           random: RandomSource = SystemRandom()) -> CredentialSession {
        CredentialSession(configuration: CredentialConfiguration(
            signingKey: credentialKey, trustedReaders: [TrustedReader(groupID: groupID, publicKey: key.publicBytes)],
            accessDocuments: accessDocuments, revocationDocuments: revocationDocuments, versions: versions, faults: faults),
            random: random)
    }
}
