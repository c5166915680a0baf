import AccessProtocol
import ByteCore
import Codecs
import Crypto

/// Keys a decoder may use beyond what a transcript carries.
public struct TraceKeys: Sendable {
    /// Reader group id → group public key (a reader identity, a lock configuration).
    public var readerKeys: [[UInt8]: [UInt8]] = [:]
    /// Reader public keys whose group id is unknown (a bare PEM): each is tried.
    public var readerPublicKeys: [[UInt8]] = []
    /// Cached FAST keys (a lock's state): FAST transactions open with these alone.
    public var persistentKeys: [Transcript.PersistentKey] = []
    public init() {}
}

/// Turns a transcript into words: each command and answer named, TLVs by name, status words in
/// words, and the secure-channel payloads opened when the keys allow (docs/conformance.md).
public struct TraceDecoder {
    public var keys: TraceKeys
    public init(keys: TraceKeys = TraceKeys()) { self.keys = keys }

    /// Decoded lines for each entry of `session`, in order.
    public func decode(_ session: Transcript.Session, in transcript: Transcript) -> [[String]] {
        var state = SessionState(session: session, keys: keys, transcriptReaderKeys: transcript.readerKeys)
        return session.entries.map { state.decode($0) }
    }

    /// The whole transcript as a tester reads it.
    public func render(_ transcript: Transcript) -> String {
        var out = ""
        for s in transcript.sessions {
            let attrs = s.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            out += "── transaction \(s.id)" + (attrs.isEmpty ? "" : " (\(attrs))") + "\n"
            let notes = decode(s, in: transcript)
            for (entry, lines) in zip(s.entries, notes) {
                out += "\(entry.direction.rawValue) \(entry.bytes.count > 40 ? Array(entry.bytes.prefix(40)).hex + "… (\(entry.bytes.count) bytes)" : entry.bytes.hex)\n"
                for l in lines { out += "    \(l)\n" }
            }
        }
        return out
    }
}

extension TraceDecoder {
    /// A secure-channel payload in trace's words, for one who holds it already opened (the lock
    /// publishing what it sealed and opened itself: `lock run --events`). `label` is the APDU's
    /// (AUTH1, ENVELOPE, EXCHANGE); `fromReader` its direction.
    public static func describe(plaintext: [UInt8], label: String, fromReader: Bool) -> [String] {
        switch (label, fromReader) {
        case ("AUTH0", false): return ["FAST cryptogram:"] + SessionState.tlvLines(plaintext, .cryptogramPlaintext).map { "  " + $0 }
        case ("AUTH1", false): return SessionState.tlvLines(plaintext, .auth1Plaintext)
        case ("EXCHANGE", true): return SessionState.tlvLines(plaintext, .exchangePlaintext)
        case ("EXCHANGE", false): return [SessionState.exchangeAnswer(plaintext)]
        case ("ENVELOPE", _):
            guard let cbor = try? CBOR(parsing: plaintext) else { return ["not CBOR"] }
            return ["\(fromReader ? "DeviceRequest" : "DeviceResponse") " + SessionState.diagnostic(cbor, depth: 0)]
        default: return []
        }
    }
}

/// One secure channel seen from outside: both directions' keys and next counters.
struct ObservedChannel {
    var name: String
    var readerKey: [UInt8]
    var deviceKey: [UInt8]
    var nextReader: UInt32 = 1
    var nextDevice: UInt32 = 1

    /// Opens a message of one direction at the expected counter, else at a replayed or skipped one
    /// (said so); nil when no counter near it opens.
    mutating func open(_ sealed: [UInt8], fromReader: Bool) -> (plain: [UInt8], note: String)? {
        let key = fromReader ? readerKey : deviceKey
        let prefix = fromReader ? SecureChannel.readerPrefix : SecureChannel.devicePrefix
        let next = fromReader ? nextReader : nextDevice
        let candidates = [next] + Array(next + 1...next + 3) + Array((1..<max(next, 1)).reversed().prefix(8))
        for c in candidates {
            guard let plain = try? Primitives.open(key: key, nonce: SecureChannel.iv(prefix: prefix, counter: c), sealed: sealed) else { continue }
            var note = "\(name) channel, \(fromReader ? "reader" : "device") counter \(c)"
            if c < next { note += " — REPLAYED (expected \(next))" } else if c > next { note += " — SKIPPED (expected \(next))" }
            if c >= next { if fromReader { nextReader = c + 1 } else { nextDevice = c + 1 } }
            return (plain, note)
        }
        return nil
    }
}

