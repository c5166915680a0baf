import AccessProtocol
import ArgumentParser
import ByteCore
import Codecs
import Conformance
import Crypto
import Foundation
import Lock
import LockRuntime
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

    @Option(name: .customLong("reader-issuer-ca"),
            help: ArgumentHelp("Trust a reader issuer CA for a reader group: GROUP=PEM, the group id (32 hex digits) and the CA's public key PEM. Readers of that group must present a certificate the CA signed (LOAD CERT or AUTH1 90); repeatable.", valueName: "group=ca.pub.pem"))
    var readerIssuerCA: [String] = []

    @Flag(name: .customLong("trust-official-reader-groups"),
          help: "Also trust the sixteen reader groups 00113344667799AA00113344667799AB…CE with the reader keys of the official case NFC_UD_STANDARD_SIXTEEN_GROUPIDENTIFIER_ONE_AC (its precondition; `conformance credential --sixteen-reader-groups` then runs it).")
    var trustOfficialReaderGroups = false

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

    @Option(name: .customLong("profile"),
            help: ArgumentHelp("Whose behaviour the phone copies where the public facts leave a choice: 'lockbench' (the default: 91/92 timestamps, 7F66 sizes, 6A88 for an unlisted version) or 'reference' (the public reference device as observed: no 91/92, no 7F66, 6985 for an unlisted version, strict Le, no step-up SELECT).", valueName: "lockbench|reference"))
    var profile: String = PhoneProfile.lockbench.rawValue

    @Flag(name: .customLong("signed-times"),
          help: "Tell the lock the signed times of the documents the phone carries (AUTH1 91/92, as LockBench Trust's phones do) instead of zeros, so a lock holding older ones steps up to fetch these.")
    var signedTimes = false

    /// Whether a phone was described (some commands fall back to a test card without one).
    var isGiven: Bool { key != nil }

    func validate() throws {
        guard StepUpSelectPolicy(rawValue: stepUpSelect) != nil else {
            throw ValidationError("--step-up-select must be 'required' or 'optional', got '\(stepUpSelect)'")
        }
        guard PhoneProfile(rawValue: profile) != nil else {
            throw ValidationError("--profile must be 'lockbench' or 'reference', got '\(profile)'")
        }
        guard key != nil else {
            if !documents.isEmpty || !trustReader.isEmpty || !readerIssuerCA.isEmpty || readerGroup != nil || !faults.isEmpty || mailbox != nil || trustOfficialReaderGroups
                || profile != PhoneProfile.lockbench.rawValue || stepUpSelect != StepUpSelectPolicy.optional.rawValue || signedTimes {
                throw ValidationError("--document, --trust-reader, --reader-group, --fault, --mailbox, --profile, --signed-times and --step-up-select describe a phone: give its --key too")
            }
            return
        }
        for entry in readerIssuerCA {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, Hex.decode(parts[0])?.count == 16, !parts[1].isEmpty else {
                throw ValidationError("--reader-issuer-ca takes GROUP=PEM: 32 hex digits, '=', the CA's public key file; got '\(entry)'")
            }
        }
        guard !trustReader.isEmpty || !readerIssuerCA.isEmpty else {
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
            + readerIssuerCA.map { entry in
                let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
                return TrustedReader(groupID: Hex.decode(parts[0]) ?? [], publicKey: try KeyFiles.publicKey(parts[1], what: "reader issuer CA key"),
                                     issuerCA: true)
            }
            + (trustOfficialReaderGroups ? OfficialReaderGroups.trustedReaders : [])
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
                                      mailbox: try mailbox.map(SoftwarePhone.mailbox), documentTimestamps: signedTimes,
                                      profile: PhoneProfile(rawValue: profile) ?? .lockbench)
    }
}

