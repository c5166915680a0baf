import AccessProtocol
import ByteCore
import Codecs
import Crypto
import OfflineUnlock

/// Checks that mirror `nfc_user_device` cases of the Aliro Certification Tool which the first
/// catalogue did not cover (docs/conformance.md lists each case with its file and commit). Each
/// verdict is the case's own pass rule: "any SW other than 9000" is exactly that, not one word.
extension CredentialCatalogue {
    /// `97 02 01 01`: the closing EXCHANGE of the official cases (reader state unsecured).
    static let officialClosing: [UInt8] = [0x97, 0x02, 0x01, 0x01]

    static let official: [CredentialCheck] = [
        CredentialCheck("auth0.wrong-p1p2", official: "NFC_UD_NEG_AUTH0_WRONG_P1P2", section: "§4, §11",
                        title: "AUTH0 with P1 P2 = 01 02 is answered an error status word") { phone, _ in
            try phone.transaction("auth0.wrong-p1p2") { p in
                try p.select()
                var apdu = p.makeAuth0(fast: false)
                apdu.p1 = 0x01; apdu.p2 = 0x02
                return try anyErrorStatus(p, apdu, "AUTH0 80 80 01 02")
            }
        },
        CredentialCheck("auth1.wrong-p1p2", official: "NFC_UD_NEG_AUTH1_WRONG_P1P2", section: "§6, §11",
                        title: "AUTH1 with P1 P2 = 01 02 (valid signature) is answered an error status word") { phone, _ in
            try phone.transaction("auth1.wrong-p1p2") { p in
                try p.select()
                let answer = try p.auth0(fast: false)
                guard answer.cryptogram == nil else { return .fail("9D cryptogram in a standard AUTH0 answer") }
                var apdu = try p.makeAuth1()
                apdu.p1 = 0x01; apdu.p2 = 0x02
                return try anyErrorStatus(p, apdu, "AUTH1 80 81 01 02")
            }
        },
        CredentialCheck("auth0.response-chaining", official: "NFC_UD_AUTH0_RESPONSE_CHAINING", section: "§2, §4",
                        title: "AUTH0 with Le 3C (and a B1 vendor extension) is answered in parts: 61xx, then GET RESPONSE") { phone, _ in
            try phone.transaction("auth0.response-chaining") { p in
                try p.select()
                // B1 = { 30 { 04 03 000001 (vendor id), 01 1E <30 bytes> } }, as the official case builds it.
                let vendor = TLV(0x30, children: [TLV(0x04, [0x00, 0x00, 0x01]), TLV(0x01, SystemRandom().bytes(30))]).encoded()
                var apdu = p.makeAuth0(fast: false, vendorExtension: vendor)
                apdu.le = 0x3C
                let (r, chained) = try p.follow(try p.transmit(apdu.bytes))
                try ReaderProbe.expect(r, .success, "AUTH0 with Le 3C")
                guard chained else { return .fail("the \(r.data.count)-byte AUTH0 answer came whole although Le was 3C (60): no 61xx") }
                let answer = try p.acceptAuth0(r)
                guard answer.cryptogram == nil else { return .fail("9D cryptogram in a standard AUTH0 answer") }
                try p.auth1()
                let reply = try p.exchange(officialClosing)
                guard reply == ExchangeResponsePlaintext.success else {
                    return .fail("EXCHANGE 97 02 01 01 answer plaintext", expected: ExchangeResponsePlaintext.success, actual: reply)
                }
                return .pass("\(r.data.count) bytes in parts after Le 3C; AUTH1 and EXCHANGE completed")
            }
        },
        CredentialCheck("auth0.chaining-not-completed", official: "NFC_UD_NEG_AUTH0_CHAINING_NOT_COMPLETED", section: "§2, §4",
                        title: "an AUTH0 chain missing its second part is refused; AUTH1 then too; CONTROL FLOW is answered 9000") { phone, _ in
            try phone.transaction("auth0.chaining-not-completed") { p in
                try p.select()
                let apdu = p.makeAuth0(fast: false, vendorExtension: SystemRandom().bytes(100))
                let r = try p.sendChain(apdu, chunk: 30, skipping: [1])
                guard r.status != .success else { return .fail("an AUTH0 chain without its second part was answered 9000") }
                // AUTH1 signed over a transcript the phone never had.
                let dummy = try p.transmit(Auth1Command(flags: Auth1Command.flagReturnPublicKey,
                                                        signature: [UInt8](repeating: 0x11, count: 64)).apdu.bytes)
                guard try p.follow(dummy).response.status != .success else { return .fail("AUTH1 after the broken AUTH0 chain was answered 9000") }
                let cf = try p.controlFlow()
                try ReaderProbe.expect(cf, .success, "CONTROL FLOW after the refused commands")
                return .pass("AUTH0 chain refused \(r.status), AUTH1 refused, CONTROL FLOW 9000")
            }
        },
        CredentialCheck("auth1.chaining-not-completed", official: "NFC_UD_NEG_AUTH1_CHAINING_NOT_COMPLETED", section: "§2, §6",
                        title: "an AUTH1 chain missing its middle part is refused; CONTROL FLOW is answered 9000") { phone, _ in
            try phone.transaction("auth1.chaining-not-completed") { p in
                try p.select()
                try p.auth0(fast: false)
                let r = try p.sendChain(try p.makeAuth1(), chunk: 30, skipping: [1])
                guard r.status != .success else { return .fail("an AUTH1 chain without its middle part was answered 9000") }
                // The case's step-up SELECT in between is not mirrored: the tool's own phone refuses it there too.
                let cf = try p.controlFlow()
                try ReaderProbe.expect(cf, .success, "CONTROL FLOW after the refused AUTH1")
                return .pass("AUTH1 chain refused \(r.status), CONTROL FLOW 9000")
            }
        },
        CredentialCheck("auth1.wrong-signature-length", official: "NFC_UD_NEG_AUTH1_WRONG_VALUES", section: "§6",
                        title: "AUTH1 whose 9E holds 65 bytes (a valid signature and FF) is answered an error status word") { phone, _ in
            try phone.transaction("auth1.wrong-signature-length") { p in
                try p.select()
                try p.auth0(fast: false)
                guard let ctx = p.context else { return .fail("no transcript") }
                let signature = Primitives.sign(ctx.signedData(reader: true), with: p.identity.signingKey) + [0xFF]
                let data = TLV(Tag.Auth1.flags, [Auth1Command.flagReturnPublicKey]).encoded() + TLV(Tag.Auth1.signature, signature).encoded()
                return try anyErrorStatus(p, CommandAPDU(cla: 0x80, ins: Instruction.auth1, data: data, le: 256), "AUTH1 with a 65-byte 9E")
            }
        },
        CredentialCheck("fast.consecutive-decoys", official: "NFC_UD_NEG_AUTH0_DIFFERENT_CRYPTOGRAM_CONSECUTIVE_FAST", section: "§4, §8",
                        title: "two FAST AUTH0 in one session (SELECT between): each answer has a 64-byte 9D, and both 9D and 86 differ") { phone, _ in
            try phone.transaction("fast.consecutive-decoys") { p in
                try p.select()
                let first = try p.auth0(fast: true)
                try p.select()
                let second = try p.auth0(fast: true)
                guard let c1 = first.cryptogram, let c2 = second.cryptogram else {
                    return .fail("a FAST AUTH0 answer has no 9D (the phone must send one, random when it holds no key)")
                }
                guard c1.count == 64, c2.count == 64 else { return .fail("9D is not 64 bytes", actual: c1.count == 64 ? c2 : c1) }
                if c1 == c2 { return .fail("Received cryptogram same as previous response", actual: c2) }
                if first.deviceEphemeralKey == second.deviceEphemeralKey {
                    return .fail("Received credential epubk same as previous response", actual: second.deviceEphemeralKey)
                }
                return .pass("cryptograms and device ephemeral keys differ")
            }
        },
        CredentialCheck("exchange.wrong-length", official: "NFC_UD_NEG_EXCHANGE_WITH_WRONG_LENGTH", section: "§10",
                        title: "EXCHANGE BA 6F { 8C 01 00, 27 04 000C 0010 } (length past the end): 9000 with a non-success status",
                        applicable: { p in needsAuth1(p) ?? (p.bit(4) ? nil : "the case needs a readable mailbox (5E bit 4)") }) { phone, _ in
            try phone.transaction("exchange.wrong-length") { p in
                try p.select(); try p.auth0(); try p.auth1()
                // The newest version of the case (it imports ReaderFailureState and builds 8C): 9000, and an
                // EXCHANGE status other than 00 02 00 00. An error status word fails it.
                let plain: [UInt8] = [0xBA, 0x6F, 0x8C, 0x01, 0x00, 0x27, 0x04, 0x00, 0x0C, 0x00, 0x10]
                let reply = try p.exchange(plain)
                guard reply.count >= 4 else { return .fail("EXCHANGE answer plaintext shorter than 4 bytes", actual: reply) }
                return Array(reply.suffix(4)) == ExchangeResponsePlaintext.success
                    ? .fail("EXCHANGE returned success status at end of payload", actual: reply)
                    : .pass("9000 with status \(Array(reply.suffix(4)).hex)")
            }
        },
        CredentialCheck("exchange.extra-tag", official: "NFC_UD_NEG_EXCHANGE_WITH_EXTRA_TAG", section: "§10",
                        title: "EXCHANGE with the mailbox commands repeated under an undefined tag 99: one read answered, 00 02 00 00",
                        applicable: { p in needsAuth1(p) ?? (p.bit(4) ? nil : "the case needs a readable mailbox of 0x1C bytes (5E bit 4)") }) { phone, _ in
            try phone.transaction("exchange.extra-tag") { p in
                try p.select(); try p.auth0(); try p.auth1()
                let ops: [UInt8] = [0x8C, 0x01, 0x00, 0x87, 0x04, 0x00, 0x0C, 0x00, 0x10]
                let reply = try p.exchange(TLV(Tag.Exchange.mailboxOperations, ops).encoded() + TLV(0x99, ops).encoded())
                let items = try officialReads(reply, count: 1)
                _ = try p.exchange(officialClosing)
                return .pass("one read item of \(items[0].count) bytes; tag 99 skipped")
            }
        },
        CredentialCheck("mailbox.extended-length", official: "NFC_UD_EXCHANGE_WITH_EXTENDED_LENGTH", section: "§2",
                        title: "EXCHANGE reading 0x113 bytes (BA 09 8C 01 00 87 04 0000 0113), the answer followed with extended GET RESPONSE 00 C0 00 00 00 01 13: one read item, 00 02 00 00",
                        applicable: { p in needsAuth1(p) ?? (p.bit(4) ? nil : "the case reads 0x113 bytes of the mailbox (5E bit 4)") }) { phone, _ in
            try phone.transaction("mailbox.extended-length") { p in
                try p.select(); try p.auth0(); try p.auth1()
                // set_extended_length(275, 275): the EXCHANGE stays short (Lc 1 byte, Le 00), every GET
                // RESPONSE asks Le 275 extended. Any status but 61xx/9000 is InvalidStatusError.
                let read: [UInt8] = [0xBA, 0x09, 0x8C, 0x01, 0x00, 0x87, 0x04, 0x00, 0x00, 0x01, 0x13]
                let items = try officialReads(try p.exchange(read, extendedGetResponseLe: 0x113), count: 1)
                let close = try p.exchange(officialClosing, extendedGetResponseLe: 0x113)
                guard Array(close.suffix(4)) == ExchangeResponsePlaintext.success else {
                    return .fail("EXCHANGE returned error status at end of payload", expected: ExchangeResponsePlaintext.success, actual: close)
                }
                return .pass("one read item of \(items[0].count) bytes through extended GET RESPONSE; closed 00 02 00 00")
            }
        },
        CredentialCheck("standard.sixteen-groups", official: "NFC_UD_STANDARD_SIXTEEN_GROUPIDENTIFIER_ONE_AC", transactions: OfficialReaderGroups.exercised.count, section: "§6",
                        title: "fourteen standard transactions, one per reader group 00113344667799AA00113344667799AD…CE with its own reader key: each AUTH1 answers 5A, each EXCHANGE 00 02 00 00",
                        applicable: { p in p.sixteenReaderGroups ? needsAuth1(p) : OfficialReaderGroups.prompt }) { phone, _ in
            // for i in range(2, 16): a new Reader (group, key) and a new connection each, no prompt.
            for i in OfficialReaderGroups.exercised {
                let identity = OfficialReaderGroups.identity(i)
                let group = OfficialReaderGroups.groupIDs[i].hex.uppercased()
                let verdict = try phone.transaction("standard.sixteen-groups \(group)", as: identity, groupKey: nil) { p -> CheckVerdict? in
                    do {
                        try p.select()
                        try auth0RandomPolicy(p)
                        try p.auth1()
                        let reply = try p.exchange(officialClosing)
                        guard Array(reply.suffix(4)) == ExchangeResponsePlaintext.success else {
                            return .fail("reader group \(group): EXCHANGE returned error status at end of payload", expected: ExchangeResponsePlaintext.success, actual: reply)
                        }
                        return nil
                    } catch var stop as CheckStop {
                        stop.verdict.reason = "reader group \(group) (iteration \(i)): " + stop.verdict.reason
                        throw stop
                    }
                }
                if let verdict { return verdict }
            }
            return .pass("\(OfficialReaderGroups.exercised.count) standard transactions, groups …AD to …CE, each closed 00 02 00 00")
        },
        CredentialCheck("mailbox.write-request", official: "NFC_UD_EXCHANGE_WRITE_REQUEST", section: "§10",
                        title: "atomic writes (8C 01 01) are not seen until an 8C 01 00 EXCHANGE commits them; then every write reads back",
                        applicable: { p in needsAuth1(p) ?? (p.bit(5) ? nil : "the case needs a writable mailbox of 0x49 bytes (5E bit 5)") }) { phone, _ in
            try phone.transaction("mailbox.write-request") { p in
                try p.select(); try p.auth0(); try p.auth1()
                // The official offsets and data.
                let writes: [(UInt16, [UInt8])] = [(0x00, [0x11, 0xA2, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77]), (0x12, [0x3B, 0x16, 0x22, 0x33, 0x44, 0x55, 0x65]),
                                                   (0x43, [0x11, 0x22, 0x33, 0x44, 0x55, 0x66]), (0x22, [0x44, 0x16, 0x22, 0x33, 0x44, 0x85, 0x97])]
                let reads = writes.map { MailboxOperation.read(offset: $0.0, length: UInt16($0.1.count)) }
                let initial = try officialReads(try p.exchange(mailbox(reads, atomic: false)), count: reads.count)
                _ = try officialReads(try p.exchange(mailbox(writes[0..<2].map { .write(offset: $0.0, data: $0.1) }, atomic: true)), count: 0)
                _ = try officialReads(try p.exchange(mailbox(writes[2..<4].map { .write(offset: $0.0, data: $0.1) }, atomic: true)), count: 0)
                // Closing the atomic session: reads see the original bytes, then new writes land last.
                let rewritten = [1, 3]
                let random = rewritten.map { SystemRandom().bytes(writes[$0].1.count) }
                let closing = reads + zip(rewritten, random).map { MailboxOperation.write(offset: writes[$0.0].0, data: $0.1) }
                let during = try officialReads(try p.exchange(mailbox(closing, atomic: false)), count: reads.count)
                guard during == initial else {
                    return .fail("Original / non-updated data of mailbox is not returned (reads in the committing EXCHANGE)",
                                 expected: initial.flatMap { $0 }, actual: during.flatMap { $0 })
                }
                var expected = writes.map(\.1)
                for (i, index) in rewritten.enumerated() { expected[index] = random[i] }
                let after = try officialReads(try p.exchange(mailbox(reads, atomic: false)), count: reads.count)
                guard after == expected else {
                    return .fail("Data is not written in to mail box", expected: expected.flatMap { $0 }, actual: after.flatMap { $0 })
                }
                let close = try p.exchange(officialClosing)
                guard close == ExchangeResponsePlaintext.success else { return .fail("closing EXCHANGE", expected: ExchangeResponsePlaintext.success, actual: close) }
                return .pass("staged writes unseen until committed; 4 ranges read back the last bytes written")
            }
        },
        stepUp("stepup.ad", official: "NFC_UD_STEPUP_AD", asking: [DocType.access], require: [], onlyDocType: DocType.access, closeOn: .expedited,
               title: "policy 02; ENVELOPE asking aliro-a: every document is an aliro-a whose issuer signature verifies and binds the AUTH1 key; EXCHANGE on the expedited channel"),
        stepUp("stepup.basic", official: "NFC_UD_STEPUP_BASIC", asking: [DocType.access, DocType.revocation], require: [], onlyDocType: nil, closeOn: .expedited,
               title: "policy 02; ENVELOPE asking aliro-a and aliro-r: every document's issuer signature verifies; EXCHANGE on the expedited channel"),
        stepUp("stepup.ad-rd", official: "NFC_UD_STEPUP_AD_RD", asking: [DocType.access, DocType.revocation], require: [DocType.access, DocType.revocation],
               onlyDocType: nil, closeOn: .expedited,
               title: "policy 02; ENVELOPE asking both: an access and a revocation document, every signature verifies; EXCHANGE on the expedited channel"),
        stepUp("stepup.rd", official: "NFC_UD_STEPUP_RD", asking: [DocType.revocation], require: [], onlyDocType: DocType.revocation, closeOn: .stepUp,
               title: "policy 02; ENVELOPE asking aliro-r: every document is an aliro-r whose signature verifies; EXCHANGE on the step-up channel"),
    ]

