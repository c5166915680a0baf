import AccessProtocol
import ByteCore
import Codecs
import Crypto

/// A phone under test, reached through fresh connections; LockBench plays the reader with the
/// identity the phone was told to trust.
public final class CredentialUnderTest {
    public let open: LinkOpener
    public let identity: ReaderSigningIdentity
    public let interface: RadioInterface
    public let recorder: TranscriptRecorder?
    /// The element identifier the step-up checks ask for (the tool's `th_access_element_id`).
    public let elementID: String

    public init(open: @escaping LinkOpener, identity: ReaderSigningIdentity, interface: RadioInterface = .nfc, recorder: TranscriptRecorder? = nil,
                elementID: String = DocType.accessElement) {
        self.open = open
        self.elementID = elementID
        self.identity = identity
        self.interface = interface
        self.recorder = recorder
        recorder?.readerKey(group: identity.groupID, publicKey: identity.publicKey)
    }

    /// One transaction on a fresh connection.
    public func transaction<T>(_ label: String, _ body: (ReaderProbe) throws -> T) throws -> T {
        try transaction(label, as: identity, groupKey: nil, body)
    }

    /// One transaction as another reader (the official cases' own reader key material), with
    /// `groupKey` the reader group key of the key derivation.
    public func transaction<T>(_ label: String, as identity: ReaderSigningIdentity, groupKey: [UInt8]?, _ body: (ReaderProbe) throws -> T) throws -> T {
        recorder?.begin(["check": label, "interface": interface.rawValue])
        let opened: (link: APDUTransceiver, close: () -> Void)
        do { opened = try open() } catch {
            throw CheckStop(.fail("could not reach the phone: \(error)"))
        }
        defer { opened.close() }
        let link = recorder.map { RecordingLink(opened.link, recorder: $0) as APDUTransceiver } ?? opened.link
        return try body(ReaderProbe(link: link, identity: identity, groupKey: groupKey, interfaceByte: interface == .ble ? 0xC3 : 0x5E, recorder: recorder))
    }
}

/// What the phone announced in a first, plain transaction: its FCI and AUTH1 answer.
public struct CredentialProfile: Sendable {
    public var fci: SelectResponse?
    public var signaling: UInt16?
    public var credentialKey: [UInt8]?
    /// Why the discovery transaction stopped, when it did.
    public var problem: String?
    /// Issuer public keys (65 bytes) the phone's documents should verify under (`--issuer`).
    public var issuerKeys: [[UInt8]] = []
    /// The phone was provisioned as the reader-certificate cases' operator prompt says
    /// (`--reader-certificates`): it trusts the official reader issuer key for the official group.
    public var readerCertificates = false
    /// The phone's access credential trusts the sixteen reader groups of NFC_UD_STANDARD_SIXTEEN_GROUPIDENTIFIER_ONE_AC
    /// (`--sixteen-reader-groups`; `OfficialReaderGroups.prompt`).
    public var sixteenReaderGroups = false

    public init(fci: SelectResponse? = nil, signaling: UInt16? = nil, credentialKey: [UInt8]? = nil, problem: String? = nil) {
        self.fci = fci
        self.signaling = signaling
        self.credentialKey = credentialKey
        self.problem = problem
    }

    /// Runs SELECT, AUTH0, AUTH1 and a closing EXCHANGE.
    public static func discover(_ phone: CredentialUnderTest, issuerKeys: [[UInt8]] = []) -> CredentialProfile {
        var profile = CredentialProfile()
        profile.issuerKeys = issuerKeys
        do {
            try phone.transaction("discovery") { p in
                defer { profile.fci = p.fci }
                try p.select()
                try p.auth0()
                try p.auth1()
                profile.signaling = p.signaling
                profile.credentialKey = p.credentialKey
                _ = try? p.exchange(CredentialCatalogue.closingStatus)
            }
        } catch let stop as CheckStop {
            profile.problem = stop.verdict.reason
        } catch {
            profile.problem = "\(error)"
        }
        return profile
    }

    func bit(_ n: Int) -> Bool { (signaling ?? 0) & (1 << n) != 0 }

    /// Why no check but `select.fci` can run: the FCI lists no version LockBench speaks (one fault,
    /// one failed check: the others are not applicable rather than failed).
    var noCommonVersion: String? {
        guard let fci, !fci.versions.contains(where: ReaderProbe.versions.contains) else { return nil }
        return "the phone lists no version LockBench speaks (select.fci)"
    }
}

public typealias CredentialCheck = ConformanceCheck<CredentialUnderTest, CredentialProfile>

