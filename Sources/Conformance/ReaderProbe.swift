import AccessProtocol
import ByteCore
import Codecs
import Crypto

/// Opens a fresh connection to the device under test; `close` ends it.
public typealias LinkOpener = () throws -> (link: APDUTransceiver, close: () -> Void)

/// LockBench as the reader, one step at a time, against a phone under test: each step sends
/// exactly the APDU a check asks for and keeps what the keys need, so a check can deviate
/// anywhere (drop Le, sign wrongly, replay a counter).
public final class ReaderProbe {
    public let link: APDUTransceiver
    public let identity: ReaderSigningIdentity
    /// The reader group key of the key derivation: the reader's own key, or the reader issuer CA's
    /// when the reader presents a certificate.
    public let groupKey: [UInt8]
    public let interfaceByte: UInt8
    let recorder: TranscriptRecorder?
    /// Versions LockBench speaks, most preferred first.
    public static let versions: [UInt16] = [ProtocolVersion.v1_0, ProtocolVersion.v0_9]

    public private(set) var fci: SelectResponse?
    public private(set) var version: UInt16 = ProtocolVersion.v1_0
    public private(set) var auth0: Auth0Command?
    public private(set) var auth0Answer: Auth0Response?
    public private(set) var context: TranscriptContext?
    public private(set) var k: [UInt8]?
    public private(set) var keys: VolatileKeys?
    /// Reader's view of the expedited and step-up channels.
    public var expedited: SecureChannel?
    public var stepUp: SecureChannel?
    public private(set) var auth1Plaintext: [UInt8]?
    /// BleSK of this transaction once the keys exist (the standard keys after AUTH0's answer, the
    /// FAST keys once the cryptogram opened): the completed notification is sealed under it.
    public private(set) var bleSK: [UInt8]?
    private var ephemeral: P256.KeyAgreement.PrivateKey?

    public init(link: APDUTransceiver, identity: ReaderSigningIdentity, groupKey: [UInt8]? = nil, interfaceByte: UInt8 = 0x5E, recorder: TranscriptRecorder?) {
        self.link = link
        self.identity = identity
        self.groupKey = groupKey ?? identity.publicKey
        self.interfaceByte = interfaceByte
        self.recorder = recorder
    }

    // MARK: - Link

    /// One APDU as given, no chaining; the answer parsed.
    public func transmit(_ bytes: [UInt8]) throws -> ResponseAPDU {
        let answer = try link.transceive(bytes)
        do { return try ResponseAPDU(parsing: answer) } catch {
            throw CheckStop(.fail("the answer to \(Names.command(bytes)) is not a response APDU: \(error)", actual: answer))
        }
    }

    /// A command with command chaining above `chunk` data bytes, and response chaining followed
    /// with GET RESPONSE of `getResponseLe` (at most 64 parts).
    /// `extendedGetResponseLe`: every GET RESPONSE asks that Le in extended form, as the official
    /// tool does once `set_extended_length` is on (NFC_UD_EXCHANGE_WITH_EXTENDED_LENGTH: `00 C0 00 00 00 01 13`).
    public func send(_ command: CommandAPDU, chunk: Int = CommandAPDU.maxShortData, getResponseLe: Int = 256,
                     extendedGetResponseLe: Int? = nil) throws -> ResponseAPDU {
        let parts = CommandChainer.split(command, chunk: chunk)
        for part in parts.dropLast() {
            let r = try transmit(part.bytes)
            guard r.status == .success else {
                throw CheckStop(.fail("a chained part of \(Names.command(part.bytes)) was answered \(r.status) (\(Names.status(r.status))); expected 9000", expected: [0x90, 0x00], actual: r.status.bytes))
            }
        }
        return try follow(try transmit(parts.last!.bytes), getResponseLe: getResponseLe, partsWithinLe: true,
                          extendedGetResponseLe: extendedGetResponseLe).response
    }

    // MARK: - Steps

    @discardableResult
    public func select() throws -> SelectResponse {
        let r = try send(Commands.select(AID.expedited))
        try Self.expect(r, .success, "SELECT of the access AID (§3)")
        let parsed: SelectResponse
        do { parsed = try SelectResponse(parsing: r.data) } catch {
            throw CheckStop(.fail("SELECT answer is not an FCI 6F { 84, A5 { 80, 5C, [7F66], [B3] } } (§3): \(error)", actual: r.data))
        }
        fci = parsed
        guard let v = Self.versions.first(where: parsed.versions.contains) else {
            throw CheckStop(.fail("SELECT lists versions \(parsed.versions.map { Hex.encode([UInt8($0 >> 8), UInt8($0 & 0xFF)]) }); LockBench speaks 0100 and 0009 (§3)"))
        }
        version = v
        return parsed
    }

