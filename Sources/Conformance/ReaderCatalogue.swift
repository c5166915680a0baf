import AccessProtocol
import ByteCore
import Codecs
import Crypto
import Foundation
import OfflineUnlock
import PhoneSeam
import Synchronization

/// What the reader under test did in one transaction, as the phone saw it.
public struct ObservedTransaction: Sendable {
    public var exchanges: [(command: [UInt8], response: [UInt8])] = []
    /// Each whole command (chains assembled), in order.
    public var commands: [CommandAPDU] = []
    /// The reader status of an EXCHANGE the phone opened.
    public var readerStatus: UInt16?
    public var controlFlow: ControlFlow?
    /// The INS of each whole command, named.
    public var names: [String] { commands.map { Names.command($0) } }
    public func first(_ ins: UInt8) -> CommandAPDU? { commands.first { $0.ins == ins } }
    public func all(_ ins: UInt8) -> [CommandAPDU] { commands.filter { $0.ins == ins } }
    /// The answer status to the whole command at `index` in `commands`.
    public var answers: [StatusWord] = []
    public var ended: Bool { readerStatus != nil || controlFlow != nil }

    /// `SELECT, AUTH0, AUTH1, EXCHANGE 0101` — the flow in a line.
    public var summary: String {
        var parts = names
        if let s = readerStatus { parts.append("status \(Hex.encode([UInt8(s >> 8), UInt8(s & 0xFF)])) (\(Names.readerStatus(s)))") }
        if let c = controlFlow { parts.append("S1 \(Hex.encode([c.s1])) S2 \(Hex.encode([c.s2]))") }
        return parts.isEmpty ? "nothing" : parts.joined(separator: ", ")
    }
}

/// A LockBench phone with a fault or tweak, recording everything the reader sends (an
/// `APDUResponder` for any radio). Thread-safe: transports answer on their own threads.
public final class ObservingPhone: APDUResponder {
    public let session: CredentialSession
    let recorder: TranscriptRecorder?
    let random: RecordingRandom
    private struct Watch {
        var observed = ObservedTransaction()
        var assembler = CommandAssembler()
    }
    private let watch = Monitor(Watch())

    init(session: CredentialSession, random: RecordingRandom, recorder: TranscriptRecorder?) {
        self.session = session
        self.random = random
        self.recorder = recorder
    }

    public func reset() { session.reset() }

    public func respond(to command: [UInt8]) -> [UInt8] {
        recorder?.record(.command, command)
        let answer = session.respond(to: command)
        let parsed = try? CommandAPDU(parsing: command)
        recorder?.record(.response, answer)
        watch.withLock { watch in observe(command, answer, parsed, in: &watch) }
        return answer
    }

    private func observe(_ command: [UInt8], _ answer: [UInt8], _ parsed: CommandAPDU?, in watch: inout Watch) {
        watch.observed.exchanges.append((command, answer))
        guard let parsed, parsed.ins != Instruction.getResponse else { return }
        if case .complete(let whole)? = try? watch.assembler.feed(parsed) {
            watch.observed.commands.append(whole)
            let sw = answer.count >= 2 ? StatusWord(answer[answer.count - 2], answer[answer.count - 1]) : .noPreciseDiagnosis
            watch.observed.answers.append(sw)
            switch whole.ins {
            case Instruction.exchange where sw == .success || sw.isBytesRemaining:
                watch.observed.readerStatus = session.lastReaderStatus
            case Instruction.controlFlow:
                watch.observed.controlFlow = try? ControlFlow(parsing: whole.data)
            case Instruction.auth0 where answer.count > 67 && answer[0] == 0x86:
                // Keep the phone's ephemeral private key for the transcript (--transcript-secrets).
                if let key = random.privateKey(for: Array(answer[2..<67])) { recorder?.secret("ephemeral-private", key) }
            default: break
            }
        }
    }

    /// Starts a new observation (one per presentation).
    public func beginTransaction() {
        watch.withLock { $0 = Watch() }
    }

    public var observation: ObservedTransaction { watch.withLock { $0.observed } }

    /// Waits until the reader ended the transaction (EXCHANGE with a status, or CONTROL FLOW), then
    /// `settle` more seconds for a last command; false on timeout.
    @discardableResult
    public func waitUntilEnded(timeout: TimeInterval, settle: TimeInterval = 0.2) -> Bool {
        let ended = watch.wait(until: Date(timeIntervalSinceNow: timeout), for: \.observed.ended) { _, ended in ended }
        guard ended else { return false }
        Thread.sleep(forTimeInterval: settle)
        return true
    }
}

/// Records each 32-byte draw so the ephemeral private key behind an AUTH0 answer can be written
/// to a transcript (only with --transcript-secrets).
final class RecordingRandom: RandomSource {
    private let inner = SystemRandom()
    private let draws = Mutex<[[UInt8]]>([])

    func bytes(_ count: Int) -> [UInt8] {
        let b = inner.bytes(count)
        if count == 32 { draws.withLock { draws in draws.append(b); if draws.count > 64 { draws.removeFirst() } } }
        return b
    }

    func privateKey(for publicKey: [UInt8]) -> [UInt8]? {
        draws.withLock { draws in
            draws.last { (try? P256.KeyAgreement.PrivateKey(rawRepresentation: $0)).map { Array($0.publicKey.x963Representation) } == publicKey }
        }
    }
}

/// A reader under test and how to make phones for it: the phone's key, documents and the
/// reader it trusts come from the user (the same files as `credential serve`).
public final class ReaderUnderTest {
    /// The radio the phone is presented on (`PhoneRadioSpec`: socket, virtual PN532, vpicc, BLE).
    public let radio: any PhoneRadio
    public let base: CredentialConfiguration
    public let recorder: TranscriptRecorder?
    /// Seconds to wait for the reader to finish a transaction.
    public var timeout: TimeInterval
    /// The site issuer's private key (`--issuer-key`): the step-up cases mint documents with it.
    public var issuer: P256.Signing.PrivateKey?
    /// The issuer CA's private key (`--issuer-ca-key`), which the lock trusts: the issuer
    /// certificate cases certify the issuer with it.
    public var issuerCA: P256.Signing.PrivateKey?
    /// The lock's time, around which minted documents are valid (`--now`).
    public var now: Date

    public init(radio: any PhoneRadio, base: CredentialConfiguration, recorder: TranscriptRecorder? = nil, timeout: TimeInterval = 15,
                issuer: P256.Signing.PrivateKey? = nil, issuerCA: P256.Signing.PrivateKey? = nil, now: Date = Date()) {
        self.radio = radio
        self.base = base
        self.recorder = recorder
        self.timeout = timeout
        self.issuer = issuer
        self.issuerCA = issuerCA
        self.now = now
        for r in base.trustedReaders { recorder?.readerKey(group: r.groupID, publicKey: r.publicKey) }
    }

