import AccessProtocol
import ByteCore
import Codecs
import Crypto
import Foundation
import Lock
import OfflineUnlock

/// The one place that builds software phones: from files (the phone commands, the `lock run` tap
/// console) and from keys in memory (`LockProvisioning`, the demo). Either way a phone is a
/// `CredentialSession` that trusts the readers it was given.
public enum SoftwarePhone {
    /// A phone from its key and documents, sorted into access and revocation documents.
    public static func session(key: P256.Signing.PrivateKey, access: [[UInt8]] = [], revocation: [[UInt8]] = [],
                               trusting readers: [TrustedReader], faults: CredentialFaults = [],
                               interface: RadioInterface = .nfc, versions: [UInt16] = [ProtocolVersion.v1_0],
                               stepUpSelect: StepUpSelectPolicy = .optional, mailbox: Mailbox? = nil,
                               documentTimestamps: Bool = false, profile: PhoneProfile = .lockbench) -> CredentialSession {
        var configuration = CredentialConfiguration(
            signingKey: key, trustedReaders: readers, accessDocuments: access, revocationDocuments: revocation,
            versions: versions, interface: interface, faults: faults, stepUpSelect: stepUpSelect, mailbox: mailbox)
        profile.apply(to: &configuration)
        // `documentTimestamps`: AUTH1 carries the documents' signed times (`91`/`92`) instead of zeros.
        return CredentialSession(configuration: documentTimestamps ? configuration.withDocumentTimestamps() : configuration)
    }

    /// A phone from files: its key (PEM PKCS#8, owner-only) and its documents (CBOR; each sorted by
    /// its docType). Every problem is a `UserError` naming the file.
    public static func make(key: String, documents: [String], trusting readers: [TrustedReader], faults: CredentialFaults = [],
                            interface: RadioInterface = .nfc, versions: [UInt16] = [ProtocolVersion.v1_0],
                            stepUpSelect: StepUpSelectPolicy = .optional, mailbox: Mailbox? = nil,
                            documentTimestamps: Bool = false, profile: PhoneProfile = .lockbench) throws -> CredentialSession {
        let signingKey = try KeyFiles.privateKey(key, what: "credential key")
        var access = [[UInt8]](), revocation = [[UInt8]]()
        for path in documents {
            let bytes = try KeyFiles.readBytes(path, what: "document")
            switch DeviceResponse.docType(of: bytes) {
            case DocType.access?: access.append(bytes)
            case DocType.revocation?: revocation.append(bytes)
            default: throw UserError(message: "\(path) is not an access or revocation document (CBOR with docType \"aliro-a\" or \"aliro-r\")")
            }
        }
        return session(key: signingKey, access: access, revocation: revocation, trusting: readers, faults: faults,
                       interface: interface, versions: versions, stepUpSelect: stepUpSelect, mailbox: mailbox,
                       documentTimestamps: documentTimestamps, profile: profile)
    }

    /// The mailbox held in `path`; what a lock writes into it is saved back (atomically).
    public static func mailbox(_ path: String) throws -> Mailbox {
        let bytes = try KeyFiles.readBytes(path, what: "mailbox")
        let mailbox: Mailbox
        do { mailbox = try Mailbox(bytes) } catch { throw UserError(message: "--mailbox \(path): \(error.reason)") }
        mailbox.onChange = { content in
            do { try Data(content).write(to: URL(fileURLWithPath: path), options: .atomic) } catch {
                FileHandle.standardError.write(Data("lockbench: cannot save the mailbox to \(path): \(error)\n".utf8))
            }
        }
        return mailbox
    }