    /// Over BLE the phone's "initiate access protocol" carries the `A5` a SELECT answer would
    /// (docs/ble.md): the keys bind those bytes, and AUTH0 names the best version listed there.
    public func initiated(proprietaryTLV: [UInt8], versions: [UInt16]) throws {
        var announced = SelectResponse(versions: versions)
        announced.proprietaryTLV = proprietaryTLV
        fci = announced
        guard let v = Self.versions.first(where: versions.contains) else {
            throw CheckStop(.fail("the initiate lists versions \(versions.map { Hex.encode($0.bigEndianBytes) }); LockBench speaks 0100 and 0009"))
        }
        version = v
    }

    /// Binds `fci` into the next keys (a check that re-SELECTs and must choose the A5 again).
    public func bind(_ fci: SelectResponse) { self.fci = fci }

    /// AUTH0 (§4); `readerID` and `versionOverride` let checks name an unknown reader or version.
    public func sendAuth0(fast: Bool, le: Bool = true, readerID: [UInt8]? = nil, versionOverride: UInt16? = nil,
                          extra: [UInt8] = []) throws -> ResponseAPDU {
        var apdu = makeAuth0(fast: fast, readerID: readerID, versionOverride: versionOverride)
        apdu.data += extra
        if !le { apdu.le = nil }
        return try send(apdu)
    }

    /// The AUTH0 command with a fresh ephemeral key and transaction id (remembered for the keys),
    /// for checks that send it their own way (other P1/P2, an Le, a broken chain).
    public func makeAuth0(fast: Bool, policy: UInt8 = 0x01, readerID: [UInt8]? = nil, versionOverride: UInt16? = nil,
                          vendorExtension: [UInt8]? = nil) -> CommandAPDU {
        let eph = P256.KeyAgreement.PrivateKey()
        ephemeral = eph
        recorder?.secret("ephemeral-private", Array(eph.rawRepresentation))
        let cmd = Auth0Command(flags: fast ? Auth0Command.flagFast : 0, policy: policy, version: versionOverride ?? version,
                               readerEphemeralKey: Array(eph.publicKey.x963Representation),
                               transactionID: Array(SystemRandom().bytes(16)), readerID: readerID ?? identity.readerID,
                               vendorExtension: vendorExtension)
        auth0 = cmd
        return cmd.apdu
    }

    /// The AUTH1 command signed over the transcript (or with `signature`), for checks that send it
    /// their own way.
    public func makeAuth1(returnPublicKey: Bool = true, signature: [UInt8]? = nil) throws -> CommandAPDU {
        guard let ctx = context else { throw CheckStop(.fail("AUTH1 before AUTH0")) }
        let sig = signature ?? Primitives.sign(ctx.signedData(reader: true), with: identity.signingKey)
        return Auth1Command(flags: returnPublicKey ? Auth1Command.flagReturnPublicKey : 0, signature: sig).apdu
    }

    /// `command` as a chain of `chunk`-byte parts (every part with the command's Le, as the
    /// official tool sends them), leaving out the parts whose index is in `skipping`; the answer to
    /// the last part, response chaining followed. Answers to the other parts are not judged.
    public func sendChain(_ command: CommandAPDU, chunk: Int, skipping: Set<Int> = []) throws -> ResponseAPDU {
        var parts = CommandChainer.split(command, chunk: chunk)
        for i in parts.indices { parts[i].le = command.le }
        for (i, part) in parts.enumerated().dropLast() where !skipping.contains(i) { _ = try transmit(part.bytes) }
        return try follow(try transmit(parts.last!.bytes)).response
    }