    /// A phone: the user's, with faults and tweaks, tolerant of a missing Le so it can report it.
    /// `fastCache`: the Kpersistent a phone learnt before (the same phone with new documents).
    public func phone(faults: CredentialFaults = [], fastCache: FastCache? = nil,
                      tweak: (inout CredentialConfiguration) -> Void = { _ in }) -> ObservingPhone {
        var c = base
        c.faults = faults
        c.strictLe = false
        tweak(&c)
        let random = RecordingRandom()
        return ObservingPhone(session: CredentialSession(configuration: c, fastCache: fastCache, random: random), random: random, recorder: recorder)
    }

    /// One transaction with `phone`.
    public func present(_ phone: ObservingPhone, _ label: String) throws -> ObservedTransaction {
        recorder?.begin(["check": label, "interface": base.interface.rawValue])
        phone.beginTransaction()
        do { _ = try radio.present(phone, timeout: timeout) } catch {
            throw CheckStop(.fail("the reader did not run a transaction: \(error)"))
        }
        let seen = phone.observation
        guard !seen.commands.isEmpty else { throw CheckStop(.fail("the reader sent no command")) }
        return seen
    }
}

public typealias ReaderCheck = ConformanceCheck<ReaderUnderTest, Void>

/// The checks LockBench runs against a lock or reader it did not build (LockBench plays the phone).
public enum ReaderCatalogue {
    /// Fails unless the reader told the phone it refused: an EXCHANGE with a failure status or a
    /// CONTROL FLOW, as `official` expects.
    static func refused(_ t: ObservedTransaction, expectExchange: Bool, _ what: String) -> CheckVerdict {
        if let s = t.readerStatus {
            if !Names.isFailureStatus(s) {
                return .fail("\(what): the reader accepted it (EXCHANGE status \(Hex.encode([UInt8(s >> 8), UInt8(s & 0xFF)])) \(Names.readerStatus(s)))")
            }
            return .pass("refused with EXCHANGE status \(Hex.encode([UInt8(s >> 8), UInt8(s & 0xFF)])) (\(Names.readerStatus(s)))")
        }
        if let c = t.controlFlow {
            if expectExchange {
                return .fail("\(what): the reader sent CONTROL FLOW \(Hex.encode(c.encoded())); a secure channel exists, so the official case expects an EXCHANGE carrying a failure reader status",
                             expected: [0x97, 0x02], actual: c.encoded())
            }
            return .pass("refused with CONTROL FLOW S1 \(Hex.encode([c.s1])) S2 \(Hex.encode([c.s2]))")
        }
        return .fail("\(what): the reader neither sent EXCHANGE nor CONTROL FLOW (saw \(t.summary))")
    }

    /// What the official tool's phone checks on every reader command of every case: Le `00` on
    /// SELECT, AUTH0, AUTH1 and EXCHANGE, none on CONTROL FLOW (`Command.parse_as_*`, `_check_le`),
    /// and — in every case but the FAST one's second tap — a standard AUTH0 ("either fast
    /// transaction was requested or handling auth0 failed"). nil when all hold.
    static func officialCommandProblems(_ t: ObservedTransaction, standard: Bool = true) -> String? {
        let needLe: Set<UInt8> = [Instruction.select, Instruction.auth0, Instruction.loadCert, Instruction.auth1, Instruction.exchange]
        for c in t.commands {
            if c.ins == Instruction.controlFlow, let le = c.le { return "CONTROL FLOW carries Le \(le); the official phone refuses it" }
            if needLe.contains(c.ins), c.le != 256 { return "\(Names.command(c)) has Le \(c.le.map(String.init) ?? "absent"), not 00; the official phone refuses it" }
        }
        if standard, let a = t.first(Instruction.auth0), let auth0 = try? Auth0Command(parsing: a.data), auth0.flags & Auth0Command.flagFast != 0 {
            return "AUTH0 asks for FAST (flags \(Hex.encode([auth0.flags]))); the official case requires a standard AUTH0 here (a reader that has met no phone, or one set for standard transactions)"
        }
        return nil
    }

    /// The official verdict after `officialCommandProblems`.
    static func official(_ t: ObservedTransaction, standard: Bool = true, _ verdict: () -> CheckVerdict) -> CheckVerdict {
        if let problem = officialCommandProblems(t, standard: standard) { return .fail(problem) }
        return verdict()
    }

    /// The command after the first `ins` must be exactly CONTROL FLOW `41 01 00 42 01 S2` (an
    /// optional 43 allowed), with no other command in between.
    static func nextIsControlFlow(_ t: ObservedTransaction, after ins: UInt8, s2: UInt8, _ what: String) -> CheckVerdict {
        guard let i = t.commands.firstIndex(where: { $0.ins == ins }) else { return .fail("no \(Names.command([0x80, ins])) (saw \(t.summary))") }
        guard i + 1 < t.commands.count, t.commands[i + 1].ins == Instruction.controlFlow else {
            return .fail("after \(what) the next command is not CONTROL FLOW (saw \(t.summary))")
        }
        guard let c = try? ControlFlow(parsing: t.commands[i + 1].data) else { return .fail("CONTROL FLOW data does not parse", actual: t.commands[i + 1].data) }
        let expected = ControlFlow(s1: ControlFlow.finishedWithFailure, s2: s2)
        return c.s1 == expected.s1 && c.s2 == expected.s2 ? .pass("CONTROL FLOW 41 01 00 42 01 \(Hex.encode([s2]))")
            : .fail("CONTROL FLOW after \(what)", expected: expected.encoded(), actual: c.encoded())
    }

    /// The reader-certificate cases need the reader provisioned with a certificate and the phone
    /// trusting its CA for the reader's group (their operator prompt): not applicable otherwise.
    static func presentCertificateCase(_ reader: ReaderUnderTest, _ label: String) throws -> ObservedTransaction? {
        guard reader.base.trustedReaders.contains(where: \.issuerCA) else { return nil }
        return try reader.present(reader.phone(), label)
    }

    static let noIssuerCA = CheckVerdict.notApplicable("the phone trusts no reader issuer CA: provision the lock with a reader certificate "
        + "(`lockbench key reader-cert`, \"reader\": {\"certificate\": …}) and trust its CA for the lock's group (--trust-reader lock.json, or --reader-issuer-ca GROUP=FILE)")