    /// A reader identity file, a lock configuration, or a reader key PEM (with `group`) → the
    /// reader's group id and public key.
    public static func trustedReader(_ path: String, group: String?) throws -> TrustedReader {
        if let (identity, dir) = try? ReaderIdentityFile.load(path) {
            let key = try KeyFiles.publicKey(identity.publicKey.hasPrefix("/") ? identity.publicKey : dir + "/" + identity.publicKey,
                                             what: "reader public key")
            return TrustedReader(groupID: try KeyFiles.id16(identity.groupID, flag: "\(path) groupID"), publicKey: key)
        }
        if let config = try? LockConfiguration.load(path: path) {
            do {
                return try trustedReader(config)
            } catch {
                throw UserError(message: "\(path): \(error.description)")
            }
        }
        if let text = try? KeyFiles.readText(path, what: "reader key"), text.contains("-----BEGIN") {
            guard let group = group.flatMap(Hex.decode), group.count == 16 else {
                throw UserError(message: "\(path) is a key: give the reader's group id too (--reader-group HEX)")
            }
            return TrustedReader(groupID: group, publicKey: try KeyFiles.publicKey(path, what: "reader key"))
        }
        throw UserError(message: "--trust-reader \(path): neither a reader identity (NAME.reader.json), a lock configuration, nor a reader key PEM")
    }

    /// The group id and (when the file names one) sub id of a reader the phone trusts: a reader
    /// identity or a lock configuration gives both, a key PEM with `group` the group only; nil
    /// when the file says neither (a BLE phone then connects to any lock).
    public static func readerIDs(_ path: String, group: String?) throws -> (group: [UInt8], sub: [UInt8]?)? {
        if let (identity, _) = try? ReaderIdentityFile.load(path) {
            return (try KeyFiles.id16(identity.groupID, flag: "\(path) groupID"), try KeyFiles.id16(identity.subID, flag: "\(path) subID"))
        }
        if let config = try? LockConfiguration.load(path: path), let ids = try? config.readerIdentity() {
            return (ids.groupID, ids.subID)
        }
        if let group = group.flatMap(Hex.decode), group.count == 16 { return (group, nil) }
        return nil
    }

    /// `credential: key 04ab12…, 1 access and 0 revocation documents, trusts reader group 0011…`
    public static func summary(_ session: CredentialSession) -> String {
        let c = session.configuration
        let faults = CredentialFaults.names.filter { c.faults.contains($0.1) }.map(\.0)
        let extras = (c.stepUpSelect == .required ? ", step-up SELECT required" : "")
            + (c.mailbox.map { ", mailbox of \($0.bytes.count) bytes" } ?? "")
        return "credential: key \(session.publicKey.hex.prefix(16))…, \(c.accessDocuments.count) access and "
            + "\(c.revocationDocuments.count) revocation documents, trusts reader group "
            + c.trustedReaders.map { $0.groupID.hex }.joined(separator: ",") + extras
            + (faults.isEmpty ? "" : "; faults: \(faults.joined(separator: ", "))")
    }
}

extension SoftwarePhone {
    /// A lock's reader as a phone trusts it: its group id and public key, or — when the lock shows
    /// a reader certificate — the group id and the certificate's issuer CA.
    public static func trustedReader(_ config: LockConfiguration) throws(LockError) -> TrustedReader {
        let group = try config.readerIdentity().groupID
        if let presentation = try config.readerCertificate() {
            return TrustedReader(groupID: group, publicKey: presentation.issuerPublicKey, issuerCA: true)
        }
        return TrustedReader(groupID: group, publicKey: Primitives.point(of: try config.readerSigningKey()))
    }
}

extension LockService {
    /// This lock's reader as a phone trusts it (`SoftwarePhone.trustedReader`).
    public var trustedReader: TrustedReader {
        get throws { try SoftwarePhone.trustedReader(configuration) }
    }

    /// A software phone (key and documents from files) that trusts this lock's reader: the
    /// `lock run` console's `tap KEY.pem DOC.cbor…`.
    public func phone(key: String, documents: [String]) throws -> CredentialSession {
        try SoftwarePhone.make(key: key, documents: documents, trusting: [try trustedReader])
    }
}
