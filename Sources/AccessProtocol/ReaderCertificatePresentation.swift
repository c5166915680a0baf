import Codecs

/// How the lock presents its reader certificate to a phone (the official reader cases
/// NFC_RDR_STANDARD_CERT_IN_AUTH1_* and _IN_LOAD_CERT_*): after a standard AUTH0, either in AUTH1
/// tag `90` or by LOAD CERT `80 D1` before AUTH1, chained (CLA `90`…`80`) when the command is longer
/// than one APDU or when asked to.
public struct ReaderCertificatePresentation: Sendable, Equatable {
    public enum Mode: String, Sendable, Codable, CaseIterable {
        /// In AUTH1, tag `90`.
        case auth1
        /// By LOAD CERT between AUTH0 and AUTH1.
        case loadCert = "load-cert"
    }

    /// The certificate; its subject key must be the lock's reader key.
    public var certificate: ReaderCertificate
    /// The reader issuer CA's public key: the group key phones trust, and so the "reader group
    /// key" of the key derivation.
    public var issuerPublicKey: [UInt8]
    public var mode: Mode
    /// Chain the command even when it fits one APDU (split in two halves).
    public var alwaysChain: Bool

    public init(certificate: ReaderCertificate, issuerPublicKey: [UInt8], mode: Mode, alwaysChain: Bool = false) {
        self.certificate = certificate
        self.issuerPublicKey = issuerPublicKey
        self.mode = mode
        self.alwaysChain = alwaysChain
    }

    /// LOAD CERT `80 D1 00 00 Lc <compressed certificate> 00`.
    public var loadCertCommand: CommandAPDU {
        CommandAPDU(cla: 0x80, ins: Instruction.loadCert, data: certificate.compressed(), le: 256)
    }

    /// The part size to send `command` with: `chunk`, or half the data when chaining is asked for
    /// and the command would fit one part.
    public func chunk(for command: CommandAPDU, default chunk: Int) -> Int {
        guard alwaysChain, command.data.count <= chunk, command.data.count > 1 else { return chunk }
        return (command.data.count + 1) / 2
    }
}