    /// The verdict of the four NFC_RDR_STANDARD_CERT_* cases: the certificate arrives where the
    /// case says (AUTH1 `90`, or LOAD CERT right after AUTH0), chained or not as it says, and the
    /// phone accepted it (`hasattr(session, "cert")`: LOAD CERT and AUTH1 answered 9000 — the phone
    /// verifies the certificate under the group's CA and AUTH1 under its subject key); an EXCHANGE
    /// after AUTH1 decrypts.
    static func certificateVerdict(_ t: ObservedTransaction, loadCert: Bool, chained: Bool) -> CheckVerdict {
        guard let i0 = t.commands.firstIndex(where: { $0.ins == Instruction.auth0 }) else { return .fail("no AUTH0 (saw \(t.summary))") }
        guard let i1 = t.commands.firstIndex(where: { $0.ins == Instruction.auth1 }) else { return .fail("no AUTH1 (saw \(t.summary))") }
        let ins = loadCert ? Instruction.loadCert : Instruction.auth1
        let what = loadCert ? "LOAD CERT" : "AUTH1"
        if loadCert {
            guard i0 + 1 < t.commands.count, t.commands[i0 + 1].ins == Instruction.loadCert else {
                return .fail("the command after AUTH0 is not LOAD CERT (saw \(t.summary))")
            }
            guard t.answers[i0 + 1] == .success else { return .fail("the phone refused LOAD CERT (\(t.answers[i0 + 1]))", actual: t.answers[i0 + 1].bytes) }
        } else {
            guard (try? Auth1Command(parsing: t.commands[i1].data))?.certificate != nil else { return .fail("Certificate was not passed in AUTH1 (no 90)") }
        }
        // The parts on the wire: a chain is more than one, all but the last with CLA bit 10.
        let parts = t.exchanges.filter { $0.command.count >= 2 && $0.command[1] == ins }.map(\.command)
        if chained && parts.count < 2 { return .fail("\(what) was sent without chaining (one APDU of \(parts.first?.count ?? 0) bytes)") }
        if !chained && parts.count > 1 { return .fail("\(what) was sent with chaining (\(parts.count) parts)") }
        guard t.answers[i1] == .success else {
            return .fail("the phone refused AUTH1 (\(t.answers[i1])): the certificate does not verify under the group's CA, or AUTH1 is not signed by the key it names",
                         actual: t.answers[i1].bytes)
        }
        if i1 + 1 < t.commands.count, t.commands[i1 + 1].ins == Instruction.exchange, t.answers[i1 + 1] != .success {
            return .fail("the EXCHANGE after AUTH1 does not decrypt (\(t.answers[i1 + 1]))")
        }
        return .pass("certificate in \(what)\(chained ? ", chained in \(parts.count) parts" : ", one APDU"); \(t.summary)")
    }

    /// Le on every command that takes one, none on CONTROL FLOW (§2).
    static func leProblems(_ t: ObservedTransaction) -> String? {
        let needLe: Set<UInt8> = [Instruction.select, Instruction.auth0, Instruction.auth1, Instruction.exchange, Instruction.envelope]
        for c in t.commands {
            if c.ins == Instruction.controlFlow, let le = c.le { return "CONTROL FLOW carries Le \(le)" }
            if needLe.contains(c.ins), c.le == nil { return "\(Names.command(c)) has no Le" }
        }
        return nil
    }

