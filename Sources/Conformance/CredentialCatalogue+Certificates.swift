import AccessProtocol
import Codecs
import Crypto

/// Checks mirroring the official reader-certificate cases of `nfc_user_device` (the tool plays a
/// reader that presents a certificate; docs/conformance.md lists each case with its file and
/// commit). They need the phone provisioned as the cases' operator prompt says
/// (`OfficialReaderCertificates.prompt`); without `--reader-certificates` they are not applicable.
extension CredentialCatalogue {
    static let needsReaderCertificates: @Sendable (CredentialProfile) -> String? = { p in
        p.readerCertificates ? needsAuth1(p) : OfficialReaderCertificates.prompt
    }

    /// One transaction as the official cases' reader: `key` signs, the group key is the issuer's.
    static func asCertificateReader<T>(_ phone: CredentialUnderTest, _ label: String, key: P256.Signing.PrivateKey,
                                       sub: [UInt8] = OfficialReaderCertificates.subID, _ body: (ReaderProbe) throws -> T) throws -> T {
        // Transcripts decode with the group key of the key derivation: the issuer's.
        phone.recorder?.readerKey(group: OfficialReaderCertificates.groupID, publicKey: OfficialReaderCertificates.issuerPublicKey)
        return try phone.transaction(label, as: OfficialReaderCertificates.identity(key, sub: sub),
                              groupKey: OfficialReaderCertificates.issuerPublicKey, body)
    }

    /// A standard AUTH0 with a random authentication policy (01 to 03), as the LOAD CERT cases send.
    static func auth0RandomPolicy(_ p: ReaderProbe) throws {
        let r = try p.send(p.makeAuth0(fast: false, policy: UInt8.random(in: 1...3)))
        try ReaderProbe.expect(r, .success, "AUTH0 (§4)")
        let answer = try p.acceptAuth0(r)
        guard answer.cryptogram == nil else { throw CheckStop(.fail("9D cryptogram in a standard AUTH0 answer")) }
    }

    /// The closing EXCHANGE `97 02 01 01` must be answered `00 02 00 00`.
    /// SELECT, AUTH0 (random policy), LOAD CERT of `certificate` answered 9000, AUTH1 (5A), and the
    /// close: the LOAD CERT cases that must succeed.
    static func loadCertThenAuth1(_ p: ReaderProbe, _ certificate: ReaderCertificate, _ what: String) throws -> CheckVerdict {
        try p.select()
        try auth0RandomPolicy(p)
        try ReaderProbe.expect(try p.loadCert(certificate.compressed()), .success, what)
        try p.auth1()
        return try closes(p, "\(what) 9000; AUTH1 and EXCHANGE completed")
    }

    static func closes(_ p: ReaderProbe, _ what: String) throws -> CheckVerdict {
        let reply = try p.exchange(officialClosing)
        guard reply == ExchangeResponsePlaintext.success else {
            return .fail("EXCHANGE 97 02 01 01 answer plaintext", expected: ExchangeResponsePlaintext.success, actual: reply)
        }
        return .pass(what)
    }

    /// AUTH1 asking for the key slot must answer `4E` (the slot of the phone's key when discovery
    /// learnt it) and no `5A`.
    static func keySlotAnswer(_ tlvs: [TLV], _ profile: CredentialProfile) -> CheckVerdict? {
        guard tlvs.first(Tag.Auth1.credentialKey) == nil else { return .fail("AUTH1 flags 00 asked for the key slot; the answer carries 5A") }
        guard let slot = tlvs.first(Tag.Auth1.keySlot)?.value else { return .fail("AUTH1 flags 00: no 4E key slot in the answer") }
        if let key = profile.credentialKey, slot != KeySchedule.keySlot(key) {
            return .fail("4E is not the key slot of the phone's key", expected: KeySchedule.keySlot(key), actual: slot)
        }
        return nil
    }