/// The checks LockBench runs against a phone it did not build (LockBench plays the reader).
public enum CredentialCatalogue {
    /// `97 02 0100` (secured): what the checks send to close a transaction — no door opened.
    public static let closingStatus: [UInt8] = [0x97, 0x02, 0x01, 0x00]
    /// The version the official case names in AUTH0: one that does not exist.
    public static let unlistedVersion: UInt16 = 0x0001
    /// The unknown tag the public test harness adds (`AA 03 010203`).
    static let unknownTag: [UInt8] = [0xAA, 0x03, 0x01, 0x02, 0x03]

    static let needsAuth1: @Sendable (CredentialProfile) -> String? = { p in
        p.signaling == nil && p.credentialKey == nil ? "the discovery transaction did not complete AUTH1: \(p.problem ?? "?")" : nil
    }

    /// Every check, in the order they run. Without a common version only `select.fci` runs.
    public static let all: [CredentialCheck] = (first + official + certificates).map { check in
        guard check.id != "select.fci" else { return check }
        var gated = check
        gated.applicable = { profile in profile.noCommonVersion ?? check.applicable(profile) }
        return gated
    }

    static let first: [CredentialCheck] = [
        CredentialCheck("select.fci", official: "NFC_UD_STANDARD_NO_CERT", section: "§3", title: "SELECT answers an FCI with AID, versions, A5 proprietary data, optional 7F66") { phone, _ in
            try phone.transaction("select.fci") { p in
                let r = try p.send(Commands.select(AID.expedited))
                try ReaderProbe.expect(r, .success, "SELECT")
                let fci: SelectResponse
                do { fci = try SelectResponse(parsing: r.data) } catch { return .fail("FCI does not parse: \(error)", actual: r.data) }
                guard fci.aid == AID.expedited else { return .fail("84 is not the access AID", expected: AID.expedited, actual: fci.aid) }
                let a5 = try TLV(parsing: fci.proprietaryTLV).children()
                guard let type = a5.first(Tag.FCI.type)?.value, type == [0, 0] else {
                    return .fail("A5 lacks 80 02 0000", expected: [0x80, 0x02, 0x00, 0x00], actual: a5.first.map { Array($0.encoded().prefix(4)) })
                }
                guard fci.versions.contains(where: ReaderProbe.versions.contains) else {
                    return .fail("the FCI lists only versions LockBench does not speak (\(fci.versions.map { Hex.encode($0.bigEndianBytes) }.joined(separator: ","))); it speaks 0100 and 0009")
                }
                if let cmd = fci.maxCommand, let rsp = fci.maxResponse, cmd == 0 || rsp == 0 {
                    return .fail("7F66 announces a zero size (maxCmd \(cmd), maxRsp \(rsp))")
                }
                let versions = fci.versions.map { Hex.encode([UInt8($0 >> 8), UInt8($0 & 0xFF)]) }.joined(separator: ",")
                return .pass("versions \(versions)" + (fci.maxCommand.map { ", 7F66 maxCmd \($0) maxRsp \(fci.maxResponse ?? 0)" } ?? ", no 7F66"))
            }
        },
        CredentialCheck("select.unknown-aid", advisory: true, section: "§11", title: "SELECT of another AID is 6A82") { phone, _ in
            try phone.transaction("select.unknown-aid") { p in
                let r = try p.transmit(Commands.select([0xA0, 0x00, 0x00, 0x09, 0x09, 0xAC, 0xCE, 0x55, 0x7F]).bytes)
                try ReaderProbe.expect(r, .fileNotFound, "SELECT A000000909ACCE557F")
                return .pass("6A82")
            }
        },
        CredentialCheck("auth0.standard", official: "UD-NFC-AUTH0-1.0", section: "§4", title: "AUTH0 without FAST: 86 41 point, no 9D") { phone, _ in
            try phone.transaction("auth0.standard") { p in
                try p.select()
                let answer = try p.auth0(fast: false)
                guard answer.cryptogram == nil else { return .fail("9D cryptogram sent although FAST was not asked (§4)") }
                return .pass("86 41 on P-256")
            }
        },
        CredentialCheck("auth0.fresh-ephemeral", advisory: true, transactions: 2, section: "§4, §12", title: "each AUTH0 answer carries a fresh device ephemeral key") { phone, _ in
            let first = try phone.transaction("auth0.fresh-ephemeral") { p -> [UInt8] in
                try p.select(); return try p.auth0().deviceEphemeralKey
            }
            let second = try phone.transaction("auth0.fresh-ephemeral") { p -> [UInt8] in
                try p.select(); return try p.auth0().deviceEphemeralKey
            }
            return first == second ? .fail("two transactions got the same device ephemeral key (a replayed AUTH0 answer)", actual: first) : .pass("two different keys")
        },
        CredentialCheck("auth0.without-le", advisory: true, section: "§2", title: "AUTH0 without Le: answered normally, or 6701/6700 by a strict device") { phone, _ in
            try phone.transaction("auth0.without-le") { p in
                try p.select()
                let r = try p.sendAuth0(fast: false, le: false)
                switch r.status {
                case .success: _ = try p.acceptAuth0(r); return .pass("answered 9000 (tolerant)")
                case .wrongLengthLe, .wrongLength: return .pass("answered \(r.status) (strict)")
                default: return .fail("answered \(r.status) (\(Names.status(r.status))); expected 9000 or 6701", expected: [0x67, 0x01], actual: r.status.bytes)
                }
            }
        },
        CredentialCheck("auth0.unsupported-version", official: "NFC_UD_NEG_AUTH0_UNSUPPORTED_PROTOCOL_VERSION", section: "§4",
                        title: "AUTH0 naming version 0001 (listed nowhere) is refused with an error status word; CONTROL FLOW after it is answered 9000") { phone, _ in
            try phone.transaction("auth0.unsupported-version") { p in
                let fci = try p.select()
                // The official case's version; any error status word passes it (nfc_ud_neg_auth0_unsupported_protocol_version).
                guard !fci.versions.contains(Self.unlistedVersion) else { return .fail("the FCI lists version 0001, which does not exist") }
                let r = try p.sendAuth0(fast: false, versionOverride: Self.unlistedVersion)
                guard r.status != .success else { return .fail("AUTH0 with version 0001 (not in SELECT) was answered 9000") }
                let cf = try p.transmit(ControlFlow(s1: ControlFlow.finishedWithFailure, s2: ControlFlow.noInformation).apdu.bytes)
                try ReaderProbe.expect(cf, .success, "CONTROL FLOW after the refused AUTH0")
                return .pass("AUTH0 refused \(r.status) (\(Names.status(r.status))); CONTROL FLOW 9000")
            }
        },
        CredentialCheck("auth0.unsupported-version.6a88", advisory: true, section: "§4",
                        title: "advisory: an unsupported version is refused 6A88 (referenced data not found), as LockBench's phone does") { phone, _ in
            try phone.transaction("auth0.unsupported-version.6a88") { p in
                try p.select()
                let r = try p.sendAuth0(fast: false, versionOverride: Self.unlistedVersion)
                guard r.status != .success else { return .fail("AUTH0 with version 0001 was answered 9000") }
                try ReaderProbe.expect(r, .referencedDataNotFound, "AUTH0 with an unlisted version")
                return .pass("6A88")
            }
        },
        CredentialCheck("auth0.extra-tag", official: "NFC_UD_NEG_AUTH0_EXTRA_TAG", section: "§4",
                        title: "AUTH0 with an extra unknown tag: skipped; AUTH1 and EXCHANGE complete") { phone, _ in
            try phone.transaction("auth0.extra-tag") { p in
                try p.select()
                let r = try p.sendAuth0(fast: false, extra: unknownTag)
                try ReaderProbe.expect(r, .success, "AUTH0 with an unknown tag AA (§4: unknown tags are skipped)")
                _ = try p.acceptAuth0(r)
                try p.auth1()
                return try Self.officialClose(p, "AA skipped; transaction completed")
            }
        },
        CredentialCheck("auth1.extra-tag", official: "NFC_UD_NEG_AUTH1_EXTRA_TAG", section: "§6",
                        title: "AUTH1 with an extra unknown tag: skipped; the answer opens") { phone, _ in
            try phone.transaction("auth1.extra-tag") { p in
                try p.select()
                try p.auth0()
                try p.auth1(extra: unknownTag)
                return try Self.officialClose(p, "AA skipped; transaction completed")
            }
        },
        CredentialCheck("auth1.standard", official: "NFC_UD_STANDARD_NO_CERT", section: "§5, §6",
                        title: "AUTH1: the answer opens under ExpeditedSKDevice and the device signature verifies with 5A") { phone, _ in
            try phone.transaction("auth1.standard") { p in
                try p.select()
                let a0 = try p.auth0()
                guard a0.cryptogram == nil else { return .fail("9D cryptogram in a standard AUTH0 answer (User send cryptogram during a standard transaction)") }
                let t = try p.auth1(returnPublicKey: true)
                guard t.first(Tag.Auth1.keySlot) == nil else { return .fail("AUTH1 asked for 5A; the plaintext carries a 4E key slot too") }
                guard t.first(Tag.Auth1.signaling) != nil else { return .fail("the AUTH1 plaintext has no 5E signaling bitmap (the official reader requires it)") }
                guard let key = t.first(Tag.Auth1.credentialKey)?.value else {
                    return .fail("AUTH1 flags asked for 5A; the plaintext has none (tags \(t.map { Hex.encode(TLV.tagBytes($0.tag)) }))")
                }
                guard key.count == 65, Primitives.isPoint(key) else { return .fail("5A is not a 65-byte P-256 point", actual: key) }
                guard let sig = t.first(Tag.Auth1.signature)?.value, sig.count == 64 else { return .fail("9E 40 device signature missing") }
                guard Primitives.verifyRaw(signature: sig, message: p.context!.signedData(reader: false), publicKey: key) else {
                    return .fail("the device signature does not verify over 4D‖86‖87‖4C‖93 4E887B4C with the 5A key (§6)", actual: sig)
                }
                for (tag, length) in [(Tag.Auth1.signaling, 2), (Tag.Auth1.credentialTimestamp, 20), (Tag.Auth1.revocationTimestamp, 20)] {
                    if let v = t.first(tag)?.value, v.count != length {
                        return .fail("\(Hex.encode(TLV.tagBytes(tag))) has \(v.count) bytes, not \(length) (§6)", actual: v)
                    }
                }
                let optional = [Tag.Auth1.credentialTimestamp, Tag.Auth1.revocationTimestamp].filter { t.first($0) == nil }
                return try Self.officialClose(p, "signature verifies" + (optional.isEmpty ? "" : "; optional tags absent: \(optional.map { Hex.encode(TLV.tagBytes($0)) }.joined(separator: " "))"))
            }
        },
        CredentialCheck("auth1.key-slot", advisory: true, section: "§6", title: "AUTH1 without flag bit 0: 4E 08 = SHA-1(credential key)[0:8]",
                        applicable: needsAuth1) { phone, profile in
            try phone.transaction("auth1.key-slot") { p in
                try p.select()
                try p.auth0()
                let t = try p.auth1(returnPublicKey: false)
                guard let slot = t.first(Tag.Auth1.keySlot)?.value else { return .fail("no 4E key slot in the AUTH1 answer") }
                guard let key = profile.credentialKey else { return .notApplicable("the credential key is unknown (no 5A in discovery)") }
                let expected = KeySchedule.keySlot(key)
                return slot == expected ? .pass("4E matches the key") : .fail("4E is not SHA-1(5A)[0:8]", expected: expected, actual: slot)
            }
        },
        CredentialCheck("auth1.bad-reader-signature", official: "NFC_UD_NEG_AUTH1_WRONG_READER_SIGNATURE", section: "§6",
                        title: "AUTH1 with a reader signature that does not verify is refused with 6982") { phone, _ in
            try phone.transaction("auth1.bad-reader-signature") { p in
                try p.select()
                try p.auth0()
                var sig = Primitives.sign(p.context!.signedData(reader: true), with: p.identity.signingKey)
                sig[63] ^= 0xFF
                let r = try p.sendAuth1(signature: sig)
                guard r.status != .success else { return .fail("the phone accepted a wrong reader signature (AUTH1 answered 9000)", expected: [0x69, 0x82], actual: [0x90, 0x00]) }
                try ReaderProbe.expect(r, .securityStatusNotSatisfied, "AUTH1 with a wrong reader signature")
                return .pass("6982")
            }
        },
        CredentialCheck("auth1.untrusted-reader-group", advisory: true, section: "§6",
                        title: "a reader group the phone does not trust is refused (AUTH0 or AUTH1 6982)") { phone, _ in
            try phone.transaction("auth1.untrusted-reader-group") { p in
                try p.select()
                let stranger = P256.Signing.PrivateKey()
                let readerID = SystemRandom().bytes(32)
                let r0 = try p.sendAuth0(fast: false, readerID: readerID)
                guard r0.status == .success else { return .pass("AUTH0 refused with \(r0.status)") }
                _ = try p.acceptAuth0(r0)
                let r = try p.sendAuth1(signingKey: stranger)
                guard r.status != .success else { return .fail("the phone accepted AUTH1 from an unknown reader group \(Array(readerID.prefix(16)).hex)", expected: [0x69, 0x82], actual: [0x90, 0x00]) }
                try ReaderProbe.expect(r, .securityStatusNotSatisfied, "AUTH1 from an untrusted reader group")
                return .pass("6982")
            }
        },
        CredentialCheck("fast.no-key", advisory: true, section: "§8",
                        title: "FAST asked with no shared key: 64 bytes that do not verify, then AUTH1 still works") { phone, _ in
            try phone.transaction("fast.no-key") { p in
                try p.select()
                // A sub id the phone has never seen: it holds no Kpersistent for this reader id.
                let readerID = p.identity.groupID + SystemRandom().bytes(16)
                let answer = try p.auth0(fast: true, readerID: readerID)
                guard let cryptogram = answer.cryptogram else { return .fail("FAST was asked but the answer has no 9D (§4: 64 random bytes when the phone has no key)") }
                guard cryptogram.count == 64 else { return .fail("9D has \(cryptogram.count) bytes, not 64", actual: cryptogram) }
                let r = try p.sendAuth1()
                try ReaderProbe.expect(r, .success, "AUTH1 after a decoy cryptogram (§8)")
                return .pass("64-byte decoy; AUTH1 accepted after it")
            }
        },
        CredentialCheck("fast.cached-key", official: "NFC_UD_FAST", transactions: 2, section: "§8",
                        title: "after a standard transaction, FAST: the cryptogram opens with Kpersistent and EXCHANGE runs under the FAST keys") { phone, _ in
            let cached = try phone.transaction("fast.cached-key") { p -> (credentialKey: [UInt8], key: [UInt8])? in
                try p.select(); try p.auth0(); try p.auth1()
                let k = p.persistentKey()
                _ = try p.exchange(closingStatus)
                return k
            }
            guard let cached else { return .fail("the standard transaction gave no credential key (5A) to bind Kpersistent to") }
            return try phone.transaction("fast.cached-key") { p in
                try p.select()
                let answer = try p.auth0(fast: true)
                guard let cryptogram = answer.cryptogram else { return .fail("User did not send cryptogram during a fast transaction (no 9D)") }
                guard p.openFast(cached) != nil else {
                    return .fail("the cryptogram does not open under CryptogramSK from the Kpersistent of the previous transaction (§8)", actual: cryptogram)
                }
                return try Self.officialClose(p, "cryptogram opens; FAST EXCHANGE answered 00 02 00 00")
            }
        },
        CredentialCheck("exchange.status", official: "UD-NFC-EXCHANGE-1.0", section: "§10", title: "EXCHANGE 97 02 status is answered 00 02 00 00 under the device key, next counter") { phone, _ in
            try phone.transaction("exchange.status") { p in
                try p.select(); try p.auth0(); try p.auth1()
                return try Self.officialClose(p, "0002 0000 at device counter 2")
            }
        },
        CredentialCheck("exchange.counters", advisory: true, transactions: 2, section: "§7", title: "an EXCHANGE with a skipped or replayed counter is refused (6988)") { phone, _ in
            let gap = try phone.transaction("exchange.counters") { p -> ResponseAPDU in
                try p.select(); try p.auth0(); try p.auth1()
                return try p.sendExchange(closingStatus, counter: 2).0
            }
            guard gap.status != .success else { return .fail("EXCHANGE sealed with reader counter 2 as the first message was accepted", expected: [0x69, 0x88], actual: gap.status.bytes) }
            let replay = try phone.transaction("exchange.counters") { p -> ResponseAPDU in
                try p.select(); try p.auth0(); try p.auth1()
                let (first, sealed) = try p.sendExchange(closingStatus)
                try ReaderProbe.expect(first, .success, "the first EXCHANGE")
                return try p.transmit(Commands.exchange(sealed).bytes)
            }
            guard replay.status != .success else { return .fail("a replayed EXCHANGE (reader counter 1 again) was accepted", expected: [0x69, 0x88], actual: replay.status.bytes) }
            return .pass("skipped counter → \(gap.status), replayed counter → \(replay.status)")
        },
        CredentialCheck("exchange.command-chaining", advisory: true, section: "§2",
                        title: "an EXCHANGE sent as a command chain (CLA 90) is reassembled") { phone, _ in
            try phone.transaction("exchange.command-chaining") { p in
                try p.select(); try p.auth0(); try p.auth1()
                let (r, _) = try p.sendExchange(closingStatus, chunk: 8)
                try ReaderProbe.expect(r, .success, "the last part of a chained EXCHANGE")
                guard var ch = p.expedited, let plain = try? ch.open(r.data) else { return .fail("the chained EXCHANGE's answer does not open", actual: r.data) }
                return plain.suffix(4) == ExchangeResponsePlaintext.success ? .pass("3 parts of ≤ 8 bytes reassembled") : .fail("answer plaintext", expected: ExchangeResponsePlaintext.success, actual: plain)
            }
        },
        CredentialCheck("exchange.extended-length", advisory: true, section: "§2",
                        title: "extended-length EXCHANGE when the phone offers it in 7F66",
                        applicable: { p in
                            guard let f = p.fci else { return "no FCI from discovery" }
                            guard let c = f.maxCommand, let r = f.maxResponse, c > 255 || r > 256 else {
                                return "the phone offers no extended length (7F66 \(f.maxCommand.map(String.init) ?? "absent")/\(f.maxResponse.map(String.init) ?? "absent"))"
                            }
                            return nil
                        }) { phone, _ in
            try phone.transaction("exchange.extended-length") { p in
                try p.select(); try p.auth0(); try p.auth1()
                guard var ch = p.expedited else { return .fail("no channel") }
                let sealed = try ch.seal(closingStatus)
                let apdu: [UInt8] = [0x80, 0xC9, 0x00, 0x00, 0x00, 0x00, UInt8(sealed.count)] + sealed + [0x00, 0x00]
                let r = try p.transmit(apdu)
                try ReaderProbe.expect(r, .success, "an extended-length EXCHANGE")
                guard (try? ch.open(r.data)) != nil else { return .fail("the answer does not open", actual: r.data) }
                return .pass("extended-length EXCHANGE answered")
            }
        },
        CredentialCheck("stepup.with-select", advisory: true, section: "§9",
                        title: "step-up SELECT, then ENVELOPE with a DeviceRequest: a well-formed DeviceResponse", applicable: needsAuth1) { phone, profile in
            try phone.transaction("stepup.with-select") { p in
                try p.select(); try p.auth0(); try p.auth1()
                let s = try p.send(Commands.select(AID.stepUp))
                if s.status != .success {
                    if !profile.bit(2) {
                        return .pass("step-up SELECT answered \(s.status); allowed, the phone did not ask for it (5E bit 2 clear)")
                    }
                    return .fail("the phone asked for the step-up SELECT (5E bit 2) but answered it \(s.status)", expected: [0x90, 0x00], actual: s.status.bytes)
                }
                guard let fci = try? TLV(parsing: s.data), fci.tag == Tag.FCI.template, (try? fci.children().first(Tag.FCI.aid)?.value) == AID.stepUp else {
                    return .fail("step-up SELECT answer is not 6F { 84 step-up AID }", expected: StepUpSelectResponse.encoded(), actual: s.data)
                }
                return try Self.envelopeVerdict(p, profile)
            }
        },
        CredentialCheck("stepup.without-select", advisory: true, section: "§9", title: "ENVELOPE without the step-up SELECT: accepted when 5E bit 2 is clear, refused when set",
                        applicable: needsAuth1) { phone, profile in
            try phone.transaction("stepup.without-select") { p in
                try p.select(); try p.auth0(); try p.auth1()
                if profile.bit(2) {
                    let (r, _) = try p.envelope()
                    return r.status == .success ? .fail("5E bit 2 asks for the step-up SELECT, yet ENVELOPE without it was answered 9000")
                        : .pass("refused with \(r.status) (bit 2 set)")
                }
                return try Self.envelopeVerdict(p, profile)
            }
        },
        CredentialCheck("stepup.response-chaining", advisory: true, section: "§2, §9", title: "a long ENVELOPE answer follows 61xx with GET RESPONSE of a small Le (64)",
                        applicable: needsAuth1) { phone, profile in
            try phone.transaction("stepup.response-chaining") { p in
                try p.select(); try p.auth0(); try p.auth1()
                try Self.optionalStepUpSelect(p, profile)
                let (r, response) = try p.envelope(getResponseLe: 64)
                try ReaderProbe.expect(r, .success, "ENVELOPE")
                guard response != nil else { return .fail("no DeviceResponse") }
                guard r.data.count > 256 else { return .notApplicable("the ENVELOPE answer is \(r.data.count) bytes: it fits one response, nothing to chain") }
                return .pass("\(r.data.count) bytes reassembled from parts of ≤ 64")
            }
        },
        CredentialCheck("stepup.closing-exchange", advisory: true, section: "§9, §10", title: "after ENVELOPE, the closing EXCHANGE on the step-up channel is accepted",
                        applicable: needsAuth1) { phone, profile in
            try phone.transaction("stepup.closing-exchange") { p in
                try p.select(); try p.auth0(); try p.auth1()
                try Self.optionalStepUpSelect(p, profile)
                let (r, _) = try p.envelope()
                try ReaderProbe.expect(r, .success, "ENVELOPE")
                let reply = try p.exchange(closingStatus, on: .stepUp)
                return reply.suffix(4) == ExchangeResponsePlaintext.success ? .pass("accepted on the step-up channel (SKReader counter 2)")
                    : .fail("answer plaintext", expected: ExchangeResponsePlaintext.success, actual: reply)
            }
        },
        CredentialCheck("mailbox.read", official: "NFC_UD_EXCHANGE_READ_REQUEST", section: "§10", title: "mailbox reads (two EXCHANGEs, 2 and 3 reads): one len2 ‖ data item per read, then 00 02 00 00",
                        applicable: { p in needsAuth1(p) ?? (p.bit(4) ? nil : "the case needs a readable mailbox of 0x4C bytes (5E bit 4)") }) { phone, _ in
            try phone.transaction("mailbox.read") { p in
                try p.select(); try p.auth0(); try p.auth1()
                // The official ranges (overlapping); the case counts items, it does not compare lengths.
                let first: [MailboxOperation] = [.read(offset: 0x00, length: 8), .read(offset: 0x04, length: 7)]
                let second: [MailboxOperation] = [.read(offset: 0x19, length: 7), .read(offset: 0x20, length: 4), .read(offset: 0x44, length: 8)]
                let a = try officialReads(try p.exchange(mailbox(first, atomic: false)), count: 2)
                let b = try officialReads(try p.exchange(mailbox(second, atomic: false)), count: 3)
                return try Self.officialClose(p, "read \((a + b).map(\.count)) bytes")
            }
        },
        CredentialCheck("mailbox.write", advisory: true, section: "§10", title: "mailbox write, then read back the bytes written",
                        applicable: { p in needsAuth1(p) ?? (p.bit(5) ? nil : "the phone announces no writable mailbox (5E bit 5 clear)") }) { phone, _ in
            try phone.transaction("mailbox.write") { p in
                try p.select(); try p.auth0(); try p.auth1()
                let read = TLV(Tag.Exchange.mailboxOperations, children: [TLV(Tag.Exchange.read, [0, 0, 0, 4])]).encoded()
                let before = try Self.mailboxReads(try p.exchange(read), lengths: [4])![0]
                let flipped = before.map { ~$0 }
                let ack = try p.exchange(TLV(Tag.Exchange.mailboxOperations, children: [TLV(Tag.Exchange.write, [0, 0] + flipped)]).encoded())
                guard ack == ExchangeResponsePlaintext.success else { return .fail("write answer", expected: ExchangeResponsePlaintext.success, actual: ack) }
                let after = try Self.mailboxReads(try p.exchange(read), lengths: [4])![0]
                _ = try? p.exchange(TLV(Tag.Exchange.mailboxOperations, children: [TLV(Tag.Exchange.write, [0, 0] + before)]).encoded())
                return after == flipped ? .pass("wrote and read back 4 bytes (then restored them)") : .fail("read after write", expected: flipped, actual: after)
            }
        },
        CredentialCheck("control-flow", advisory: true, section: "§10", title: "CONTROL FLOW 41 01 00 42 01 27 (no Le) after AUTH0 is answered 9000") { phone, _ in
            try phone.transaction("control-flow") { p in
                try p.select(); try p.auth0()
                let r = try p.controlFlow()
                try ReaderProbe.expect(r, .success, "CONTROL FLOW")
                return .pass("9000")
            }
        },
        CredentialCheck("control-flow.with-le", advisory: true, section: "§2", title: "CONTROL FLOW with Le: answered 9000, or 6701/6700 by a strict device") { phone, _ in
            try phone.transaction("control-flow.with-le") { p in
                try p.select(); try p.auth0()
                let r = try p.controlFlow(le: true)
                switch r.status {
                case .success: return .pass("9000 (tolerant)")
                case .wrongLengthLe, .wrongLength: return .pass("\(r.status) (strict)")
                default: return .fail("answered \(r.status) (\(Names.status(r.status)))", expected: [0x67, 0x01], actual: r.status.bytes)
                }
            }
        },
        CredentialCheck("sequence.out-of-order", advisory: true, section: "§11", title: "AUTH1 or EXCHANGE before AUTH0, and GET RESPONSE with nothing pending, are 6985") { phone, _ in
            try phone.transaction("sequence.out-of-order") { p in
                try p.select()
                let auth1 = try p.transmit(Auth1Command(flags: 1, signature: [UInt8](repeating: 1, count: 64)).apdu.bytes)
                try ReaderProbe.expect(auth1, .conditionsNotSatisfied, "AUTH1 right after SELECT")
                try p.select()
                let exchange = try p.transmit(Commands.exchange([UInt8](repeating: 0, count: 20)).bytes)
                try ReaderProbe.expect(exchange, .conditionsNotSatisfied, "EXCHANGE right after SELECT")
                try p.select()
                let get = try p.transmit([0x00, 0xC0, 0x00, 0x00, 0x10])
                try ReaderProbe.expect(get, .conditionsNotSatisfied, "GET RESPONSE with nothing pending")
                return .pass("6985 three times")
            }
        },
        CredentialCheck("ins.unknown", advisory: true, section: "§11", title: "an unknown INS is 6D00") { phone, _ in
            try phone.transaction("ins.unknown") { p in
                try p.select()
                let r = try p.transmit([0x80, 0x77, 0x00, 0x00, 0x00])
                try ReaderProbe.expect(r, .insNotSupported, "INS 77")
                return .pass("6D00")
            }
        },
    ]