struct SessionState {
    let session: Transcript.Session
    let keys: TraceKeys
    let transcriptReaderKeys: [[UInt8]: [UInt8]]

    var fci: [UInt8]?
    var auth0: Auth0Command?
    var deviceEph: [UInt8]?
    /// Per candidate reader group key: its volatile keys (standard path).
    var candidates: [(groupKey: [UInt8], k: [UInt8], context: TranscriptContext, keys: VolatileKeys)] = []
    var expedited: ObservedChannel?
    var stepUp: ObservedChannel?
    var stepUpSK: [UInt8]?
    var lastIns: UInt8?
    var lastExchangeChannel: String?
    var chainedCommand: [UInt8] = []
    var pendingResponse: [UInt8] = []
    var missingKeysSaid = false
    /// The last command was a non-final part of a chain: its `9000` carries nothing to decode.
    var lastWasChainPart = false

    init(session: Transcript.Session, keys: TraceKeys, transcriptReaderKeys: [[UInt8]: [UInt8]]) {
        self.session = session
        self.keys = keys
        self.transcriptReaderKeys = transcriptReaderKeys
    }

    mutating func decode(_ entry: Transcript.Entry) -> [String] {
        entry.direction == .command ? command(entry.bytes) : response(entry.bytes)
    }

    // MARK: - Commands

    mutating func command(_ bytes: [UInt8]) -> [String] {
        let c: CommandAPDU
        do { c = try CommandAPDU(parsing: bytes) } catch {
            return ["not a command APDU: \(error)"]
        }
        var head = "\(Names.command(bytes))  \(Hex.encode([c.cla, c.ins, c.p1, c.p2]).uppercased())"
        if !c.data.isEmpty { head += "  Lc \(c.data.count)" }
        head += c.le.map { "  Le \($0 == 256 ? "00" : String($0))" } ?? "  no Le"
        if c.extendedLength { head += " (extended length)" }
        if c.ins == Instruction.getResponse { return [head] }
        lastIns = c.ins
        lastWasChainPart = c.isChained && c.ins != Instruction.select
        if lastWasChainPart {
            chainedCommand += c.data
            return [head, "part of a command chain (CLA bit 10): \(chainedCommand.count) bytes so far"]
        }
        let data = chainedCommand + c.data
        var lines = [head]
        if !chainedCommand.isEmpty { lines.append("chain complete: \(data.count) bytes") }
        chainedCommand = []
        pendingResponse = []
        switch c.ins {
        case Instruction.select:
            let which = data == AID.expedited ? "access AID" : data == AID.stepUp ? "step-up AID" : "another AID"
            lines.append("AID \(data.hex) (\(which))")
        case Instruction.auth0:
            lines += Self.tlvLines(data, .auth0Command)
            auth0 = try? Auth0Command(parsing: data)
        case Instruction.auth1:
            lines += Self.tlvLines(data, .auth1Command)
            if let certificate = (try? Auth1Command(parsing: data))?.certificate { lines += Self.certificateLines(certificate) }
        case Instruction.loadCert:
            lines += Self.certificateLines(data)
        case Instruction.controlFlow:
            lines += Self.tlvLines(data, .controlFlow)
            if let cf = try? ControlFlow(parsing: data) {
                lines.append("→ transaction ends: S1 \(Hex.encode([cf.s1])) (\(cf.s1 == 0 ? "failure" : "success")), S2 \(Hex.encode([cf.s2]))\(cf.s2 == 0x27 ? " (authentication failure)" : cf.s2 == 0 ? "" : "")")
            }
        case Instruction.exchange:
            lines += openExchange(data, fromReader: true)
        case Instruction.envelope:
            lines += openEnvelope(data, fromReader: true)
        default:
            if !data.isEmpty { lines.append("data \(data.hex)") }
        }
        return lines
    }