    /// The official step-up phone cases: SELECT, AUTH0 with policy 02, AUTH1, the step-up SELECT
    /// only when 5E bit 2 asks, ENVELOPE with a DeviceRequest naming the element, each document
    /// checked against the issuer keys given (`--issuer`), then `97 02 01 01` answered `00 02 00 00`
    /// on `closeOn`. Without an issuer key the check is not applicable: the case verifies signatures.
    static func stepUp(_ id: String, official: String, asking: [String], require: [String], onlyDocType: String?,
                       closeOn channel: ReaderProbe.Channel, title: String) -> CredentialCheck {
        CredentialCheck(id, official: official, section: "§9", title: title, applicable: { p in
            if let why = needsAuth1(p) { return why }
            if p.issuerKeys.isEmpty { return "the official case verifies each document's issuer signature: give the issuer's public key (--issuer PEM)" }
            // A phone that announces no document of a kind the case requires would not claim it.
            if require.contains(DocType.access) && !p.bit(0) { return "the case needs an access document; the phone announces none (5E bit 0)" }
            if require.contains(DocType.revocation) && !p.bit(1) { return "the case needs a revocation document; the phone announces none (5E bit 1)" }
            return nil
        }) { phone, profile in
            try phone.transaction(id) { p in
                try p.select()
                let r0 = try p.send(p.makeAuth0(fast: false, policy: 0x02))
                try ReaderProbe.expect(r0, .success, "AUTH0 with policy 02 (secure action)")
                _ = try p.acceptAuth0(r0)
                try p.auth1()
                if profile.bit(2) { try ReaderProbe.expect(try p.send(Commands.select(AID.stepUp)), .success, "step-up SELECT (5E bit 2 set)") }
                let request = DeviceRequest(requests: asking.map { DeviceRequest.Items(docType: $0, namespaces: [$0: [phone.elementID: false]]) })
                let (r, response) = try p.envelope(request)
                try ReaderProbe.expect(r, .success, "ENVELOPE")
                guard let response else { return .fail("Failed to parse the CBOR (no DeviceResponse)") }
                guard let credentialKey = p.credentialKey else { return .fail("no 5A credential key to bind the documents to") }
                for key in profile.issuerKeys where !Primitives.isPoint(key) { return .fail("an --issuer key is not a P-256 point: \(Hex.encode(key))") }
                var types: [String] = []
                for bytes in response.documents {
                    let type = DeviceResponse.docType(of: bytes) ?? "none"
                    if let only = onlyDocType, type != only { return .fail("Document DocType is invalid: \(type), the request asked \(only)") }
                    do {
                        let doc = try IssuedDocument(parsing: bytes)
                        // The case checks the signature under the configured issuer key itself,
                        // whether the header names it by kid, by certificate or not at all.
                        try doc.verify(issuerPublicKeys: profile.issuerKeys)
                        if let key = doc.deviceKey, key != credentialKey { return .fail("Document signature is invalid: the MSO binds another device key", actual: Array(key.prefix(9))) }
                    } catch {
                        return .fail("Document signature is invalid (\(type)): \(error)")
                    }
                    types.append(type)
                }
                for needed in require where !types.contains(needed) {
                    return .fail(needed == DocType.access ? "Did not receive Access Document" : "Did not receive Revocation Document")
                }
                let reply = try p.exchange(officialClosing, on: channel)
                guard reply == ExchangeResponsePlaintext.success else {
                    return .fail("closing EXCHANGE on the \(channel.rawValue) channel", expected: ExchangeResponsePlaintext.success, actual: reply)
                }
                return .pass("\(types.isEmpty ? "no document" : types.joined(separator: ", ")) verified; closed on the \(channel.rawValue) channel")
            }
        }
    }