    static let certificates: [CredentialCheck] = [
        CredentialCheck("cert.auth1", official: "NFC_UD_STANDARD_CERT_IN_AUTH1_NO_CHAINING", section: "§6",
                        title: "AUTH1 (key slot) carrying the reader certificate in 90, one APDU: answered with 4E; EXCHANGE 00 02 00 00",
                        applicable: needsReaderCertificates) { phone, profile in
            // The case's reader has a random sub-group id.
            try asCertificateReader(phone, "cert.auth1", key: OfficialReaderCertificates.olderReaderKey, sub: SystemRandom().bytes(16)) { p in
                try p.select()
                let answer = try p.auth0(fast: false)
                guard answer.cryptogram == nil else { return .fail("9D cryptogram in a standard AUTH0 answer") }
                let tlvs = try p.auth1(returnPublicKey: false, certificate: OfficialReaderCertificates.certificate.compressed())
                if let problem = keySlotAnswer(tlvs, profile) { return problem }
                return try closes(p, "certificate in AUTH1 accepted; 4E; EXCHANGE 00 02 00 00")
            }
        },
        CredentialCheck("cert.auth1-chained", official: "NFC_UD_STANDARD_CERT_IN_AUTH1_WITH_CHAINING", section: "§2, §6",
                        title: "AUTH1 (key slot) carrying the long reader certificate in 90, command-chained: answered with 4E; EXCHANGE 00 02 00 00",
                        applicable: needsReaderCertificates) { phone, profile in
            // As stored the case cannot run (setup reads self.group_id before setting it) and asks
            // both an error at AUTH1 and a working EXCHANGE after it; this mirrors its title.
            try asCertificateReader(phone, "cert.auth1-chained", key: OfficialReaderCertificates.readerKey) { p in
                try p.select()
                try p.auth0(fast: false)
                let tlvs = try p.auth1(returnPublicKey: false, certificate: OfficialReaderCertificates.chainingCertificate.compressed())
                if let problem = keySlotAnswer(tlvs, profile) { return problem }
                return try closes(p, "chained AUTH1 with the certificate accepted; 4E; EXCHANGE 00 02 00 00")
            }
        },
        CredentialCheck("cert.load-cert", official: "NFC_UD_STANDARD_CERT_IN_LOAD_CERT_NO_CHAINING", section: "§6",
                        title: "LOAD CERT (one APDU) answered 9000, then AUTH1 (5A) succeeds; EXCHANGE 00 02 00 00",
                        applicable: needsReaderCertificates) { phone, _ in
            try asCertificateReader(phone, "cert.load-cert", key: OfficialReaderCertificates.olderReaderKey) { p in
                try loadCertThenAuth1(p, OfficialReaderCertificates.certificate, "LOAD CERT")
            }
        },
        CredentialCheck("cert.load-cert-chained", official: "NFC_UD_STANDARD_CERT_IN_LOAD_CERT_WITH_CHAINING", section: "§2, §6",
                        title: "LOAD CERT of the long certificate, command-chained, each part 9000; then AUTH1 (5A) succeeds; EXCHANGE 00 02 00 00",
                        applicable: needsReaderCertificates) { phone, _ in
            try asCertificateReader(phone, "cert.load-cert-chained", key: OfficialReaderCertificates.readerKey) { p in
                try loadCertThenAuth1(p, OfficialReaderCertificates.chainingCertificate, "chained LOAD CERT")
            }
        },
        CredentialCheck("cert.neg.load-cert-signature", official: "NFC_UD_NEG_STANDARD_CERT_IN_LOAD_CERT_WITH_CHAINING_INCORRECT_SIGNATURE", section: "§6",
                        title: "LOAD CERT of a certificate whose signature does not verify is answered 9000; AUTH1 then an error status word",
                        applicable: needsReaderCertificates) { phone, _ in
            // AUTH1 is signed with the key the certificate names (the case's reader key when it was
            // written): only the certificate's signature is wrong.
            try asCertificateReader(phone, "cert.neg.load-cert-signature", key: OfficialReaderCertificates.olderReaderKey) { p in
                try p.select()
                try auth0RandomPolicy(p)
                try ReaderProbe.expect(try p.loadCert(OfficialReaderCertificates.incorrectSignatureCertificate.compressed()), .success, "LOAD CERT")
                let r = try p.sendAuth1()
                return r.status == .success ? .fail("AUTH1 after a certificate that does not verify was answered 9000 (No error status returned)")
                    : .pass("LOAD CERT 9000; AUTH1 refused \(r.status) (\(Names.status(r.status)))")
            }
        },
        CredentialCheck("cert.neg.load-cert-format", official: "NFC_UD_NEG_STANDARD_CERT_IN_LOAD_CERT_WITH_CHAINING_INCORRECT_FORMAT", section: "§6",
                        title: "LOAD CERT of a certificate with bytes 5 and 6 set to FF is refused: an error status word at LOAD CERT, or at AUTH1 after it",
                        applicable: needsReaderCertificates) { phone, _ in
            // As stored the case cannot pass (its first except also catches the error status it
            // wants); its intent is a refusal at LOAD CERT. The official phone answers LOAD CERT
            // 9000 and refuses at AUTH1 (as INCORRECT_SIGNATURE requires): either is taken.
            try asCertificateReader(phone, "cert.neg.load-cert-format", key: OfficialReaderCertificates.readerKey) { p in
                try p.select()
                try auth0RandomPolicy(p)
                let load = try p.loadCert(OfficialReaderCertificates.incorrectFormat(OfficialReaderCertificates.incorrectSignatureCertificate))
                guard load.status == .success else { return .pass("LOAD CERT refused \(load.status) (\(Names.status(load.status)))") }
                let r = try p.sendAuth1()
                return r.status == .success ? .fail("LOAD CERT and AUTH1 after a malformed certificate were both answered 9000")
                    : .pass("LOAD CERT 9000; AUTH1 refused \(r.status) (\(Names.status(r.status)))")
            }
        },
    ]
}