    /// rdr.exchange-mailbox comes first: the official case meets a lock whose bolt is secured,
    /// and a lock reports its bolt's real state — one opened by an earlier check's grant (a frozen
    /// clock never relocks) would answer 0101. It uses a fresh key, so rdr.step-up, next, still
    /// meets a lock that has never seen the phone's key and needs its documents.
    public static let all: [ReaderCheck] = [
        ReaderCheck("rdr.exchange-mailbox", official: "NFC_RDR_EXCHANGE_MAILBOX", section: "§10",
                    title: "a phone the reader does not know, with no document and a 32-byte mailbox: only EXCHANGEs after AUTH1, the closing one 97 02 01 00 (secured)") { reader, _ in
            let phone = reader.phone {
                $0.signingKey = P256.Signing.PrivateKey()
                $0.accessDocuments = []
                $0.revocationDocuments = []
                $0.mailbox = try? Mailbox([UInt8](repeating: 0, count: 32))
            }
            let t = try reader.present(phone, "rdr.exchange-mailbox")
            return official(t) { exchangeMailboxVerdict(t) }
        },
        ReaderCheck("rdr.step-up", official: "NFC_RDR_STEPUP_AD_ACCESS_RULE", section: "§9",
                    title: "a phone whose key the reader never saw: ENVELOPE right after AUTH1, naming the access element; EXCHANGE on the step-up channel grants") { reader, _ in
            let phone = reader.phone()
            let t = try reader.present(phone, "rdr.step-up")
            return official(t) { stepUpVerdict(t, phone, grant: true) }
        },
        ReaderCheck("rdr.standard", official: "NFC_RDR_STANDARD_NO_CERT", section: "§1, §6, §10",
                    title: "SELECT, a standard AUTH0, an AUTH1 whose signature verifies, then a command that parses") { reader, _ in
            let t = try reader.present(reader.phone(), "rdr.standard")
            return official(t) {
                guard let i = t.commands.firstIndex(where: { $0.ins == Instruction.auth1 }) else { return .fail("no AUTH1 (saw \(t.summary))") }
                guard t.answers[i] == .success else { return .fail("the phone refused AUTH1 (\(t.answers[i]): the reader signature does not verify)", actual: t.answers[i].bytes) }
                guard t.commands.count > i + 1 else { return .fail("nothing after AUTH1 (saw \(t.summary))") }
                return .pass(t.summary)
            }
        },
        ReaderCheck("rdr.cert.auth1", official: "NFC_RDR_STANDARD_CERT_IN_AUTH1_NO_CHAINING", section: "§6",
                    title: "a standard AUTH0, then AUTH1 carrying the reader certificate in 90 in one APDU; the certificate verifies; EXCHANGE decrypts") { reader, _ in
            guard let t = try presentCertificateCase(reader, "rdr.cert.auth1") else { return noIssuerCA }
            return official(t) { certificateVerdict(t, loadCert: false, chained: false) }
        },
        ReaderCheck("rdr.cert.auth1-chained", official: "NFC_RDR_STANDARD_CERT_IN_AUTH1_WITH_CHAINING", section: "§2, §6",
                    title: "AUTH1 asking for the credential public key, carrying the reader certificate in 90, command-chained; EXCHANGE decrypts") { reader, _ in
            guard let t = try presentCertificateCase(reader, "rdr.cert.auth1-chained") else { return noIssuerCA }
            return official(t) {
                if let a = t.first(Instruction.auth1), let cmd = try? Auth1Command(parsing: a.data), cmd.flags & Auth1Command.flagReturnPublicKey == 0 {
                    return .fail("AUTH1 flags \(Hex.encode([cmd.flags])): the case requires the credential public key (bit 0 set)")
                }
                return certificateVerdict(t, loadCert: false, chained: true)
            }
        },
        ReaderCheck("rdr.cert.load-cert", official: "NFC_RDR_STANDARD_CERT_IN_LOAD_CERT_NO_CHAINING", section: "§6",
                    title: "right after a standard AUTH0, LOAD CERT in one APDU; the certificate verifies; AUTH1, then EXCHANGE decrypts") { reader, _ in
            guard let t = try presentCertificateCase(reader, "rdr.cert.load-cert") else { return noIssuerCA }
            return official(t) { certificateVerdict(t, loadCert: true, chained: false) }
        },
        ReaderCheck("rdr.cert.load-cert-chained", official: "NFC_RDR_STANDARD_CERT_IN_LOAD_CERT_WITH_CHAINING", section: "§2, §6",
                    title: "right after a standard AUTH0, LOAD CERT command-chained; the certificate verifies; AUTH1, then EXCHANGE decrypts") { reader, _ in
            guard let t = try presentCertificateCase(reader, "rdr.cert.load-cert-chained") else { return noIssuerCA }
            return official(t) { certificateVerdict(t, loadCert: true, chained: true) }
        },
        ReaderCheck("rdr.auth0-fields", advisory: true, section: "§4",
                    title: "AUTH0: 41 42 5C 87 4C 4D in order, lengths right, a version the phone listed, a fresh P-256 key") { reader, _ in
            let phone = reader.phone()
            let t = try reader.present(phone, "rdr.auth0-fields")
            guard let c = t.first(Instruction.auth0) else { return .fail("no AUTH0 (saw \(t.summary))") }
            guard c.cla == 0x80, c.p1 == 0, c.p2 == 0 else { return .fail("AUTH0 header", expected: [0x80, 0x80, 0, 0], actual: Array(c.bytes.prefix(4))) }
            let a: Auth0Command
            do { a = try Auth0Command(parsing: c.data) } catch { return .fail("AUTH0 data: \(error)", actual: c.data) }
            guard reader.base.versions.contains(a.version) else { return .fail("AUTH0 chose version \(a.version), not among the phone's", actual: [UInt8(a.version >> 8), UInt8(a.version & 0xFF)]) }
            guard (1...3).contains(a.policy) else { return .fail("AUTH0 policy \(a.policy) is not 01, 02 or 03", actual: [a.policy]) }
            guard Primitives.isPoint(a.readerEphemeralKey) else { return .fail("87 is not a P-256 point", actual: a.readerEphemeralKey) }
            return .pass("flags \(Hex.encode([a.flags])), policy \(Hex.encode([a.policy])), version \(Hex.encode([UInt8(a.version >> 8), UInt8(a.version & 0xFF)]))")
        },
        ReaderCheck("rdr.le", advisory: true, section: "§2", title: "Le on SELECT, AUTH0, AUTH1, EXCHANGE and ENVELOPE; none on CONTROL FLOW") { reader, _ in
            let t = try reader.present(reader.phone(), "rdr.le")
            if let problem = leProblems(t) { return .fail(problem) }
            return .pass("every command as §2 says (\(t.commands.count) commands)")
        },
        ReaderCheck("rdr.response-chaining", advisory: true, section: "§2", title: "the reader follows 61xx with GET RESPONSE (phone answers in parts of 32 bytes)") { reader, _ in
            let t = try reader.present(reader.phone(tweak: { $0.responseChunk = 32 }), "rdr.response-chaining")
            let gets = t.exchanges.filter { $0.command.count >= 2 && $0.command[1] == Instruction.getResponse }.count
            guard gets > 0 else { return .fail("no GET RESPONSE although every long answer ended 61xx (saw \(t.summary))") }
            guard t.ended else { return .fail("the transaction did not end after chained answers (saw \(t.summary))") }
            return .pass("\(gets) GET RESPONSE; \(t.summary)")
        },
        ReaderCheck("rdr.fast", official: "NFC_RDR_FAST", transactions: 2, section: "§8",
                    title: "tap 1: a standard transaction; tap 2 of the same phone: AUTH0 asks FAST and an EXCHANGE follows at once (no AUTH1)") { reader, _ in
            let phone = reader.phone()
            let first = try reader.present(phone, "rdr.fast")
            if let problem = officialCommandProblems(first) { return .fail("tap 1: \(problem)") }
            let second = try reader.present(phone, "rdr.fast")
            if let problem = officialCommandProblems(second, standard: false) { return .fail("tap 2: \(problem)") }
            guard let a = second.first(Instruction.auth0), let auth0 = try? Auth0Command(parsing: a.data), auth0.flags & Auth0Command.flagFast != 0 else {
                return .fail("tap 2: AUTH0 does not ask for FAST (flags bit 0 clear) although tap 1 gave the reader a Kpersistent (saw \(second.summary))")
            }
            guard let i = second.commands.firstIndex(where: { $0.ins == Instruction.auth0 }), i + 1 < second.commands.count,
                  second.commands[i + 1].ins == Instruction.exchange else {
                return .fail("tap 2: the command after the FAST AUTH0 is not EXCHANGE: the cryptogram was not recognised (saw \(second.summary))")
            }
            guard second.readerStatus != nil else { return .fail("tap 2: the FAST EXCHANGE did not open under the FAST keys or carries no 97 (saw \(second.summary))") }
            return .pass("tap 1 standard; tap 2 FAST: \(second.summary)")
        },
        ReaderCheck("rdr.neg.wrong-ud-signature", official: "NFC_RDR_NEG_AUTH1_WRONG_UD_SIGNATURE", section: "§6, §10",
                    title: "a device signature that does not verify: EXCHANGE with a failure status") { reader, _ in
            let t = try reader.present(reader.phone(faults: .wrongSignature), "rdr.neg.wrong-ud-signature")
            return official(t) { refused(t, expectExchange: true, "wrong device signature") }
        },
        ReaderCheck("rdr.neg.auth1-undecryptable", advisory: true, section: "§7, §10, §12", title: "an AUTH1 answer that does not open: CONTROL FLOW S1 00 S2 00, no grant") { reader, _ in
            let t = try reader.present(reader.phone(faults: .corruptCiphertext), "rdr.neg.auth1-undecryptable")
            if let s = t.readerStatus, !Names.isFailureStatus(s) { return .fail("the reader granted although the AUTH1 answer does not open") }
            guard let c = t.controlFlow else { return .fail("no CONTROL FLOW after an AUTH1 answer that does not open (saw \(t.summary))") }
            let expected = ControlFlow(s1: 0, s2: ControlFlow.noInformation).encoded()
            return c.s1 == 0 && c.s2 == 0 ? .pass("CONTROL FLOW 41 01 00 42 01 00") : .fail("CONTROL FLOW", expected: expected, actual: c.encoded())
        },
        ReaderCheck("rdr.neg.auth0-wrong-tag", official: "NFC_RDR_NEG_AUTH0_WRONG_VALUE", section: "§4, §10",
                    title: "an AUTH0 answer with the key under a wrong tag: CONTROL FLOW S1 00 S2 00") { reader, _ in
            let phone = reader.phone(faults: .auth0WrongTag)
            let t = try reader.present(phone, "rdr.neg.auth0-wrong-tag")
            return official(t) { nextIsControlFlow(t, after: Instruction.auth0, s2: ControlFlow.noInformation, "an AUTH0 answer without 86") }
        },
        ReaderCheck("rdr.neg.no-common-version", official: "NFC_RDR_NEG_SEL_RSP_NO_COMMON_EXPEDITED_PROTOCOL_VERSION", section: "§3, §10",
                    title: "a SELECT answer listing only version 0A00: the next command is CONTROL FLOW 41 01 00 42 01 27, no Le") { reader, _ in
            let t = try reader.present(reader.phone(tweak: { $0.versions = [0x0A00] }), "rdr.neg.no-common-version")
            return official(t) { nextIsControlFlow(t, after: Instruction.select, s2: ControlFlow.protocolVersionNotSupported, "a SELECT answer with no version in common") }
        },
        ReaderCheck("rdr.neg.select-other-aid", official: "RD-NFC-SELECT-1.2", section: "§3, §10",
                    title: "a SELECT answer whose 84 names A000000909ACCE55FE: the next command is CONTROL FLOW 41 01 00 42 01 00") { reader, _ in
            let t = try reader.present(reader.phone(faults: .fciOtherAID), "rdr.neg.select-other-aid")
            return official(t) { nextIsControlFlow(t, after: Instruction.select, s2: ControlFlow.noInformation, "an FCI naming another AID") }
        },
        ReaderCheck("rdr.auth0-extra-tag", official: "NFC_RDR_NEG_AUTH0_EXTRA_TAG", section: "§4",
                    title: "an AUTH0 answer with an extra unknown tag is accepted (unknown tags skipped)") { reader, _ in
            let phone = reader.phone(faults: .auth0ExtraTag)
            let t = try reader.present(phone, "rdr.auth0-extra-tag")
            return official(t) {
                guard let i = t.commands.firstIndex(where: { $0.ins == Instruction.auth0 }), i + 1 < t.commands.count,
                      t.commands[i + 1].ins == Instruction.auth1 else { return .fail("the command after an AUTH0 answer with an unknown tag AA is not AUTH1 (saw \(t.summary))") }
                return .pass(t.summary)
            }
        },
        ReaderCheck("rdr.auth1-extra-tag", official: "NFC_RDR_EXCHANGE_RDR_INFO_TAG", section: "§6",
                    title: "AUTH1 asks for the public key; its answer with an extra unknown tag is accepted: a command that parses follows") { reader, _ in
            let t = try reader.present(reader.phone(faults: .auth1ExtraTag), "rdr.auth1-extra-tag")
            return official(t) {
                guard let i = t.commands.firstIndex(where: { $0.ins == Instruction.auth1 }) else { return .fail("no AUTH1 (saw \(t.summary))") }
                guard let a1 = try? Auth1Command(parsing: t.commands[i].data), a1.flags & Auth1Command.flagReturnPublicKey != 0 else {
                    return .fail("Access Credential key type request is not endpoint public key! (AUTH1 flags bit 0 clear)")
                }
                guard i + 1 < t.commands.count else { return .fail("the reader stopped after an AUTH1 answer with an unknown tag (saw \(t.summary))") }
                if t.commands[i + 1].ins == Instruction.exchange, !(t.answers[i + 1] == .success) {
                    return .fail("the EXCHANGE after AUTH1 does not open under the expedited keys (the phone answered \(t.answers[i + 1]))")
                }
                return .pass(t.summary)
            }
        },
        ReaderCheck("rdr.neg.auth1-wrong-signature-tag", official: "NFC_RDR_NEG_AUTH1_WRONG_VALUES", section: "§6, §10",
                    title: "an AUTH1 answer with the device signature under a wrong tag: EXCHANGE with a failure status") { reader, _ in
            let t = try reader.present(reader.phone(faults: .auth1WrongSignatureTag), "rdr.neg.auth1-wrong-signature-tag")
            return official(t) { refused(t, expectExchange: true, "device signature under a wrong tag") }
        },
        ReaderCheck("rdr.auth1-optional-absent", advisory: true, section: "§6", title: "an AUTH1 answer without the optional 91/92 timestamps (as the public reference device sends) is accepted") { reader, _ in
            let t = try reader.present(reader.phone(tweak: { $0.credentialTimestamp = nil; $0.revocationTimestamp = nil }), "rdr.auth1-optional-absent")
            guard let s = t.readerStatus else { return .fail("no EXCHANGE with a status after an AUTH1 answer without 91/92 (saw \(t.summary))") }
            return [ReaderStatus.badData, ReaderStatus.badDataContent, ReaderStatus.statusWordError, ReaderStatus.noKeySlot,
                    ReaderStatus.noPublicKey, ReaderStatus.noSignature].contains(s)
                ? .fail("the reader refused an AUTH1 answer without the optional 91/92: \(t.summary)") : .pass(t.summary)
        },
        ReaderCheck("rdr.neg.replayed-ephemeral", advisory: true, transactions: 2, section: "§12", title: "an AUTH0 answer repeating an earlier device ephemeral key is refused") { reader, _ in
            let phone = reader.phone(faults: .replayEphemeralKey)
            _ = try reader.present(phone, "rdr.neg.replayed-ephemeral")
            let t = try reader.present(phone, "rdr.neg.replayed-ephemeral")
            if let s = t.readerStatus, !Names.isFailureStatus(s) { return .fail("the reader granted a transaction whose device ephemeral key repeats the previous one") }
            return .pass("refused: \(t.summary)")
        },
        minted("rdr.stepup.key-id", official: "NFC_RDR_STEPUP_AD_KEY_ID", defect: .none, grant: true, stepUpSelect: true,
               title: "a document signed by the site issuer, named by kid; the phone asks for the step-up SELECT (5E bit 2): SELECT 5502, ENVELOPE, a grant"),
        minted("rdr.neg.stepup.doctype", official: "NFC_RDR_NEG_STEPUP_AD_DOCTYPE_NOT_ALIROA", defect: .documentDocType, grant: false,
               title: "a Document whose docType is bad-doctype: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.device-key", official: "NFC_RDR_NEG_STEPUP_AD_DEVICE_KEY_INFO_MISMATCH", defect: .deviceKeyMismatch, grant: false,
               title: "an MSO binding another device key than the phone's: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.not-yet-valid", official: "NFC_RDR_NEG_STEPUP_AD_EARLY_ISSUER_AUTH", defect: .notYetValid, grant: false,
               title: "a document valid from 14 days on: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.expired", official: "NFC_RDR_NEG_STEPUP_AD_EXPIRED_ISSUER_AUTH", defect: .expired, grant: false,
               title: "a document valid 2020-01-01 00:00–01:00: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.bad-signature", official: "NFC_RDR_NEG_STEPUP_AD_INVALID_SIGNATURE_ISSUER_AUTH", defect: .badSignature, grant: false,
               title: "an issuerAuth whose signature is 00…3F: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.mso-doctype", official: "NFC_RDR_NEG_STEPUP_AD_ISSUER_DOCTYPE_MISMATCH", defect: .msoDocType, grant: false,
               title: "an MSO signed with docType bad-doctype: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.no-key-id", official: "NFC_RDR_NEG_STEPUP_AD_NO_ISSUER_CERT_NO_KEY_ID", defect: .noKeyID, grant: false,
               title: "an issuerAuth with neither kid nor certificate: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.access-data-version", official: "NFC_RDR_NEG_STEPUP_AD_INVALID_ACCESS_DATA_ELEMENT_VERSION", defect: .accessDataVersion, grant: false,
               title: "AccessData version 42: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.digest", official: "NFC_RDR_NEG_STEPUP_AD_INVALID_HASH_ISSUER_AUTH", defect: .digestMismatch, grant: false,
               title: "an MSO whose digest of the access element is 00…1F, validly signed: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.critical-extension", official: "NFC_RDR_NEG_STEPUP_AD_UNKNOWN_CRITICAL_ACCESS_EXTENSION", defect: .criticalAccessExtension, grant: false,
               title: "AccessData with an unknown critical access extension (id 1, version 1): EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.unknown-reader-rule", official: "NFC_RDR_NEG_STEPUP_AD_UNKNOWN_READER_RULE", defect: .unknownReaderRule, grant: false,
               title: "AccessData naming reader rule id 0xF118, which the reader does not define: EXCHANGE with a failure status"),
        minted("rdr.stepup.issuer-cert", official: "NFC_RDR_STEPUP_AD_ISSUER_CERT", defect: .issuerCertificate, grant: true,
               title: "a document naming its issuer by an X.509 certificate the issuer CA signed (x5chain, no kid): a grant"),
        minted("rdr.stepup.issuer-cert-key-id", official: "NFC_RDR_STEPUP_AD_ISSUER_CERT_KEY_ID", defect: .issuerCertificateAndKeyID, grant: true,
               title: "a document naming its issuer by the CA-signed certificate and by kid: a grant"),
        minted("rdr.neg.stepup.issuer-cert-expired", official: "NFC_RDR_NEG_STEPUP_AD_ISSUER_CERT_EXPIRED", defect: .issuerCertificateExpired, grant: false,
               title: "an issuer certificate valid 2020-01-01 00:00–01:00: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.issuer-cert-signature", official: "NFC_RDR_NEG_STEPUP_AD_ISSUER_CERT_INVALID_SIGNATURE", defect: .issuerCertificateWrongCA, grant: false,
               title: "an issuer certificate signed by a key that is not the issuer CA: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.issuer-cert-time", official: "NFC_RDR_NEG_STEPUP_AD_ISSUER_CERTIFICATE_TIME_MISMATCH", defect: .issuerCertificateTimeMismatch, grant: false,
               title: "an MSO signed 14 days before its issuer certificate's notBefore: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.issuer-cert-empty-key", official: "NFC_RDR_NEG_STEPUP_AD_ISSUER_CERT_EMPTY_PUBLIC_KEY", defect: .issuerCertificateEmptyKey, grant: false,
               title: "an issuer certificate whose subject key is an empty BIT STRING (no kid): EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.rd-version", official: "NFC_RDR_NEG_STEPUP_RD_INVALID_ELEMENT_VERSION", defect: .revocationDataVersion, grant: false,
               stepUpSelect: true,
               title: "a phone with only a revocation document, RevocationData version 42, asking for the step-up SELECT: SELECT 5502, ENVELOPE naming the element in aliro-r, EXCHANGE with a failure status"),
        ReaderCheck("rdr.stepup.same-doc-twice", official: "NFC_RDR_STEPUP_AD_SAME_DOC_TWICE", transactions: 2, section: "§9",
                    title: "one phone, one document, two taps (step-up SELECT asked): each a standard AUTH0, AUTH1, SELECT 5502, ENVELOPE naming the element, a grant (a reader set to step up at every tap)") { reader, _ in
            guard let issuer = reader.issuer else {
                return .notApplicable("the case hands the lock a document of its own: give the site issuer's private key (--issuer-key) and the lock's time (--now)")
            }
            guard let group = reader.base.trustedReaders.first?.groupID else { return .fail("the phone trusts no reader") }
            let key = P256.Signing.PrivateKey()
            let document = try DocumentDefect.none.mint(credentialKey: key.publicBytes, readerGroup: group, issuer: issuer, now: reader.now)
            // The same phone both times: it keeps the Kpersistent of tap 1, as the tool's does.
            let phone = reader.phone {
                $0.signingKey = key
                $0.accessDocuments = [document]
                $0.revocationDocuments = []
                $0.stepUpSelect = .required
            }
            var summaries = [String]()
            for tap in 1...2 {
                let t = try reader.present(phone, "rdr.stepup.same-doc-twice")
                let verdict = ReaderCatalogue.official(t) { stepUpVerdict(t, phone, grant: true) }
                guard verdict.status == .pass else {
                    return .fail("tap \(tap): \(verdict.reason)" + (tap == 2 ? " (a reader that holds the verified document must still step up: set it to step up at every tap, config create --step-up-every-tap)" : ""),
                                 expected: verdict.expected, actual: verdict.actual)
                }
                summaries.append(t.summary)
            }
            return .pass("tap 1: \(summaries[0]); tap 2: \(summaries[1])")
        },
        ReaderCheck("rdr.stepup.fast", official: "NFC_RDR_STEPUP_FAST", transactions: 5, section: "§8, §9",
                    title: "phones A and B, each stepped up then FAST; then A with a newer document: the reader leaves FAST for AUTH1 and steps up (a reader set for FAST)") { reader, _ in
            guard let issuer = reader.issuer else {
                return .notApplicable("the case hands the lock documents of its own: give the site issuer's private key (--issuer-key) and the lock's time (--now)")
            }
            guard let group = reader.base.trustedReaders.first?.groupID else { return .fail("the phone trusts no reader") }
            // Documents signed at base, base + 1 s, base + 2 s (the case's A1, B, A2).
            func phone(_ key: P256.Signing.PrivateKey, signedAfter seconds: TimeInterval, fastCache: FastCache? = nil) throws -> ObservingPhone {
                let document = try DocumentDefect.none.mint(credentialKey: key.publicBytes, readerGroup: group, issuer: issuer,
                                                            now: reader.now.addingTimeInterval(seconds))
                return reader.phone(fastCache: fastCache) {
                    $0.signingKey = key
                    $0.accessDocuments = [document]
                    $0.revocationDocuments = []
                    $0.stepUpSelect = .required
                    // Its 91 (AUTH1, FAST cryptogram) names this document's signed time.
                    $0 = $0.withDocumentTimestamps()
                }
            }
            let keyA = P256.Signing.PrivateKey(), keyB = P256.Signing.PrivateKey()
            let a1 = try phone(keyA, signedAfter: 0), b = try phone(keyB, signedAfter: 1)
            var summaries = [String]()
            for (tap, p, fast) in [(1, a1, false), (2, a1, true), (3, b, false), (4, b, true)] {
                let t = try reader.present(p, "rdr.stepup.fast")
                let verdict = fast ? fastVerdict(t) : ReaderCatalogue.official(t, standard: false) { stepUpVerdict(t, p, grant: true) }
                guard verdict.status == .pass else { return .fail("tap \(tap) (\(tap < 3 ? "A" : "B")\(fast ? ", FAST" : ", step-up")): \(verdict.reason)", expected: verdict.expected, actual: verdict.actual) }
                summaries.append(t.summary)
            }
            // Tap 5: A, its Kpersistent kept, now carrying a document signed 2 s after A1.
            let a2 = try phone(keyA, signedAfter: 2, fastCache: a1.session.fastCache)
            let t = try reader.present(a2, "rdr.stepup.fast")
            guard let a = t.first(Instruction.auth0), let auth0 = try? Auth0Command(parsing: a.data), auth0.flags & Auth0Command.flagFast != 0 else {
                return .fail("tap 5 (A, newer document): AUTH0 does not ask for FAST although the reader holds A's Kpersistent (saw \(t.summary))")
            }
            guard let i = t.commands.firstIndex(where: { $0.ins == Instruction.auth0 }), i + 1 < t.commands.count, t.commands[i + 1].ins == Instruction.auth1 else {
                return .fail("tap 5 (A, newer document): Expected AUTH1 command (reader forcing standard) after the FAST AUTH0 (saw \(t.summary))")
            }
            let last = ReaderCatalogue.official(t, standard: false) { stepUpVerdict(t, a2, grant: true) }
            guard last.status == .pass else { return .fail("tap 5 (A, newer document): \(last.reason)", expected: last.expected, actual: last.actual) }
            return .pass((summaries + [t.summary]).enumerated().map { "tap \($0.offset + 1): \($0.element)" }.joined(separator: "; "))
        },
        minted("rdr.stepup.schedules", official: "NFC_RDR_STEPUP_AD_ACCESS_RULE_SCHEDULES", defect: .scheduleAllowInside, grant: true,
               title: "a rule allowing schedule 0 only, a UTC daily window of 1800 s the lock's time (--now) is inside: ENVELOPE, a grant"),
        minted("rdr.neg.stepup.schedule-allow-outside", official: "NFC_RDR_NEG_STEPUP_AD_NO_VALID_SCHEDULE_ALLOW_SCHEDULEID", defect: .scheduleAllowOutside, grant: false,
               title: "a rule allowing schedule 0 only, a UTC daily window of 180 s that began 2 h before the lock's time: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.schedule-deny-inside", official: "NFC_RDR_NEG_STEPUP_AD_VALID_SCHEDULE_DENY_SCHEDULEID", defect: .scheduleDenyInside, grant: false,
               title: "a rule denying schedule 0, a UTC daily window of 180 s the lock's time is inside: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.no-rule-for-action", official: "NFC_RDR_NEG_STEPUP_AD_NO_ACCESS_RULE_FOR_READER_ACTION", defect: .noRuleForAction, grant: false,
               title: "the only access rule grants capability bit 12 alone, no action of the reader: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.no-documents", official: "NFC_RDR_NEG_STEPUP_AD_NO_DATA_ELEMENTS", defect: .none, grant: false, emptyResponse: true,
               title: "the phone announces an access document and answers ENVELOPE with none: EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.time-verification", official: "NFC_RDR_NEG_STEPUP_AD_TIME_VERIFICATION_REQUIRED", defect: .timeVerificationRequired, grant: false,
               hint: Self.needsUnverifiedTime,
               title: "a valid document whose MSO asks for time verification (key 7 true), to a lock without verified time (after a power loss: `lockbench clock power-loss`): EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.schedule-time-verification", official: "NFC_RDR_NEG_STEPUP_AD_SCHEDULE_TIME_VERIFY_REQUIRED", defect: .scheduleTimeVerificationRequired, grant: false,
               hint: Self.needsUnverifiedTime,
               title: "a rule allowing schedule 0 only (a UTC daily window of 1800 s the lock's time is inside) and MSO key 7 true, to a lock without verified time (`lockbench clock power-loss`): EXCHANGE with a failure status"),
        minted("rdr.neg.stepup.schedules-unsupported", official: "NFC_RDR_NEG_STEPUP_AD_SCHEDULE_IN_ACCESS_RULE_AND_READER", defect: .scheduleAllowInside, grant: false,
               hint: "(the case expects a reader that does not support schedules to refuse a valid document using one: set the lock so, `config create --no-schedules`, \"policy\": {\"supportsSchedules\": false}; a lock that evaluates schedules grants it, as rdr.stepup.schedules requires)",
               title: "the document of rdr.stepup.schedules (schedule 0 allowed, the lock's time inside its UTC daily window), to a lock set without schedule support (`config create --no-schedules`): EXCHANGE with a failure status"),
    ] + validityIterationChecks + revocationDataChecks

