import AccessProtocol
import ByteCore
import Codecs
import Crypto
import Foundation
import OfflineUnlock

/// NFC_RDR_STEPUP_RD (`nfc_reader/nfc_rdr_stepup_rd/nfc_rdr_stepup_rd.py` @ 0b6dfe1d): six
/// revocation documents of the site issuer in the official RevocationData (OVERWRITE, APPEND,
/// entries to remove), each carried by a phone holding only that document, each followed by a tap
/// of the case's two phones that hold no document. The reader must have been provisioned with the
/// three phones' keys out of band (their credential keys, trusted without a document).
extension ReaderCatalogue {
    /// The case's two extra phones (`access_credential1_PrivK`, `access_credential2_PrivK`): keys
    /// of the official test plan, public there.
    static let stepUpRDKeys: [P256.Signing.PrivateKey] = [
        "63BD7CE2A4ED2C35232E2C642851F3E22E6F274E1F164CA3B4D32CCA18B51FFE",
        "76F3E97A59EE71AAFB1F71751D01F4F1C564E6B35721D0F9A7296F503D52112E",
    ].map { try! P256.Signing.PrivateKey(rawRepresentation: Hex.decode($0)!) }

    /// The phone carrying the lists (the case's P0, its "configured credential"): a fixed key of
    /// LockBench's, SHA-256 of a label, so the lock can be provisioned with it once and no other
    /// check taps with it (a lock holding a cached document for it would not step up).
    static let stepUpRDCarrier = try! P256.Signing.PrivateKey(rawRepresentation: Primitives.sha256(Array("LockBench NFC_RDR_STEPUP_RD carrier".utf8)))

    /// The three keys, as lines of a `trustedCredentialKeys` file.
    public static var stepUpRDTrustedKeys: [String] { ([stepUpRDCarrier] + stepUpRDKeys).map { Hex.encode($0.publicBytes) } }

    /// The case's six lists and what each leaves the two phones: (P1 granted, P2 granted).
    static func stepUpRDIterations() -> [(RevocationData, Bool, Bool)] {
        let e1 = try! RevocationEntry(publicKeyHash: RevocationEntry.hash(credentialPublicKey: stepUpRDKeys[0].publicBytes), expiry: nil)
        let e2 = try! RevocationEntry(publicKeyHash: RevocationEntry.hash(credentialPublicKey: stepUpRDKeys[1].publicBytes), expiry: nil)
        return [
            (RevocationData(changeMode: .overwrite, entries: [e1]), false, true),
            (RevocationData(changeMode: .append, entries: [e2]), false, false),
            (RevocationData(changeMode: .append, entries: [], entriesToRemove: [e1]), true, false),
            (RevocationData(changeMode: .append, entries: [e1], entriesToRemove: [e1, e2]), true, true),
            (RevocationData(changeMode: .overwrite, entries: [e2]), true, false),
            (RevocationData(changeMode: .overwrite, entries: []), true, true),
        ]
    }

    /// Said with every failure: a reader not provisioned with the keys fails the case whatever it does with the lists.
    static let provisionStepUpRD = "(the case's reader is provisioned out of band with the credential keys of its three phones: "
        + "`lockbench conformance trusted-keys > keys.txt`, then `lockbench config create … --trusted-credential-keys keys.txt`)"

    static let revocationDataChecks: [ReaderCheck] = [
        ReaderCheck("rdr.stepup.rd", official: "NFC_RDR_STEPUP_RD", transactions: 18, section: "§9",
                    title: "six revocation lists of the site issuer (OVERWRITE, APPEND, entries to remove), each carried by a phone holding only it (ENVELOPE asks aliro-r; granted), each followed by the case's two document-less phones, granted or refused as the list leaves them (keys provisioned out of band; leaves the lock an empty list)") { reader, _ in
            guard let issuer = reader.issuer else {
                return .notApplicable("the case hands the lock revocation documents of its own: give the site issuer's private key (--issuer-key) and the lock's time (--now)")
            }
            // All six signed in one second, as the case builds them; a reader applies them in turn.
            let signed = Date(timeIntervalSince1970: reader.now.timeIntervalSince1970.rounded(.down))
            var summaries = [String]()
            // A fresh phone each tap (the case clears Kpersistent after every one), holding no
            // access document and asking no step-up SELECT, as the case's three.
            func phone(_ key: P256.Signing.PrivateKey, revocation: [[UInt8]]) -> ObservingPhone {
                reader.phone {
                    $0.signingKey = key
                    $0.accessDocuments = []
                    $0.revocationDocuments = revocation
                    $0.stepUpSelect = .optional
                }
            }
            for (n, (data, grant1, grant2)) in stepUpRDIterations().enumerated() {
                let iteration = n + 1
                let list = RevocationDocument.issue(revocation: data, issued: signed, expiry: signed.addingTimeInterval(14 * 86_400), issuerKey: issuer).encoded()
                let carrier = phone(stepUpRDCarrier, revocation: [list])
                let t0 = try reader.present(carrier, "rdr.stepup.rd")
                summaries.append(t0.summary)
                let v0 = official(t0) { stepUpVerdict(t0, carrier, grant: true) }
                guard v0.status == .pass else {
                    return .fail("iteration \(iteration), the list's carrier: \(v0.reason) \(provisionStepUpRD)", expected: v0.expected, actual: v0.actual)
                }
                for (k, (key, grant)) in zip(stepUpRDKeys, [grant1, grant2]).enumerated() {
                    let t = try reader.present(phone(key, revocation: []), "rdr.stepup.rd")
                    summaries.append(t.summary)
                    let v = documentlessVerdict(t, grant: grant)
                    guard v.status == .pass else {
                        return .fail("iteration \(iteration) (\(data.changeMode), \(data.entries.count) added, \(data.entriesToRemove.count) to remove), credential \(k + 1): \(v.reason) \(provisionStepUpRD)",
                                     expected: v.expected, actual: v.actual)
                    }
                }
            }
            return .pass(summaries.enumerated().map { "tap \($0.offset + 1): \($0.element)" }.joined(separator: "; "))
        },
    ]

    /// A tap of the case's document-less phones (`test_credential`): AUTH0 (standard or FAST),
    /// AUTH1 after a standard one, then EXCHANGE — nothing else in between, as the tool's phone
    /// waits for it — whose `97` high byte is 01 (accepted) or 00 (rejected).
    static func documentlessVerdict(_ t: ObservedTransaction, grant: Bool) -> CheckVerdict {
        if let problem = officialCommandProblems(t, standard: false) { return .fail(problem) }
        guard let a0 = t.commands.firstIndex(where: { $0.ins == Instruction.auth0 }) else { return .fail("no AUTH0 (saw \(t.summary))") }
        var next = a0 + 1
        if next < t.commands.count, t.commands[next].ins == Instruction.auth1 { next += 1 }
        guard next < t.commands.count, t.commands[next].ins == Instruction.exchange, let s = t.readerStatus else {
            return .fail("the command after AUTH1 is not an EXCHANGE carrying a reader status (saw \(t.summary)); the case's phone carries no document and waits for EXCHANGE")
        }
        let high: UInt16 = grant ? 0x01 : 0x00
        guard s >> 8 == high else {
            return .fail("Received incorrect EXCHANGE reader status \(Hex.encode(s.bigEndianBytes)) (\(Names.readerStatus(s))): the case expects high byte \(Hex.encode([UInt8(high)])) (\(grant ? "accepted" : "rejected"))",
                         expected: [UInt8(high)], actual: s.bigEndianBytes)
        }
        return .pass(t.summary)
    }
}