    // MARK: - Responses

    mutating func response(_ bytes: [UInt8]) -> [String] {
        guard bytes.count >= 2 else { return ["not a response APDU (\(bytes.count) bytes)"] }
        let sw = StatusWord(bytes[bytes.count - 2], bytes[bytes.count - 1])
        let data = Array(bytes.dropLast(2))
        var lines = ["SW \(sw) \(Names.status(sw))" + (data.isEmpty ? "" : ", \(data.count) data bytes")]
        if sw.isBytesRemaining {
            pendingResponse += data
            return lines
        }
        let whole = pendingResponse + data
        if !pendingResponse.isEmpty { lines.append("response chain complete: \(whole.count) bytes") }
        pendingResponse = []
        guard sw == .success, let ins = lastIns, !lastWasChainPart, !whole.isEmpty else { return lines }
        switch ins {
        case Instruction.select:
            lines += Self.tlvLines(whole, .selectResponse)
            if let fciParsed = try? SelectResponse(parsing: whole) {
                if fciParsed.aid == AID.expedited { fci = fciParsed.proprietaryTLV }
            } else if (try? TLV(parsing: whole))?.tag == Tag.FCI.template, stepUp == nil, let sk = stepUpSK {
                let s = KeySchedule.stepUpKeys(stepUpSK: sk)
                stepUp = ObservedChannel(name: "step-up", readerKey: s.reader, deviceKey: s.device)
            }
        case Instruction.auth0:
            lines += Self.tlvLines(whole, .auth0Response)
            lines += auth0Answered(whole)
        case Instruction.auth1:
            lines += auth1Answered(whole)
        case Instruction.exchange:
            lines += openExchange(whole, fromReader: false)
        case Instruction.envelope:
            lines += openEnvelope(whole, fromReader: false)
        default:
            break
        }
        return lines
    }