    /// The official cases' closing EXCHANGE `97 02 01 01`, answered exactly `00 02 00 00`.
    static func officialClose(_ p: ReaderProbe, _ pass: String) throws -> CheckVerdict {
        let reply = try p.exchange(officialClosing)
        return reply == ExchangeResponsePlaintext.success ? .pass(pass)
            : .fail("EXCHANGE 97 02 01 01 answer plaintext (the official reader requires 00 02 00 00)", expected: ExchangeResponsePlaintext.success, actual: reply)
    }

    /// The step-up SELECT, required only when 5E bit 2 asks for it: checks about what follows
    /// it send it either way, so they do not depend on the phone's SELECT policy.
    static func optionalStepUpSelect(_ p: ReaderProbe, _ profile: CredentialProfile) throws {
        let r = try p.send(Commands.select(AID.stepUp))
        if profile.bit(2) { try ReaderProbe.expect(r, .success, "step-up SELECT (5E bit 2 set)") }
    }

    /// ENVELOPE and the DeviceResponse's structure (§9), then a closing EXCHANGE on either channel.
    static func envelopeVerdict(_ p: ReaderProbe, _ profile: CredentialProfile) throws -> CheckVerdict {
        let (r, response) = try p.envelope()
        try ReaderProbe.expect(r, .success, "ENVELOPE")
        guard let response else { return .fail("no DeviceResponse") }
        guard response.version == "1.0" else { return .fail("DeviceResponse version \"\(response.version)\", expected \"1.0\"") }
        guard response.status == 0 else { return .fail("DeviceResponse status \(response.status), expected 0") }
        for d in response.documents where ![DocType.access, DocType.revocation].contains(DeviceResponse.docType(of: d) ?? "") {
            return .fail("a document has docType \(DeviceResponse.docType(of: d) ?? "none"), not aliro-a or aliro-r", actual: Array(d.prefix(24)))
        }
        if profile.bit(0) && response.accessDocuments.isEmpty {
            return .fail("5E bit 0 announces an access document, the DeviceResponse has none")
        }
        return .pass("DeviceResponse 1.0 with \(response.accessDocuments.count) access and \(response.revocationDocuments.count) revocation document(s)")
    }