    /// What the time-verification cases need of the lock, said when it granted.
    static let needsUnverifiedTime = "(the case expects a reader without verified time: a document asking for time verification (MSO key 7) is accepted only under a clock the lock already trusts, and restores none; take the lock's trusted time away first, `lockbench clock power-loss --config LOCK.json`, and run these checks before any other that hands it a document without key 7)"

    /// NFC_RDR_EXCHANGE_MAILBOX: after AUTH1 (whose reader signature the phone accepted) every
    /// command is EXCHANGE ("Unexpected command" otherwise) until one carries 97, which must be
    /// exactly 0100 (reader state secured); mailbox operations are optional.
    static func exchangeMailboxVerdict(_ t: ObservedTransaction) -> CheckVerdict {
        guard let a1 = t.commands.firstIndex(where: { $0.ins == Instruction.auth1 }) else { return .fail("no AUTH1 (saw \(t.summary))") }
        guard t.answers[a1] == .success else {
            return .fail("the phone refused AUTH1 (\(t.answers[a1]): the reader signature does not verify)", actual: t.answers[a1].bytes)
        }
        if let other = t.commands[(a1 + 1)...].first(where: { $0.ins != Instruction.exchange }) {
            return .fail("Unexpected command \(Names.command(other)) after AUTH1: the case allows only EXCHANGE (saw \(t.summary))")
        }
        guard let s = t.readerStatus else { return .fail("no EXCHANGE carrying 97 after AUTH1 (saw \(t.summary))") }
        guard s == ReaderStatus.secured else {
            return .fail("Expected 'Reader state is secured', but received \(Hex.encode(s.bigEndianBytes)) (\(Names.readerStatus(s)))",
                         expected: ReaderStatus.secured.bigEndianBytes, actual: s.bigEndianBytes)
        }
        return .pass(t.summary)
    }

