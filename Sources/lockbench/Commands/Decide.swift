import AccessProtocol
import ArgumentParser
import ByteCore
import Codecs
import Foundation
import Lock
import LockRuntime
import OfflineUnlock

/// `lockbench decide`: hand documents straight to a lock's engine (no radio, no protocol).
struct DecideCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decide",
        abstract: "Ask a lock's offline-unlock engine for a decision, without a radio or protocol.",
        discussion: """
        Builds the presentation a reader session would hand the engine after AUTH1 (the credential key, \
        a transaction id, the step-up documents) and decides on the lock's persisted state, clock and \
        audit log, exactly as a real transaction would from that point on. For testing documents, \
        policies, revocation and clocks; real transactions run over NFC, BLE or the socket transport. \
        Exit status: 0 granted, 1 denied.
        """)
    @OptionGroup var config: LockConfigOption
    @Option(help: ArgumentHelp("The credential's public key (PEM).", valueName: "file"))
    var credential: String
    @Option(name: .customLong("access-doc"), help: ArgumentHelp("An access document presented in step-up. Repeatable.", valueName: "file"))
    var accessDoc: [String] = []
    @Option(name: .customLong("revocation-doc"), help: ArgumentHelp("A revocation document presented in step-up. Repeatable.", valueName: "file"))
    var revocationDoc: [String] = []
    @Option(help: ArgumentHelp("Transaction id, 32 hex digits (default: random).", valueName: "hex"))
    var transaction: String?
    @Option(name: .customLong("protocol-version"), help: ArgumentHelp("The access protocol's version the presentation claims, e.g. 1.0 or 0.9.", valueName: "version"))
    var protocolVersion: String = "1.0"
    /// The old spelling of --protocol-version, kept for scripts; hidden so that `--help` shows one
    /// `--version` (the tool's).
    @Option(name: .customLong("version"), help: .hidden)
    var legacyProtocolVersion: String?
    @Option(help: "Transport recorded in the audit log: nfc, ble, socket.")
    var transport: String = "socket"
    @Flag(help: "Print the decision as JSON.")
    var json = false

    func run() throws {
        let version = legacyProtocolVersion ?? protocolVersion
        guard let v = ProtocolVersionText.parse(version) else { throw UserError(message: "--protocol-version \"\(version)\" is not like 1.0") }
        guard let iface = RadioInterface(rawValue: transport) else { throw UserError(message: "--transport must be nfc, ble or socket") }
        let key = try KeyFiles.publicKey(credential, what: "credential key")
        let tid = try transaction.map { try KeyFiles.id16($0, flag: "--transaction") } ?? Primitives.randomBytes(16)
        let access = try accessDoc.map { try KeyFiles.readBytes($0, what: "access document") }
        let revocation = try revocationDoc.map { try KeyFiles.readBytes($0, what: "revocation document") }
        let report = try config.open().decide(credentialKey: key, transactionID: tid, interface: iface, protocolVersion: v,
                                              accessDocuments: access, revocationDocuments: revocation)
        print(report.rendered(json: json))
        if !report.granted { throw ExitCode(ExitCodes.negative) }
    }
}
