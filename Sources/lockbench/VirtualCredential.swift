import AccessProtocol
import ArgumentParser
import ByteCore
import Codecs
import Crypto
import Foundation
import Lock
import OfflineUnlock

/// The software phone `nfc virtual-reader` places in its field: a `CredentialSession` with a key,
/// access and revocation documents, and the reader it trusts.
struct VirtualCredentialOptions: ParsableArguments {
    @Option(name: .customLong("credential-key"), help: ArgumentHelp("Insert a phone credential with this private key (PEM) instead of a plain test card.", valueName: "key.pem"))
    var credentialKey: String?

    @Option(name: .customLong("document"), help: ArgumentHelp("An access or revocation document (CBOR) the phone carries; repeatable.", valueName: "doc.cbor"))
    var documents: [String] = []

    @Option(name: .customLong("trust-reader"), help: ArgumentHelp("The reader the phone trusts: its key, public or private PEM.", valueName: "reader.pem"))
    var trustReader: String?

    @Option(name: .customLong("reader-group"), help: ArgumentHelp("The trusted reader's group id, 32 hex digits.", valueName: "hex"))
    var readerGroup: String?

    @Option(name: .customLong("reader-identity"), help: ArgumentHelp("Trust this reader identity (from `key reader`: its public key and group), instead of --trust-reader/--reader-group.", valueName: "file"))
    var readerIdentity: String?

    @Option(name: .customLong("lock-config"), help: ArgumentHelp("Trust the reader of this lock configuration (its key and group), instead of --trust-reader/--reader-group.", valueName: "lock.json"))
    var lockConfig: String?

    @Option(name: .customLong("fault"), help: ArgumentHelp("Make the phone misbehave: \(CredentialFaults.names.map(\.0).joined(separator: ", ")); repeatable.", valueName: "name"))
    var faults: [String] = []

    /// Whether a phone credential was asked for (else `insert` places a plain test card).
    var isGiven: Bool { credentialKey != nil }

    func validate() throws {
        guard credentialKey != nil else {
            if !documents.isEmpty || trustReader != nil || readerGroup != nil || readerIdentity != nil || lockConfig != nil || !faults.isEmpty {
                throw ValidationError("--document, --trust-reader, --reader-group, --reader-identity, --lock-config and --fault describe a phone credential: give its --credential-key too")
            }
            return
        }
        let sources = [lockConfig != nil, readerIdentity != nil, trustReader != nil || readerGroup != nil].filter { $0 }.count
        if sources > 1 {
            throw ValidationError("give one of --lock-config, --reader-identity, or --trust-reader with --reader-group")
        }
        if sources == 0 || (lockConfig == nil && readerIdentity == nil && (trustReader == nil || readerGroup == nil)) {
            throw ValidationError("the phone must trust the lock's reader: give --lock-config lock.json, --reader-identity READER.reader.json, or --trust-reader READER.pem with --reader-group HEX")
        }
        if let readerGroup, Hex.decode(readerGroup)?.count != 16 {
            throw ValidationError("--reader-group must be 16 bytes of hex (32 digits), as in the lock configuration's reader.groupID")
        }
        for name in faults where !CredentialFaults.names.contains(where: { $0.0 == name }) {
            throw ValidationError("unknown --fault \(name); one of \(CredentialFaults.names.map(\.0).joined(separator: ", "))")
        }
    }

    /// The trusted reader, from the lock configuration or the key and group given.
    func trustedReader() throws -> TrustedReader {
        if let lockConfig {
            let config = try LockConfigOption.load(lockConfig)
            do {
                return TrustedReader(groupID: try config.readerIdentity().groupID,
                                     publicKey: Primitives.point(of: try config.readerSigningKey()))
            } catch {
                throw UserError(message: "\(lockConfig): \(error.description)")
            }
        }
        if let readerIdentity {
            let (file, directory) = try ReaderIdentityFile.load(readerIdentity)
            let key = file.publicKey.hasPrefix("/") ? file.publicKey : directory + "/" + file.publicKey
            return TrustedReader(groupID: Hex.decode(file.groupID) ?? [], publicKey: try KeyFiles.publicKey(key, what: "reader public key"))
        }
        return TrustedReader(groupID: Hex.decode(readerGroup ?? "") ?? [],
                             publicKey: try KeyFiles.publicKey(trustReader ?? "", what: "trusted reader key"))
    }

    /// The phone; nil when no --credential-key was given.
    func makeSession() throws -> CredentialSession? {
        guard let credentialKey else { return nil }
        let fault = faults.reduce(into: CredentialFaults()) { set, name in
            if let f = CredentialFaults.names.first(where: { $0.0 == name })?.1 { set.formUnion(f) }
        }
        return try SoftwarePhone.make(key: credentialKey, documents: documents, trusting: [try trustedReader()], faults: fault)
    }
}

/// A software phone from files, for `nfc virtual-reader` and the `lock run` tap console.
enum SoftwarePhone {
    static func make(key: String, documents: [String], trusting readers: [TrustedReader],
                     faults: CredentialFaults = []) throws -> CredentialSession {
        let signingKey = try KeyFiles.privateKey(key, what: "credential key")
        var access = [[UInt8]](), revocation = [[UInt8]]()
        for path in documents {
            let bytes = try KeyFiles.readBytes(path, what: "document")
            if (try? RevocationDocument.decode(bytes)) != nil { revocation.append(bytes) } else { access.append(bytes) }
        }
        return CredentialSession(configuration: CredentialConfiguration(
            signingKey: signingKey, trustedReaders: readers, accessDocuments: access, revocationDocuments: revocation,
            faults: faults))
    }

    /// `credential 04ab12…: 1 access and 0 revocation documents, trusts reader group 0011…`
    static func summary(_ session: CredentialSession) -> String {
        let c = session.configuration
        let faults = CredentialFaults.names.filter { c.faults.contains($0.1) }.map(\.0)
        return "credential: key \(session.publicKey.hex.prefix(16))…, \(c.accessDocuments.count) access and "
            + "\(c.revocationDocuments.count) revocation documents, trusts reader group "
            + c.trustedReaders.map { $0.groupID.hex }.joined(separator: ",")
            + (faults.isEmpty ? "" : "; faults: \(faults.joined(separator: ", "))")
    }
}