    mutating func auth0Answered(_ data: [UInt8]) -> [String] {
        // Over BLE there is no SELECT: the phone's initiate (02 05) carried the A5. The capture's
        // APDUs do not include it, so take what the reference phone and LockBench's send for the
        // version AUTH0 chose: A5 { 80 0000, 5C <version> }.
        let boundFCI = fci ?? (session.interfaceByte == 0xC3 ? auth0.map { InitiateAccessProtocol(versions: [$0.version]).proprietaryTLV } : nil)
        guard let a = auth0, let fci = boundFCI, let answer = try? Auth0Response(parsing: data) else { return [] }
        deviceEph = answer.deviceEphemeralKey
        var lines: [String] = []
        let group = Array(a.readerID.prefix(16))
        var groupKeys = [keys.readerKeys[group], transcriptReaderKeys[group]].compactMap { $0 }
        groupKeys += keys.readerPublicKeys.filter { !groupKeys.contains($0) }
        func context(_ groupKey: [UInt8]) -> TranscriptContext {
            TranscriptContext(readerGroupKey: groupKey, readerID: a.readerID, interfaceByte: session.interfaceByte, version: a.version,
                              readerEphemeralKey: a.readerEphemeralKey, transactionID: a.transactionID, flags: a.flags,
                              policy: a.policy, fciProprietary: fci, deviceEphemeralKey: answer.deviceEphemeralKey)
        }
        // FAST: a cached Kpersistent opens the cryptogram without any ephemeral secret.
        if let cryptogram = answer.cryptogram {
            var opened = false
            for groupKey in groupKeys {
                for p in keys.persistentKeys + session.persistentKeys {
                    let fast = KeySchedule.fastKeys(persistent: p.key, context: context(groupKey), credentialKey: p.credentialKey)
                    guard let plain = KeySchedule.openCryptogram(fast, cryptogram) else { continue }
                    lines.append("FAST cryptogram opens with the Kpersistent of credential \(Array(p.credentialKey.prefix(9)).hex)…:")
                    lines += Self.tlvLines(plain, .cryptogramPlaintext).map { "  " + $0 }
                    expedited = ObservedChannel(name: "FAST expedited", readerKey: fast.expeditedSKReader, deviceKey: fast.expeditedSKDevice)
                    opened = true
                    break
                }
                if opened { break }
            }
            if !opened {
                if groupKeys.isEmpty {
                    // The key schedule's salt starts with the reader group key: without it no
                    // Kpersistent can be tried, so nothing can be said of the cryptogram.
                    lines.append("9D: not verifiable without the reader key (--reader-key or --lock-config)")
                } else if keys.persistentKeys.isEmpty && session.persistentKeys.isEmpty {
                    lines.append("9D: not verifiable without a Kpersistent (--lock-config, --credential-key with --kpersistent, or @secret kpersistent)")
                } else {
                    lines.append("9D opens under no known Kpersistent: a decoy (the phone has no key for this reader) or another credential")
                }
            }
        }
        guard let secret = session.secrets["ephemeral-private"],
              let priv = try? P256.KeyAgreement.PrivateKey(rawRepresentation: secret) else {
            if !groupKeys.isEmpty || answer.cryptogram == nil {
                lines.append("standard keys: no ephemeral private key in the transcript (record one with --transcript-secrets)")
            }
            return lines
        }
        let own = Array(priv.publicKey.x963Representation)
        let peer = own == a.readerEphemeralKey ? answer.deviceEphemeralKey : a.readerEphemeralKey
        guard let z = try? Primitives.ecdh(privateKey: priv, peerPublicKey: peer) else { return lines + ["ECDH failed with the recorded ephemeral key"] }
        let k = KeySchedule.sharedK(z: z, transactionID: a.transactionID)
        if groupKeys.isEmpty {
            lines.append("no public key for reader group \(group.hex): give --reader-key (identity JSON, lock config or PEM)")
        }
        candidates = groupKeys.map { gk in let ctx = context(gk); return (gk, k, ctx, KeySchedule.volatileKeys(k: k, context: ctx)) }
        lines.append("keys derived from the recorded \(own == a.readerEphemeralKey ? "reader" : "device") ephemeral key (§5)")
        return lines
    }

    mutating func auth1Answered(_ data: [UInt8]) -> [String] {
        for c in candidates {
            var ch = ObservedChannel(name: "expedited", readerKey: c.keys.expeditedSKReader, deviceKey: c.keys.expeditedSKDevice)
            guard let (plain, note) = ch.open(data, fromReader: false) else { continue }
            expedited = ch
            stepUpSK = c.keys.stepUpSK
            var lines = ["decrypted (\(note)):"]
            lines += Self.tlvLines(plain, .auth1Plaintext).map { "  " + $0 }
            if let t = try? TLV.parseAll(plain), let key = t.first(Tag.Auth1.credentialKey)?.value, let sig = t.first(Tag.Auth1.signature)?.value {
                let ok = Primitives.verifyRaw(signature: sig, message: c.context.signedData(reader: false), publicKey: key)
                lines.append(ok ? "device signature verifies with 5A" : "device signature does NOT verify with 5A")
            }
            return lines
        }
        if candidates.isEmpty { return missingKeys() }
        return ["the AUTH1 answer does not open under ExpeditedSKDevice (counter 1) with any reader key tried: wrong keys, a corrupted answer, or an altered SELECT answer (the FCI is bound into the keys)"]
    }

    mutating func missingKeys() -> [String] {
        defer { missingKeysSaid = true }
        return missingKeysSaid ? ["encrypted"] : ["encrypted; to open it give the reader key and a transcript recorded with --transcript-secrets (docs/conformance.md)"]
    }