    /// Follows `61xx` with GET RESPONSE of Le = SW2 (`00`: `getResponseLe`), at most `getResponseLe`,
    /// as the official tool does (at most 64 parts): the whole answer, and whether it came in parts.
    /// `partsWithinLe`: a part longer than its Le fails the check (§2; the official cases do not judge it).
    public func follow(_ first: ResponseAPDU, getResponseLe: Int = 256, partsWithinLe: Bool = false,
                       extendedGetResponseLe: Int? = nil) throws -> (response: ResponseAPDU, chained: Bool) {
        var r = first, data = first.data, rounds = 0
        while r.status.isBytesRemaining {
            rounds += 1
            guard rounds <= 64 else { throw CheckStop(.fail("more than 64 response parts (61xx) for one command")) }
            let want = extendedGetResponseLe ?? (r.status.sw2 == 0 ? getResponseLe : min(Int(r.status.sw2), getResponseLe))
            r = try transmit(CommandAPDU(cla: 0x00, ins: Instruction.getResponse, le: want, extendedLength: extendedGetResponseLe != nil).bytes)
            if partsWithinLe && r.data.count > want {
                throw CheckStop(.fail("GET RESPONSE with Le \(want) answered \(r.data.count) bytes (§2: a part never exceeds Le)"))
            }
            data += r.data
        }
        return (ResponseAPDU(data: data, status: r.status), rounds > 0)
    }

    /// AUTH0 that must succeed; derives the transcript context and K.
    @discardableResult
    public func auth0(fast: Bool = false, readerID: [UInt8]? = nil) throws -> Auth0Response {
        let r = try sendAuth0(fast: fast, readerID: readerID)
        try Self.expect(r, .success, "AUTH0 (§4)")
        return try acceptAuth0(r)
    }

    public func acceptAuth0(_ r: ResponseAPDU) throws -> Auth0Response {
        let answer: Auth0Response
        do { answer = try Auth0Response(parsing: r.data) } catch {
            throw CheckStop(.fail("AUTH0 answer is not 86 41 key [9D 40 cryptogram] (§4): \(error)", actual: r.data))
        }
        guard Primitives.isPoint(answer.deviceEphemeralKey) else {
            throw CheckStop(.fail("AUTH0 answer: 86 is not a P-256 point (§4)", actual: answer.deviceEphemeralKey))
        }
        auth0Answer = answer
        guard let cmd = auth0, let fci, let eph = ephemeral else { throw CheckStop(.fail("AUTH0 before SELECT")) }
        let ctx = TranscriptContext(readerGroupKey: groupKey, readerID: cmd.readerID, interfaceByte: interfaceByte,
                                    version: cmd.version, readerEphemeralKey: cmd.readerEphemeralKey,
                                    transactionID: cmd.transactionID, flags: cmd.flags, policy: cmd.policy,
                                    fciProprietary: fci.proprietaryTLV, deviceEphemeralKey: answer.deviceEphemeralKey)
        context = ctx
        do {
            k = KeySchedule.sharedK(z: try Primitives.ecdh(privateKey: eph, peerPublicKey: answer.deviceEphemeralKey), transactionID: cmd.transactionID)
        } catch {
            throw CheckStop(.fail("ECDH with the device ephemeral key failed: \(error)", actual: answer.deviceEphemeralKey))
        }
        keys = KeySchedule.volatileKeys(k: k!, context: ctx)
        bleSK = keys?.bleSK
        return answer
    }

    /// AUTH1 (§6) signed by `signer` (default: the reader identity over the right transcript),
    /// with a compressed reader certificate in `90` when given (then sent as the official reader
    /// chains: `officialChain`).
    public func sendAuth1(returnPublicKey: Bool = true, signature: [UInt8]? = nil, signingKey: P256.Signing.PrivateKey? = nil,
                          extra: [UInt8] = [], certificate: [UInt8]? = nil) throws -> ResponseAPDU {
        guard let ctx = context else { throw CheckStop(.fail("AUTH1 before AUTH0")) }
        let sig = signature ?? Primitives.sign(ctx.signedData(reader: true), with: signingKey ?? identity.signingKey)
        var apdu = Auth1Command(flags: returnPublicKey ? Auth1Command.flagReturnPublicKey : 0, signature: sig, certificate: certificate).apdu
        apdu.data += extra
        return certificate == nil ? try send(apdu) : try officialChain(apdu, "AUTH1")
    }

    /// LOAD CERT `80 D1 00 00 Lc <compressed certificate> 00`, chained as the official reader
    /// chains (`officialChain`): the answer to the last part.
    public func loadCert(_ compressed: [UInt8]) throws -> ResponseAPDU {
        try officialChain(CommandAPDU(cla: 0x80, ins: Instruction.loadCert, data: compressed, le: 256), "LOAD CERT")
    }

    /// `command` in parts of at most 255 data bytes, every part with the command's Le (the
    /// official reader's `create_command`); each part but the last must be answered 9000.
    func officialChain(_ command: CommandAPDU, _ what: String) throws -> ResponseAPDU {
        var parts = CommandChainer.split(command)
        for i in parts.indices { parts[i].le = command.le }
        for part in parts.dropLast() {
            let r = try transmit(part.bytes)
            guard r.status == .success else {
                throw CheckStop(.fail("a chained part of \(what) was answered \(r.status) (\(Names.status(r.status))); each part must be answered 9000",
                                      expected: [0x90, 0x00], actual: r.status.bytes))
            }
        }
        return try follow(try transmit(parts[parts.count - 1].bytes)).response
    }