    /// The official "any status word but 9000" rule (`InvalidStatusError` expected): `command` sent
    /// as one APDU, response chaining followed.
    static func anyErrorStatus(_ p: ReaderProbe, _ command: CommandAPDU, _ what: String) throws -> CheckVerdict {
        let r = try p.follow(try p.transmit(command.bytes)).response
        return r.status == .success ? .fail("\(what) was answered 9000 (No error status returned)", actual: r.status.bytes)
            : .pass("refused \(r.status) (\(Names.status(r.status)))")
    }

    /// `BA { 8C 01 atomic, reads, writes, sets }` as EXCHANGE plaintext.
    static func mailbox(_ ops: [MailboxOperation], atomic: Bool) -> [UInt8] {
        ExchangeCommandPlaintext(readerStatus: nil, mailbox: ops, atomic: atomic).encoded()
    }

    /// The official reading of an EXCHANGE answer: the last 4 bytes must be `00 02 00 00` and the
    /// rest must split into exactly `count` items `len2 ‖ data` (their lengths are not compared).
    static func officialReads(_ reply: [UInt8], count: Int) throws -> [[UInt8]] {
        guard reply.count >= 4 else { throw CheckStop(.fail("EXCHANGE payload status has invalid length", actual: reply)) }
        guard Array(reply.suffix(4)) == ExchangeResponsePlaintext.success else {
            throw CheckStop(.fail("EXCHANGE returned error status at end of payload", expected: ExchangeResponsePlaintext.success, actual: Array(reply.suffix(4))))
        }
        let body = Array(reply.dropLast(4))
        var items: [[UInt8]] = [], at = 0
        while at < body.count {
            guard at + 2 <= body.count else { throw CheckStop(.fail("EXCHANGE read data ends inside an item's length", actual: body)) }
            let len = Int(body[at]) << 8 | Int(body[at + 1])
            guard at + 2 + len <= body.count else { throw CheckStop(.fail("EXCHANGE read item announces \(len) bytes past the end", actual: body)) }
            items.append(Array(body[(at + 2)..<(at + 2 + len)]))
            at += 2 + len
        }
        guard items.count == count else {
            throw CheckStop(.fail("the answer carries \(items.count) read item(s) for \(count) read request(s)", actual: reply))
        }
        return items
    }
}