    /// Splits an EXCHANGE answer `len2 ‖ data …, 00 02 SS SS` (§10) for reads of `lengths`.
    static func mailboxReads(_ reply: [UInt8], lengths: [Int]) throws -> [[UInt8]]? {
        var at = 0
        var out: [[UInt8]] = []
        for want in lengths {
            guard at + 2 <= reply.count else { throw CheckStop(.fail("mailbox answer ends before the length of read \(out.count + 1)", actual: reply)) }
            let len = Int(reply[at]) << 8 | Int(reply[at + 1])
            guard len == want, at + 2 + len <= reply.count else {
                throw CheckStop(.fail("mailbox read of \(want) bytes answered length \(len) (§10: len2 ‖ data per read, then 00 02 SS SS)",
                                      expected: [UInt8(want >> 8), UInt8(want & 0xFF)], actual: Array(reply[at..<min(reply.count, at + 2)])))
            }
            out.append(Array(reply[(at + 2)..<(at + 2 + len)]))
            at += 2 + len
        }
        let tail = Array(reply[at...])
        guard tail == ExchangeResponsePlaintext.success else {
            throw CheckStop(.fail("after the reads, the answer must end 00 02 00 00", expected: ExchangeResponsePlaintext.success, actual: tail))
        }
        return out
    }
}