    mutating func openExchange(_ data: [UInt8], fromReader: Bool) -> [String] {
        var order: [String] = fromReader ? (stepUp != nil ? ["step-up", "expedited"] : ["expedited"]) : [lastExchangeChannel ?? "expedited"]
        if !fromReader, let last = lastExchangeChannel { order = [last] + (last == "step-up" ? ["expedited"] : ["step-up"]) }
        for which in order {
            let opened: (plain: [UInt8], note: String)?
            if which == "step-up" { opened = stepUp?.open(data, fromReader: fromReader) } else { opened = expedited?.open(data, fromReader: fromReader) }
            guard let (plain, note) = opened else { continue }
            if fromReader { lastExchangeChannel = which }
            if fromReader { return ["decrypted (\(note)):"] + Self.tlvLines(plain, .exchangePlaintext).map { "  " + $0 } }
            return ["decrypted (\(note)): \(plain.hex)", "  " + Self.exchangeAnswer(plain)]
        }
        if expedited == nil && stepUp == nil { return missingKeys() }
        return ["does not open under any known channel key at a nearby counter (wrong channel, replay beyond the window, or corrupted)"]
    }

    /// `len2 ‖ data …, 00 02 SS SS` (§10).
    static func exchangeAnswer(_ plain: [UInt8]) -> String {
        var at = 0
        var parts: [String] = []
        while at + 2 <= plain.count {
            let len = Int(plain[at]) << 8 | Int(plain[at + 1])
            guard at + 2 + len <= plain.count else { return "malformed: length \(len) at byte \(at) runs past the end" }
            let body = Array(plain[(at + 2)..<(at + 2 + len)])
            if at + 2 + len == plain.count, len == 2 {
                let sw = StatusWord(body[0], body[1])
                // 00 02 00 00 is success (the reference device, the official reader); 90 00 too, from older phones.
                parts.append(sw.rawValue == 0x0000 ? "status 0000 success" : "status \(sw) \(Names.status(sw))")
            } else {
                parts.append("read \(len) bytes: \(body.hex)")
            }
            at += 2 + len
        }
        return parts.isEmpty ? "empty" : parts.joined(separator: "; ")
    }

    mutating func openEnvelope(_ data: [UInt8], fromReader: Bool) -> [String] {
        guard let sealed = try? StepUpEnvelope.unwrap(data) else { return ["not 53 { \"data\": bstr }"] }
        if stepUp == nil, let sk = stepUpSK {
            let s = KeySchedule.stepUpKeys(stepUpSK: sk)
            stepUp = ObservedChannel(name: "step-up", readerKey: s.reader, deviceKey: s.device)
        }
        guard stepUp != nil else { return ["53 { \"data\": \(sealed.count) bytes }"] + missingKeys() }
        guard let (plain, note) = stepUp!.open(sealed, fromReader: fromReader) else { return ["does not open under the step-up keys"] }
        guard let cbor = try? CBOR(parsing: plain) else { return ["decrypted (\(note)), not CBOR: \(plain.hex)"] }
        return ["decrypted (\(note)) \(fromReader ? "DeviceRequest" : "DeviceResponse"):", "  " + Self.diagnostic(cbor, depth: 0)]
    }

    // MARK: - TLVs

    static func tlvLines(_ data: [UInt8], _ context: Names.Context, depth: Int = 0) -> [String] {
        guard depth < 6 else { return ["…"] }
        guard let tlvs = try? TLV.parseAll(data) else { return ["not BER-TLV: \(data.hex)"] }
        var lines: [String] = []
        for t in tlvs {
            let tag = Hex.encode(TLV.tagBytes(t.tag)).uppercased()
            let name = Names.tag(t.tag, in: context)
            if t.isConstructed, t.value.count > 0, (try? t.children()) != nil {
                lines.append("\(tag) \(name) (\(t.value.count) bytes)")
                lines += Self.tlvLines(t.value, context, depth: depth + 1).map { "  " + $0 }
            } else {
                lines.append("\(tag) \(name): \(Self.value(t, context))")
            }
        }
        return lines
    }