    /// AUTH1 that must succeed: opens the answer under ExpeditedSKDevice, counter 1.
    @discardableResult
    public func auth1(returnPublicKey: Bool = true, extra: [UInt8] = [], certificate: [UInt8]? = nil,
                      signingKey: P256.Signing.PrivateKey? = nil) throws -> [TLV] {
        let r = try sendAuth1(returnPublicKey: returnPublicKey, signingKey: signingKey, extra: extra, certificate: certificate)
        try Self.expect(r, .success, "AUTH1 (§6)")
        guard let keys else { throw CheckStop(.fail("AUTH1 without keys")) }
        var channel = SecureChannel(role: .reader, readerKey: keys.expeditedSKReader, deviceKey: keys.expeditedSKDevice)
        let plain: [UInt8]
        do { plain = try channel.open(r.data) } catch {
            throw CheckStop(.fail("AUTH1 answer does not open under ExpeditedSKDevice, device counter 1 (§5, §7): \(error)", actual: r.data))
        }
        expedited = channel
        readerKeys[.expedited] = keys.expeditedSKReader
        auth1Plaintext = plain
        // Top-level fields only: the official reader skips a tag it does not list whatever it holds
        // (tlv.py verifySequence), e.g. the AA 03 010203 of --fault auth1-extra-tag.
        do { return try TLV.parseFields(plain) } catch {
            throw CheckStop(.fail("AUTH1 plaintext is not BER-TLV (§6): \(error)", actual: plain))
        }
    }

    /// The credential public key from the AUTH1 plaintext (`5A`).
    public var credentialKey: [UInt8]? {
        guard let p = auth1Plaintext, let t = try? TLV.parseFields(p) else { return nil }
        return t.first(Tag.Auth1.credentialKey)?.value
    }

    /// The signaling bitmap from the AUTH1 plaintext (`5E`), nil when absent.
    public var signaling: UInt16? {
        guard let p = auth1Plaintext, let t = try? TLV.parseFields(p), let s = t.first(Tag.Auth1.signaling)?.value, s.count == 2 else { return nil }
        return UInt16(s[0]) << 8 | UInt16(s[1])
    }

    /// Kpersistent after a standard AUTH1 (§5), bound to the credential key.
    public func persistentKey() -> (credentialKey: [UInt8], key: [UInt8])? {
        guard let k, let ctx = context, let cred = credentialKey else { return nil }
        let p = KeySchedule.persistentKey(k: k, context: ctx, credentialKey: cred)
        recorder?.persistentKey(credentialKey: cred, key: p)
        return (cred, p)
    }

    /// Opens the AUTH0 cryptogram with a cached Kpersistent; on success the FAST channel is up.
    public func openFast(_ cached: (credentialKey: [UInt8], key: [UInt8])) -> [UInt8]? {
        guard let ctx = context, let cryptogram = auth0Answer?.cryptogram else { return nil }
        let fast = KeySchedule.fastKeys(persistent: cached.key, context: ctx, credentialKey: cached.credentialKey)
        guard let plain = KeySchedule.openCryptogram(fast, cryptogram) else { return nil }
        recorder?.persistentKey(credentialKey: cached.credentialKey, key: cached.key)
        expedited = SecureChannel(role: .reader, readerKey: fast.expeditedSKReader, deviceKey: fast.expeditedSKDevice)
        readerKeys[.expedited] = fast.expeditedSKReader
        bleSK = fast.bleSK
        return plain
    }

    public enum Channel: String, Sendable { case expedited, stepUp = "step-up" }

    /// EXCHANGE (§10) on a channel; `counter` forces the reader counter (replays, gaps).
    public func sendExchange(_ plaintext: [UInt8], on which: Channel = .expedited, counter: UInt32? = nil, chunk: Int = CommandAPDU.maxShortData,
                             extendedGetResponseLe: Int? = nil) throws -> (ResponseAPDU, [UInt8]) {
        guard var channel = which == .expedited ? expedited : stepUp else {
            throw CheckStop(.fail("EXCHANGE before the \(which.rawValue) channel exists"))
        }
        let sealed: [UInt8]
        if let counter {
            guard let key = readerKeys[which] else { throw CheckStop(.fail("no reader key remembered for the \(which.rawValue) channel")) }
            sealed = try Primitives.seal(key: key, nonce: SecureChannel.iv(prefix: SecureChannel.readerPrefix, counter: counter), plaintext: plaintext)
        } else {
            sealed = try channel.seal(plaintext)
        }
        let r = try send(Commands.exchange(sealed), chunk: chunk, extendedGetResponseLe: extendedGetResponseLe)
        if which == .expedited { expedited = channel } else { stepUp = channel }
        return (r, sealed)
    }