    /// A step-up case whose phone is a stranger to the lock (a fresh key) carrying one document the
    /// site issuer signed with `defect`; LockBench mints it with `--issuer-key`.
    /// `hint`: what the lock must be set to, added when it granted where the case wants a refusal
    /// (a case that needs the lock in a state or configuration it sets up out of band).
    static func minted(_ id: String, official: String, defect: DocumentDefect, grant: Bool, stepUpSelect: Bool = false,
                       emptyResponse: Bool = false, hint: String? = nil, title: String) -> ReaderCheck {
        ReaderCheck(id, official: official, section: "§9", title: title) { reader, _ in
            guard let issuer = reader.issuer else {
                return .notApplicable("the case hands the lock a document of its own: give the site issuer's private key (--issuer-key) and the lock's time (--now)")
            }
            if defect.needsIssuerCA && reader.issuerCA == nil {
                return .notApplicable("the case certifies the issuer with the issuer CA the lock trusts: give the CA's private key (--issuer-ca-key)")
            }
            guard let group = reader.base.trustedReaders.first?.groupID else { return .fail("the phone trusts no reader") }
            let key = P256.Signing.PrivateKey()
            let document = try defect.mint(credentialKey: key.publicBytes, readerGroup: group, issuer: issuer, issuerCA: reader.issuerCA, now: reader.now)
            let phone = reader.phone(faults: emptyResponse ? .emptyDeviceResponse : []) {
                $0.signingKey = key
                $0.accessDocuments = defect.isRevocation ? [] : [document]
                $0.revocationDocuments = defect.isRevocation ? [document] : []
                $0.stepUpSelect = stepUpSelect ? .required : .optional
            }
            let t = try reader.present(phone, id)
            let verdict = ReaderCatalogue.official(t) { stepUpVerdict(t, phone, grant: grant, elementCheck: !emptyResponse) }
            // The hint says what the lock must be set to; it explains a grant, nothing else.
            guard let hint, verdict.status == .fail, let s = t.readerStatus, s >> 8 == 0x01 else { return verdict }
            return .fail("\(verdict.reason) \(hint)", expected: verdict.expected, actual: verdict.actual)
        }
    }