    static func value(_ t: TLV, _ context: Names.Context) -> String {
        let hex = t.value.count > 72 ? Array(t.value.prefix(72)).hex + "… (\(t.value.count) bytes)" : t.value.hex
        switch (context, t.tag) {
        case (.auth1Plaintext, 0x5E), (.cryptogramPlaintext, 0x5E):
            // A `where` would bind to the second pattern only: check the length for both.
            guard t.value.count == 2 else { return "\(hex) (not 2 bytes)" }
            return "\(hex) (\(Names.signaling(UInt16(t.value[0]) << 8 | UInt16(t.value[1]))))"
        case (.auth1Plaintext, 0x91), (.auth1Plaintext, 0x92), (.cryptogramPlaintext, 0x91), (.cryptogramPlaintext, 0x92):
            if t.value.allSatisfy({ $0 == 0 }) { return "none (zeros)" }
            return String(decoding: t.value, as: UTF8.self)
        case (.exchangePlaintext, 0x97) where t.value.count == 2:
            let s = UInt16(t.value[0]) << 8 | UInt16(t.value[1])
            return "\(hex) (\(Names.readerStatus(s)))"
        case (.auth0Command, 0x41) where t.value.count == 1:
            return "\(hex) (\(t.value[0] & 1 != 0 ? "FAST asked" : "standard"))"
        case (.auth0Command, 0x42) where t.value.count == 1:
            return "\(hex) (" + ([1: "user-device setting", 2: "secure action", 3: "force user authentication"][Int(t.value[0])] ?? "unknown policy") + ")"
        case (.auth1Command, 0x41) where t.value.count == 1:
            return "\(hex) (\(t.value[0] & 1 != 0 ? "return the public key 5A" : "return the key slot 4E"))"
        case (.selectResponse, 0x5C), (.auth0Command, 0x5C):
            return stride(from: 0, to: t.value.count - 1, by: 2).map { "\(t.value[$0]).\(t.value[$0 + 1])" }.joined(separator: ", ") + " (\(hex))"
        default:
            return hex
        }
    }

    /// A compressed reader certificate (docs/protocol.md §6a) in words, or why it does not decode.
    static func certificateLines(_ bytes: [UInt8]) -> [String] {
        let c: ReaderCertificate
        do { c = try ReaderCertificate(parsingCompressed: bytes) } catch { return ["reader certificate does not decode: \(error)"] }
        func text(_ b: [UInt8]) -> String { String(decoding: b, as: UTF8.self) }
        return ["reader certificate: serial \(c.serialNumber.hex), issuer \"\(text(c.issuer))\", subject \"\(text(c.subject))\", "
                + "valid \(text(c.notBefore))–\(text(c.notAfter)), key \(c.subjectPublicKey.hex.prefix(18))…"]
    }

    /// CBOR diagnostic notation (RFC 8949 §8), bounded in depth and byte-string length.
    static func diagnostic(_ c: CBOR, depth: Int) -> String {
        guard depth < 12 else { return "…" }
        switch c {
        case .unsigned(let n): return String(n)
        case .negative(let n): return "-\(n &+ 1)"
        case .bytes(let b): return "h'" + (b.count > 32 ? Array(b.prefix(32)).hex + "…' (\(b.count) bytes)" : b.hex + "'")
        case .text(let s): return "\"\(s)\""
        case .array(let a): return "[" + a.map { diagnostic($0, depth: depth + 1) }.joined(separator: ", ") + "]"
        case .map(let m):
            return "{" + m.map { (diagnostic($0.key, depth: depth + 1), diagnostic($0.value, depth: depth + 1)) }
                .sorted { $0.0 < $1.0 }.map { "\($0.0): \($0.1)" }.joined(separator: ", ") + "}"
        case .tagged(let tag, let inner):
            if tag == 24, case .bytes(let b) = inner, let item = try? CBOR(parsing: b) { return "24(<<\(diagnostic(item, depth: depth + 1))>>)" }
            return "\(tag)(\(diagnostic(inner, depth: depth + 1)))"
        case .simple(let v): return "simple(\(v))"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .undefined: return "undefined"
        case .float(let d): return String(d)
        }
    }
}
