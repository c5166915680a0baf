import AccessProtocol
import ArgumentParser
import ByteCore
import Codecs
import Crypto
import Foundation
import Lock
import OfflineUnlock

/// A software phone from files, the same flags wherever a phone runs: `credential serve`
/// (socket), `nfc virtual-reader` (NFC) and `ble phone` (BLE).
struct PhoneOptions: ParsableArguments {
    @Option(name: [.customLong("key"), .customLong("credential-key")],
            help: ArgumentHelp("The phone's private key (PEM PKCS#8, from `lockbench key credential`).", valueName: "key.pem"))
    var key: String?

    @Option(name: [.customLong("document"), .customLong("documents")], parsing: .upToNextOption,
            help: ArgumentHelp("Access and revocation documents (CBOR) the phone carries; repeatable.", valueName: "doc.cbor"))
    var documents: [String] = []

    @Option(name: [.customLong("trust-reader"), .customLong("reader-identity"), .customLong("lock-config")], parsing: .upToNextOption,
            help: ArgumentHelp("The reader the phone trusts: a reader identity (NAME.reader.json), a lock configuration, or the reader's public key PEM with --reader-group; repeatable.", valueName: "file"))
    var trustReader: [String] = []

    @Option(name: .customLong("reader-group"), help: ArgumentHelp("With a reader key PEM: the reader's group id, 32 hex digits.", valueName: "hex"))
    var readerGroup: String?

    @Option(name: .customLong("fault"), help: ArgumentHelp("Misbehave on purpose, to test a lock's denials (repeatable): \(CredentialFaults.names.map(\.0).joined(separator: ", ")).", valueName: "name"))
    var faults: [String] = []

    @Option(name: .customLong("step-up-select"),
            help: ArgumentHelp("Whether the phone needs the step-up SELECT before ENVELOPE. 'optional' (the default, as the public reference device) leaves bit 2 of the AUTH1 signaling bitmap clear and accepts ENVELOPE with or without the SELECT; 'required' sets bit 2 and refuses ENVELOPE without it (6985).", valueName: "required|optional"))
    var stepUpSelect: String = StepUpSelectPolicy.optional.rawValue

    @Option(name: .customLong("mailbox"),
            help: ArgumentHelp("A file holding the phone's mailbox (its bytes, at most 65536). The lock reads and writes it in EXCHANGE when its configuration lists mailbox operations; what the lock writes is saved back to the file.", valueName: "file"))
    var mailbox: String?

    /// Whether a phone was described (some commands fall back to a test card without one).
    var isGiven: Bool { key != nil }

    func validate() throws {
        guard StepUpSelectPolicy(rawValue: stepUpSelect) != nil else {
            throw ValidationError("--step-up-select must be 'required' or 'optional', got '\(stepUpSelect)'")
        }
        guard key != nil else {
            if !documents.isEmpty || !trustReader.isEmpty || readerGroup != nil || !faults.isEmpty || mailbox != nil
                || stepUpSelect != StepUpSelectPolicy.optional.rawValue {
                throw ValidationError("--document, --trust-reader, --reader-group, --fault, --mailbox and --step-up-select describe a phone: give its --key too")
            }
            return
        }
        guard !trustReader.isEmpty else {
            throw ValidationError("the phone must trust the lock's reader: --trust-reader NAME.reader.json (or the lock.json, or the reader's key PEM with --reader-group HEX)")
        }
        if let readerGroup, Hex.decode(readerGroup)?.count != 16 {
            throw ValidationError("--reader-group must be 16 bytes of hex (32 digits), as in the lock configuration's reader.groupID")
        }
        for name in faults where !CredentialFaults.names.contains(where: { $0.0 == name }) {
            throw ValidationError("unknown --fault \(name); one of \(CredentialFaults.names.map(\.0).joined(separator: ", "))")
        }
    }

    /// Every reader the phone trusts.
    func trustedReaders() throws -> [TrustedReader] {
        try trustReader.map { path in try SoftwarePhone.trustedReader(path, group: readerGroup) }
    }

    var faultSet: CredentialFaults {
        faults.reduce(into: CredentialFaults()) { set, name in
            if let f = CredentialFaults.names.first(where: { $0.0 == name })?.1 { set.formUnion(f) }
        }
    }

    /// The phone; nil when no --key was given.
    func makeSession(interface: RadioInterface = .nfc, versions: [UInt16] = [ProtocolVersion.v1_0]) throws -> CredentialSession? {
        guard let key else { return nil }
        return try SoftwarePhone.make(key: key, documents: documents, trusting: try trustedReaders(), faults: faultSet,
                                      interface: interface, versions: versions,
                                      stepUpSelect: StepUpSelectPolicy(rawValue: stepUpSelect) ?? .optional,
                                      mailbox: try mailbox.map(SoftwarePhone.mailbox))
    }
}

/// A software phone from files, for the phone commands and the `lock run` tap console.
enum SoftwarePhone {
    static func make(key: String, documents: [String], trusting readers: [TrustedReader], faults: CredentialFaults = [],
                     interface: RadioInterface = .nfc, versions: [UInt16] = [ProtocolVersion.v1_0],
                     stepUpSelect: StepUpSelectPolicy = .optional, mailbox: Mailbox? = nil) throws -> CredentialSession {
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
        return CredentialSession(configuration: CredentialConfiguration(
            signingKey: signingKey, trustedReaders: readers, accessDocuments: access, revocationDocuments: revocation,
            versions: versions, interface: interface, faults: faults, stepUpSelect: stepUpSelect, mailbox: mailbox))
    }

    /// The mailbox held in `path`; what a lock writes into it is saved back (atomically).
    static func mailbox(_ path: String) throws -> Mailbox {
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
    static func trustedReader(_ path: String, group: String?) throws -> TrustedReader {
        if let (identity, dir) = try? ReaderIdentityFile.load(path) {
            let key = try KeyFiles.publicKey(identity.publicKey.hasPrefix("/") ? identity.publicKey : dir + "/" + identity.publicKey,
                                             what: "reader public key")
            return TrustedReader(groupID: try KeyFiles.id16(identity.groupID, flag: "\(path) groupID"), publicKey: key)
        }
        if let config = try? LockConfiguration.load(path: path) {
            do {
                return TrustedReader(groupID: try config.readerIdentity().groupID,
                                     publicKey: Primitives.point(of: try config.readerSigningKey()))
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

    /// `credential 04ab12…: 1 access and 0 revocation documents, trusts reader group 0011…`
    static func summary(_ session: CredentialSession) -> String {
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