    /// A FAST tap of the official cases: AUTH0 asks FAST, only EXCHANGEs follow (no AUTH1), and
    /// the last `97` is a success (`ReaderStatus.is_success`: high byte 01).
    static func fastVerdict(_ t: ObservedTransaction) -> CheckVerdict {
        if let problem = officialCommandProblems(t, standard: false) { return .fail(problem) }
        guard let a = t.first(Instruction.auth0), let auth0 = try? Auth0Command(parsing: a.data), auth0.flags & Auth0Command.flagFast != 0 else {
            return .fail("AUTH0 does not ask for FAST although the reader holds the phone's Kpersistent (saw \(t.summary))")
        }
        guard let i = t.commands.firstIndex(where: { $0.ins == Instruction.auth0 }),
              t.commands[(i + 1)...].allSatisfy({ $0.ins == Instruction.exchange }), i + 1 < t.commands.count else {
            return .fail("after the FAST AUTH0 only EXCHANGE may follow (saw \(t.summary))")
        }
        guard let s = t.readerStatus, s >> 8 == 0x01 else {
            return .fail("the FAST EXCHANGE carries no success status (saw \(t.summary))")
        }
        return .pass(t.summary)
    }

    /// The step-up skeleton of the official reader cases: after AUTH1 (and the step-up SELECT when
    /// 5E bit 2 asks) the next command is ENVELOPE, its DeviceRequest names the phone's access
    /// element in aliro-a, and the next is EXCHANGE on the step-up channel whose 97 has high byte
    /// 01 (a grant) or 00 (a refusal).
    static func stepUpVerdict(_ t: ObservedTransaction, _ phone: ObservingPhone, grant: Bool, elementCheck: Bool = true) -> CheckVerdict {
        guard let a1 = t.commands.firstIndex(where: { $0.ins == Instruction.auth1 }) else { return .fail("no AUTH1 (saw \(t.summary))") }
        var next = a1 + 1
        if phone.session.configuration.stepUpSelect == .required {
            guard next < t.commands.count, t.commands[next].ins == Instruction.select, t.commands[next].data == AID.stepUp else {
                return .fail("the phone asks for the step-up SELECT (5E bit 2) but the command after AUTH1 is not SELECT A000000909ACCE5502 (saw \(t.summary))")
            }
            next += 1
        }
        guard next < t.commands.count, t.commands[next].ins == Instruction.envelope else {
            return .fail("the command after AUTH1 is not ENVELOPE although the phone announces an access document (5E bit 0) the reader cannot know (saw \(t.summary))")
        }
        guard t.answers[next] == .success || t.answers[next].isBytesRemaining else {
            return .fail("the phone could not open or parse the ENVELOPE (answered \(t.answers[next]): \(Names.status(t.answers[next])))", expected: [0x90, 0x00], actual: t.answers[next].bytes)
        }
        if elementCheck {
            // The case's namespace: aliro-a, or aliro-r for a phone carrying only a revocation
            // document (NFC_RDR_NEG_STEPUP_RD_INVALID_ELEMENT_VERSION: `if doc_type != "aliro-r": continue`).
            let configuration = phone.session.configuration
            let revocationOnly = configuration.accessDocuments.isEmpty && !configuration.revocationDocuments.isEmpty
            let namespace = revocationOnly ? DocType.revocation : DocType.access
            let documents = revocationOnly ? configuration.revocationDocuments : configuration.accessDocuments
            let wanted = Set(documents.compactMap { try? IssuedDocument(parsing: $0) }.flatMap { $0.items.map(\.elementIdentifier) })
            let named = Set(phone.session.lastDeviceRequest?.requests.compactMap { $0.namespaces[namespace] }.flatMap(\.keys) ?? [])
            if !wanted.isEmpty, named.isDisjoint(with: wanted) {
                return .fail("Reader did not request Element ID \(wanted.sorted().joined(separator: ", ")) in namespace \(namespace) (it named \(named.isEmpty ? "none" : named.sorted().joined(separator: ", ")))")
            }
        }
        guard next + 1 < t.commands.count, t.commands[next + 1].ins == Instruction.exchange else {
            return .fail("the command after ENVELOPE is not EXCHANGE (saw \(t.summary))")
        }
        guard phone.session.lastExchangeChannel == .stepUp, let s = t.readerStatus else {
            return .fail("the EXCHANGE after ENVELOPE does not open under the step-up keys or carries no 97 (the official phone opens it with StepUpSKReader)")
        }
        let high: UInt16 = grant ? 0x01 : 0x00
        guard s >> 8 == high else {
            return .fail("Received incorrect EXCHANGE reader status \(Hex.encode(s.bigEndianBytes)) (\(Names.readerStatus(s))): the case expects high byte \(Hex.encode([UInt8(high)])) (\(grant ? "a grant" : "a refusal"))")
        }
        return .pass(t.summary)
    }
}