    private var readerKeys: [Channel: [UInt8]] = [:]

    /// Remembers the reader-direction key of a channel (for forced counters).
    public func rememberReaderKey(_ which: Channel, _ key: [UInt8]) { readerKeys[which] = key }

    /// EXCHANGE that must be answered 9000 with a plaintext that opens under the device key.
    public func exchange(_ plaintext: [UInt8], on which: Channel = .expedited, chunk: Int = CommandAPDU.maxShortData,
                         extendedGetResponseLe: Int? = nil) throws -> [UInt8] {
        let (r, _) = try sendExchange(plaintext, on: which, chunk: chunk, extendedGetResponseLe: extendedGetResponseLe)
        try Self.expect(r, .success, "EXCHANGE on the \(which.rawValue) channel (§10)")
        guard var channel = which == .expedited ? expedited : stepUp else { throw CheckStop(.fail("no channel")) }
        do {
            let plain = try channel.open(r.data)
            if which == .expedited { expedited = channel } else { stepUp = channel }
            return plain
        } catch {
            throw CheckStop(.fail("EXCHANGE answer does not open under the \(which.rawValue) device key at the next device counter (§7): \(error)", actual: r.data))
        }
    }

    /// Builds the step-up channel from StepUpSK (§9).
    public func openStepUpChannel() throws {
        guard let keys else { throw CheckStop(.fail("step-up needs a standard AUTH1 first")) }
        let s = KeySchedule.stepUpKeys(stepUpSK: keys.stepUpSK)
        stepUp = SecureChannel(role: .reader, readerKey: s.reader, deviceKey: s.device)
        readerKeys[.stepUp] = s.reader
    }

    /// ENVELOPE with a DeviceRequest (§9); the answer's DeviceResponse, parsed.
    public func envelope(_ request: DeviceRequest = .standard, getResponseLe: Int = 256) throws -> (ResponseAPDU, DeviceResponse?) {
        if stepUp == nil { try openStepUpChannel() }
        guard var channel = stepUp else { throw CheckStop(.fail("no step-up channel")) }
        let sealed = try channel.seal(request.encoded())
        let r = try send(Commands.envelope(StepUpEnvelope.wrap(sealed)), getResponseLe: getResponseLe)
        guard r.status == .success else { stepUp = channel; return (r, nil) }
        let inner: [UInt8]
        do { inner = try StepUpEnvelope.unwrap(r.data) } catch {
            throw CheckStop(.fail("ENVELOPE answer is not 53 { \"data\": bstr } (§9): \(error)", actual: Array(r.data.prefix(16))))
        }
        let plain: [UInt8]
        do { plain = try channel.open(inner) } catch {
            throw CheckStop(.fail("ENVELOPE answer does not open under StepUpSKDevice, device counter 1 (§9): \(error)"))
        }
        stepUp = channel
        do { return (r, try DeviceResponse(parsing: plain)) } catch {
            throw CheckStop(.fail("ENVELOPE plaintext is not a DeviceResponse {\"1\": version, \"2\": [Document], \"3\": status} (§9): \(error)", actual: Array(plain.prefix(24))))
        }
    }

    /// CONTROL FLOW (§10), no Le unless asked.
    @discardableResult
    public func controlFlow(s2: UInt8 = ControlFlow.noInformation, le: Bool = false) throws -> ResponseAPDU {
        var apdu = ControlFlow(s1: 0x00, s2: s2).apdu
        if le { apdu.le = 256 }
        return try transmit(apdu.bytes)
    }

    // MARK: - Expectations

    /// Ends the check with a failure unless `r` carries `sw`.
    public static func expect(_ r: ResponseAPDU, _ sw: StatusWord, _ what: String) throws {
        guard r.status == sw else {
            throw CheckStop(.fail("\(what) answered \(r.status) (\(Names.status(r.status))); expected \(sw) (\(Names.status(sw)))",
                                  expected: sw.bytes, actual: r.status.bytes))
        }
    }
}

