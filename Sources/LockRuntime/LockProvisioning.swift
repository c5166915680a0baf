import AccessProtocol
import ByteCore
import Codecs
import Crypto
import Foundation
import Lock
import OfflineUnlock

/// A lock provisioned from scratch in a directory — an issuer, the reader's identity (key, group,
/// sub id) and a lock configuration trusting that issuer — and the phones it can issue. What
/// `lockbench demo`, the runtime's tests and the NFC benchmark all need; every file is written
/// so the CLI can reuse it (`issuer.key.pem`, `issuer.pub.pem`, `reader.key.pem`, `lock.json`).
///
///     let lock = try LockProvisioning(directory: dir)
///     let service = try LockService(configuration: lock.configuration)
///     let phone = try lock.phone(id: "alice", validFor: 8 * 3600)
///     try reader.insert(phone.session)
public struct LockProvisioning {
    public let directory: URL
    public let issuer: P256.Signing.PrivateKey
    public let readerKey: P256.Signing.PrivateKey
    public let groupID: [UInt8]
    public let subID: [UInt8]
    public let configuration: LockConfiguration

    /// Writes the issuer, reader key and `lock.json` (state in `state/`) into `directory`.
    /// `clock`: "system" (running) or an RFC 3339 time the lock's clock starts frozen at.
    public init(directory: URL, model: String = "Schlage NDE", firmware: String = "02.12.72",
                clock: String = "system", policy: LockPolicy = LockPolicy()) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        issuer = P256.Signing.PrivateKey()
        readerKey = P256.Signing.PrivateKey()
        groupID = Self.random(16)
        subID = Self.random(16)
        configuration = LockConfiguration(
            model: model, firmware: firmware,
            reader: .init(signingKey: "reader.key.pem", groupID: groupID.hex, subID: subID.hex),
            trustedIssuers: ["issuer.pub.pem"], policy: policy, stateDirectory: "state", clock: clock,
            baseDirectory: directory.path)
        try writePrivateKey("issuer.key.pem", issuer)
        try write("issuer.pub.pem", issuer.publicKey.pemRepresentation)
        try writePrivateKey("reader.key.pem", readerKey)
        try write("reader.pub.pem", readerKey.publicKey.pemRepresentation)
        try write("lock.json", configuration.encoded())
    }

    /// The reader as a credential trusts it: its group id and public key.
    public var trustedReader: TrustedReader {
        TrustedReader(groupID: groupID, publicKey: Primitives.point(of: readerKey))
    }

    /// A rule opening every reader of this lock's group.
    public var readerRule: ReaderRule { try! ReaderRule(groupID: groupID) }

    /// An access document for `credentialKey`; by default signed by this lock's issuer, opening
    /// this lock's group at any time.
    public func accessDocument(id: String, credentialKey: P256.Signing.PrivateKey, validFrom: Date, validUntil: Date,
                               readers: [ReaderRule]? = nil, schedules: [WeeklySchedule] = [],
                               issuer: P256.Signing.PrivateKey? = nil) throws -> AccessDocument {
        let access = try AccessData(id: Array(id.utf8.prefix(16)), readers: readers ?? [readerRule], schedules: schedules)
        return try AccessDocument.issue(access: access, credentialPublicKey: Primitives.point(of: credentialKey),
                                        validity: .init(signed: validFrom, validFrom: validFrom, validUntil: validUntil),
                                        issuerKey: issuer ?? self.issuer)
    }

    /// A revocation list (OVERWRITE) of `documents` (by credential key hash and document id),
    /// signed at `issued` and valid for a day.
    public func revocation(of documents: [(key: P256.Signing.PrivateKey, document: AccessDocument)],
                           issued: Date = Date()) throws -> RevocationDocument {
        let entries = try documents.map { d in
            try RevocationEntry(publicKeyHash: RevocationEntry.hash(credentialPublicKey: Primitives.point(of: d.key)),
                                documentID: d.document.id, expiry: d.document.validity.validUntil)
        }
        return RevocationDocument.issue(revocation: RevocationData(changeMode: .overwrite, entries: entries), issued: issued,
                                        expiry: issued.addingTimeInterval(24 * 3600), issuerKey: issuer)
    }

    /// A software phone: its key, its access document (nil when it carries none) and the
    /// credential session that answers a reader's APDUs.
    public struct Phone: Sendable {
        public let key: P256.Signing.PrivateKey
        public let document: AccessDocument?
        public let session: CredentialSession
    }

    /// A phone holding one access document valid from `validFrom` (default: 10 minutes ago) for
    /// `validFor` seconds, trusting this lock's reader unless `trustedReaders` says otherwise.
    /// `timestamps`: its AUTH1 answer carries its documents' signed times (`91`/`92`) instead of zeros.
    public func phone(id: String, validFrom: Date? = nil, validFor: TimeInterval = 8 * 3600,
                      readers: [ReaderRule]? = nil, schedules: [WeeklySchedule] = [],
                      issuer: P256.Signing.PrivateKey? = nil, revocations: [RevocationDocument] = [],
                      trustedReaders: [TrustedReader]? = nil, faults: CredentialFaults = [],
                      withDocument: Bool = true, timestamps: Bool = false) throws -> Phone {
        let key = P256.Signing.PrivateKey()
        let from = validFrom ?? Date().addingTimeInterval(-600)
        let document = withDocument
            ? try accessDocument(id: id, credentialKey: key, validFrom: from, validUntil: from.addingTimeInterval(validFor),
                                 readers: readers, schedules: schedules, issuer: issuer)
            : nil
        let session = SoftwarePhone.session(key: key, access: document.map { [$0.encoded()] } ?? [],
                                            revocation: revocations.map { $0.encoded() },
                                            trusting: trustedReaders ?? [trustedReader], faults: faults,
                                            documentTimestamps: timestamps)
        return Phone(key: key, document: document, session: session)
    }

    public func write(_ name: String, _ text: String) throws { try write(name, Data(text.utf8)) }

    public func write(_ name: String, _ data: Data) throws {
        try data.write(to: directory.appendingPathComponent(name), options: .atomic)
    }

    /// A private key file, mode 0600 from its first byte (`PrivateKeyFile`).
    public func writePrivateKey(_ name: String, _ key: P256.Signing.PrivateKey) throws {
        try PrivateKeyFile.write(key, to: directory.appendingPathComponent(name).path, overwrite: true)
    }

    static func random(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255) } }
}
