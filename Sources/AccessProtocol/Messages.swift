import ByteCore
import Codecs

/// Application identifiers.
public enum AID {
    /// The expedited (access) applet.
    public static let expedited: [UInt8] = [0xA0, 0x00, 0x00, 0x09, 0x09, 0xAC, 0xCE, 0x55, 0x01]
    /// The step-up applet.
    public static let stepUp: [UInt8] = [0xA0, 0x00, 0x00, 0x09, 0x09, 0xAC, 0xCE, 0x55, 0x02]
}

/// Protocol versions on the wire (2 bytes, big-endian).
public enum ProtocolVersion {
    public static let v1_0: UInt16 = 0x0100
    public static let v0_9: UInt16 = 0x0009
}

/// Instruction bytes and class bytes of the commands LockBench sends.
public enum Instruction {
    public static let select: UInt8 = 0xA4
    public static let auth0: UInt8 = 0x80
    public static let loadCert: UInt8 = 0xD1
    public static let auth1: UInt8 = 0x81
    public static let exchange: UInt8 = 0xC9
    public static let controlFlow: UInt8 = 0x3C
    public static let envelope: UInt8 = 0xC3
    public static let getResponse: UInt8 = 0xC0
}

/// Every BER-TLV tag the protocol uses, by message.
public enum Tag {
    public enum FCI {
        public static let template: UInt32 = 0x6F
        public static let aid: UInt32 = 0x84
        public static let proprietary: UInt32 = 0xA5
        public static let type: UInt32 = 0x80
        public static let versions: UInt32 = 0x5C
        public static let capabilities: UInt32 = 0x7F66
        public static let integer: UInt32 = 0x02
        public static let vendor: UInt32 = 0xB3
    }
    public enum Auth0 {
        public static let flags: UInt32 = 0x41
        public static let policy: UInt32 = 0x42
        public static let version: UInt32 = 0x5C
        public static let readerEphemeralKey: UInt32 = 0x87
        public static let transactionID: UInt32 = 0x4C
        public static let readerID: UInt32 = 0x4D
        public static let vendorExtension: UInt32 = 0xB1
        public static let deviceEphemeralKey: UInt32 = 0x86
        public static let cryptogram: UInt32 = 0x9D
    }
    public enum Auth1 {
        public static let flags: UInt32 = 0x41
        public static let signature: UInt32 = 0x9E
        public static let certificate: UInt32 = 0x90
        public static let keySlot: UInt32 = 0x4E
        public static let credentialKey: UInt32 = 0x5A
        public static let mailbox: UInt32 = 0x4B
        public static let signaling: UInt32 = 0x5E
        public static let credentialTimestamp: UInt32 = 0x91
        public static let revocationTimestamp: UInt32 = 0x92
    }
    public enum Exchange {
        public static let mailboxOperations: UInt32 = 0xBA
        public static let atomic: UInt32 = 0x8C
        public static let read: UInt32 = 0x87
        public static let write: UInt32 = 0x8A
        public static let set: UInt32 = 0x95
        public static let notify: UInt32 = 0xAE
        public static let readerStatus: UInt32 = 0x97
        public static let urskRequest: UInt32 = 0x98
    }
    public enum ControlFlow {
        public static let s1: UInt32 = 0x41
        public static let s2: UInt32 = 0x42
        public static let info: UInt32 = 0x43
    }
    public enum Envelope {
        public static let data: UInt32 = 0x53
    }
}

/// Signaling bitmap bits (AUTH1 response `5E`).
public struct SignalingBitmap: OptionSet, Sendable, Hashable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let accessDocumentAvailable = SignalingBitmap(rawValue: 1 << 0)
    public static let revocationDocumentAvailable = SignalingBitmap(rawValue: 1 << 1)
    public static let stepUpSelectRequired = SignalingBitmap(rawValue: 1 << 2)
    public static let mailboxHasData = SignalingBitmap(rawValue: 1 << 3)
    public static let mailboxReadable = SignalingBitmap(rawValue: 1 << 4)
    public static let mailboxWritable = SignalingBitmap(rawValue: 1 << 5)

    /// `5E 02` value.
    public var bytes: [UInt8] { rawValue.bigEndianBytes }

    /// The phone announces a document to fetch (bit 0 or 1): a step-up can bring the lock
    /// something. A phone announcing none (the official NFC_RDR_FAST and NFC_RDR_EXCHANGE_MAILBOX
    /// phones) gets no ENVELOPE: the lock decides on what it holds.
    public var announcesDocuments: Bool { !isDisjoint(with: [.accessDocumentAvailable, .revocationDocumentAvailable]) }

    /// The `5E` of a FAST cryptogram's plaintext; nil when absent or malformed.
    public init?(cryptogramPlaintext plain: [UInt8]) {
        guard let v = (try? TLV.parseFields(plain))?.first(Tag.Auth1.signaling)?.value, v.count == 2 else { return nil }
        self.init(rawValue: UInt16(v[0]) << 8 | UInt16(v[1]))
    }
}

// MARK: - SELECT

/// SELECT response: `6F { 84 AID, A5 { 80 02 0000, 5C 2n versions, [7F66 08 {02 02 maxCmd,
/// 02 02 maxRsp}], [B3 vendor] } }`.
public struct SelectResponse: Equatable, Sendable {
    public var aid: [UInt8]
    public var versions: [UInt16]
    public var maxCommand: UInt16?
    public var maxResponse: UInt16?
    public var vendor: [UInt8]?
    /// The whole `A5` TLV as received (bound into the key derivation).
    public var proprietaryTLV: [UInt8]

    public init(aid: [UInt8] = AID.expedited, versions: [UInt16], maxCommand: UInt16? = nil,
                maxResponse: UInt16? = nil, vendor: [UInt8]? = nil) {
        self.aid = aid
        self.versions = versions
        self.maxCommand = maxCommand
        self.maxResponse = maxResponse
        self.vendor = vendor
        self.proprietaryTLV = []
        self.proprietaryTLV = proprietary().encoded()
    }

    func proprietary() -> TLV {
        var children = [TLV(Tag.FCI.type, [0x00, 0x00]),
                        TLV(Tag.FCI.versions, versions.flatMap(\.bigEndianBytes))]
        if let maxCommand, let maxResponse {
            children.append(TLV(Tag.FCI.capabilities, children: [
                TLV(Tag.FCI.integer, maxCommand.bigEndianBytes),
                TLV(Tag.FCI.integer, maxResponse.bigEndianBytes),
            ]))
        }
        if let vendor { children.append(TLV(Tag.FCI.vendor, vendor)) }
        return TLV(Tag.FCI.proprietary, children: children)
    }

    public func encoded() -> [UInt8] {
        TLV(Tag.FCI.template, children: [TLV(Tag.FCI.aid, aid), proprietary()]).encoded()
    }

    public init(parsing data: [UInt8]) throws(TLVError) {
        let top = try TLV.parseFields(data)
        guard top.count == 1, let fci = top.first, fci.tag == Tag.FCI.template else {
            throw TLVError(.unexpectedTag, "SELECT response is not one 6F template")
        }
        let inner = try TLV.parseFields(fci.value)
        // 84 is not needed to verify anything (the A5 bytes are bound into the keys): optional.
        aid = inner.first(Tag.FCI.aid)?.value ?? []
        guard let prop = inner.first(Tag.FCI.proprietary) else { throw TLVError(.missingTag, "A5 missing from FCI") }
        proprietaryTLV = prop.encoded()
        let fields = try TLV.parseFields(prop.value)
        let v = try fields.require(Tag.FCI.versions)
        guard !v.isEmpty, v.count % 2 == 0 else { throw TLVError(.badLength, "5C holds \(v.count) bytes, not 2 per version") }
        versions = stride(from: 0, to: v.count, by: 2).map { UInt16(v[$0]) << 8 | UInt16(v[$0 + 1]) }
        maxCommand = nil
        maxResponse = nil
        if let caps = fields.first(Tag.FCI.capabilities) {
            let ints = try caps.children().filter { $0.tag == Tag.FCI.integer }
            guard ints.count == 2, ints.allSatisfy({ $0.value.count == 2 }) else {
                throw TLVError(.badLength, "7F66 must hold two 2-byte integers")
            }
            maxCommand = UInt16(ints[0].value[0]) << 8 | UInt16(ints[0].value[1])
            maxResponse = UInt16(ints[1].value[0]) << 8 | UInt16(ints[1].value[1])
        }
        vendor = fields.first(Tag.FCI.vendor)?.value
    }
}

/// Step-up SELECT response: `6F { 84 step-up AID }`.
public struct StepUpSelectResponse {
    public static func encoded() -> [UInt8] {
        TLV(Tag.FCI.template, children: [TLV(Tag.FCI.aid, AID.stepUp)]).encoded()
    }
}

// MARK: - AUTH0

/// AUTH0 command data, in this order: `41 01 flags, 42 01 policy, 5C 02 version,
/// 87 41 readerEph, 4C 10 tid, 4D 20 readerID [, B1 vendor]`.
public struct Auth0Command: Equatable, Sendable {
    /// Bit 0: the reader asks for a FAST cryptogram.
    public var flags: UInt8
    /// 01 user-device setting, 02 secure action, 03 force user authentication.
    public var policy: UInt8
    public var version: UInt16
    public var readerEphemeralKey: [UInt8]
    public var transactionID: [UInt8]
    public var readerID: [UInt8]
    public var vendorExtension: [UInt8]?

    public static let flagFast: UInt8 = 0x01

    public init(flags: UInt8, policy: UInt8, version: UInt16, readerEphemeralKey: [UInt8],
                transactionID: [UInt8], readerID: [UInt8], vendorExtension: [UInt8]? = nil) {
        self.flags = flags
        self.policy = policy
        self.version = version
        self.readerEphemeralKey = readerEphemeralKey
        self.transactionID = transactionID
        self.readerID = readerID
        self.vendorExtension = vendorExtension
    }

    public func encoded() -> [UInt8] {
        var t = [TLV(Tag.Auth0.flags, [flags]), TLV(Tag.Auth0.policy, [policy]),
                 TLV(Tag.Auth0.version, version.bigEndianBytes),
                 TLV(Tag.Auth0.readerEphemeralKey, readerEphemeralKey),
                 TLV(Tag.Auth0.transactionID, transactionID), TLV(Tag.Auth0.readerID, readerID)]
        if let vendorExtension { t.append(TLV(Tag.Auth0.vendorExtension, vendorExtension)) }
        return t.encoded()
    }

    public var apdu: CommandAPDU { CommandAPDU(cla: 0x80, ins: Instruction.auth0, data: encoded(), le: 256) }

    /// Every field but `B1` is required (each is bound into the keys or the signatures); they are
    /// read in any order and unknown tags are skipped. LockBench *sends* them in the order above.
    public init(parsing data: [UInt8]) throws(TLVError) {
        let t = try TLV.parseFields(data)
        flags = try t.require(Tag.Auth0.flags, length: 1)[0]
        policy = try t.require(Tag.Auth0.policy, length: 1)[0]
        let v = try t.require(Tag.Auth0.version, length: 2)
        version = UInt16(v[0]) << 8 | UInt16(v[1])
        readerEphemeralKey = try t.require(Tag.Auth0.readerEphemeralKey, length: 65)
        transactionID = try t.require(Tag.Auth0.transactionID, length: 16)
        readerID = try t.require(Tag.Auth0.readerID, length: 32)
        vendorExtension = t.first(Tag.Auth0.vendorExtension)?.value
    }
}

/// AUTH0 response data: `86 41 deviceEph [9D 40 cryptogram]`.
public struct Auth0Response: Equatable, Sendable {
    public var deviceEphemeralKey: [UInt8]
    public var cryptogram: [UInt8]?

    public init(deviceEphemeralKey: [UInt8], cryptogram: [UInt8]? = nil) {
        self.deviceEphemeralKey = deviceEphemeralKey
        self.cryptogram = cryptogram
    }

    public func encoded() -> [UInt8] {
        var t = [TLV(Tag.Auth0.deviceEphemeralKey, deviceEphemeralKey)]
        if let cryptogram { t.append(TLV(Tag.Auth0.cryptogram, cryptogram)) }
        return t.encoded()
    }

    public init(parsing data: [UInt8]) throws(TLVError) {
        let t = try TLV.parseFields(data)
        deviceEphemeralKey = try t.require(Tag.Auth0.deviceEphemeralKey, length: 65)
        cryptogram = t.first(Tag.Auth0.cryptogram) == nil ? nil : try t.require(Tag.Auth0.cryptogram, length: 64)
    }
}

// MARK: - AUTH1

/// AUTH1 command data: `41 01 flags, 9E 40 reader signature [, 90 certificate]`.
public struct Auth1Command: Equatable, Sendable {
    /// Bit 0: return the credential public key (`5A`), else the key slot (`4E`).
    public var flags: UInt8
    public var signature: [UInt8]
    public var certificate: [UInt8]?

    public static let flagReturnPublicKey: UInt8 = 0x01

    public init(flags: UInt8, signature: [UInt8], certificate: [UInt8]? = nil) {
        self.flags = flags
        self.signature = signature
        self.certificate = certificate
    }

    public func encoded() -> [UInt8] {
        var t = [TLV(Tag.Auth1.flags, [flags]), TLV(Tag.Auth1.signature, signature)]
        if let certificate { t.append(TLV(Tag.Auth1.certificate, certificate)) }
        return t.encoded()
    }

    public var apdu: CommandAPDU { CommandAPDU(cla: 0x80, ins: Instruction.auth1, data: encoded(), le: 256) }

    public init(parsing data: [UInt8]) throws(TLVError) {
        let t = try TLV.parseFields(data)
        flags = try t.require(Tag.Auth1.flags, length: 1)[0]
        signature = try t.require(Tag.Auth1.signature, length: 64)
        certificate = t.first(Tag.Auth1.certificate)?.value
    }
}

/// AUTH1 response plaintext: `5A 41 key | 4E 08 slot, 9E 40 device signature, [4B mailbox],
/// [5E 02 signaling], [91 14 credential timestamp], [92 14 revocation timestamp]`.
///
/// Required are the tags without which the transaction cannot be verified: the identity (`5A` or
/// `4E`) and the device signature `9E`. The public reference device sends `5A 9E 5E` only; others
/// send `91` only with an access document and `92` only with a revocation document. An absent
/// `5E` is an empty bitmap, an absent timestamp is "none"; a present one of the wrong length is
/// refused; unknown tags are skipped.
public struct Auth1ResponsePlaintext: Equatable, Sendable {
    public enum Identity: Equatable, Sendable {
        case publicKey([UInt8])
        case keySlot([UInt8])
    }
    public var identity: Identity
    public var signature: [UInt8]
    public var mailbox: [UInt8]?
    public var signaling: SignalingBitmap
    /// ASCII `YYYY-MM-DDTHH:MM:SSZ`, or 20 zero bytes; nil when absent (not sent).
    public var credentialTimestamp: [UInt8]?
    public var revocationTimestamp: [UInt8]?

    public static let zeroTimestamp = [UInt8](repeating: 0, count: 20)

    public init(identity: Identity, signature: [UInt8], mailbox: [UInt8]? = nil, signaling: SignalingBitmap,
                credentialTimestamp: [UInt8]? = zeroTimestamp, revocationTimestamp: [UInt8]? = zeroTimestamp) {
        self.identity = identity
        self.signature = signature
        self.mailbox = mailbox
        self.signaling = signaling
        self.credentialTimestamp = credentialTimestamp
        self.revocationTimestamp = revocationTimestamp
    }

    public func encoded() -> [UInt8] {
        var t: [TLV] = []
        switch identity {
        case .publicKey(let k): t.append(TLV(Tag.Auth1.credentialKey, k))
        case .keySlot(let s): t.append(TLV(Tag.Auth1.keySlot, s))
        }
        t.append(TLV(Tag.Auth1.signature, signature))
        if let mailbox { t.append(TLV(Tag.Auth1.mailbox, mailbox)) }
        t.append(TLV(Tag.Auth1.signaling, signaling.bytes))
        if let credentialTimestamp { t.append(TLV(Tag.Auth1.credentialTimestamp, credentialTimestamp)) }
        if let revocationTimestamp { t.append(TLV(Tag.Auth1.revocationTimestamp, revocationTimestamp)) }
        return t.encoded()
    }

    public init(parsing data: [UInt8]) throws(TLVError) {
        let t = try TLV.parseFields(data)
        if t.first(Tag.Auth1.credentialKey) != nil {
            identity = .publicKey(try t.require(Tag.Auth1.credentialKey, length: 65))
        } else if t.first(Tag.Auth1.keySlot) != nil {
            identity = .keySlot(try t.require(Tag.Auth1.keySlot, length: 8))
        } else {
            throw TLVError(.missingTag, "AUTH1 response has neither 5A nor 4E")
        }
        signature = try t.require(Tag.Auth1.signature, length: 64)
        mailbox = t.first(Tag.Auth1.mailbox)?.value
        if t.first(Tag.Auth1.signaling) != nil {
            let s = try t.require(Tag.Auth1.signaling, length: 2)
            signaling = SignalingBitmap(rawValue: UInt16(s[0]) << 8 | UInt16(s[1]))
        } else {
            signaling = []
        }
        credentialTimestamp = try t.optional(Tag.Auth1.credentialTimestamp, length: 20)
        revocationTimestamp = try t.optional(Tag.Auth1.revocationTimestamp, length: 20)
    }

    /// `5E 02 bitmap ‖ 91 14 ts ‖ 92 14 ts`: the FAST cryptogram's plaintext.
    /// The cryptogram always carries both timestamps (zeros when there is none), as the public
    /// reference device's does.
    public static func cryptogramPlaintext(signaling: SignalingBitmap, credentialTimestamp: [UInt8]?,
                                           revocationTimestamp: [UInt8]?) -> [UInt8] {
        [TLV(Tag.Auth1.signaling, signaling.bytes),
         TLV(Tag.Auth1.credentialTimestamp, credentialTimestamp ?? zeroTimestamp),
         TLV(Tag.Auth1.revocationTimestamp, revocationTimestamp ?? zeroTimestamp)].encoded()
    }
}

// MARK: - EXCHANGE

/// One mailbox operation inside EXCHANGE `BA { … }`.
public enum MailboxOperation: Equatable, Sendable {
    /// `87 04 offset(2) ‖ length(2)`: answered `length(2) ‖ data`.
    case read(offset: UInt16, length: UInt16)
    /// `8A L offset(2) ‖ data`.
    case write(offset: UInt16, data: [UInt8])
    /// `95 05 offset(2) ‖ length(2) ‖ value`: fill `length` bytes with `value`.
    case set(offset: UInt16, length: UInt16, value: UInt8)

    var tlv: TLV {
        switch self {
        case .read(let o, let l): return TLV(Tag.Exchange.read, o.bigEndianBytes + l.bigEndianBytes)
        case .write(let o, let d): return TLV(Tag.Exchange.write, o.bigEndianBytes + d)
        case .set(let o, let l, let v): return TLV(Tag.Exchange.set, o.bigEndianBytes + l.bigEndianBytes + [v])
        }
    }

    var isRead: Bool { if case .read = self { return true } else { return false } }
}

func be16(_ b: [UInt8], at i: Int) -> UInt16 { UInt16(b[i]) << 8 | UInt16(b[i + 1]) }

/// EXCHANGE command plaintext, in the order strict devices expect:
/// `[BA { [8C 01 atomic], 87 04 read…, 8A write…, 95 05 set… }] [AE notify] [97 02 status] [98 00]`.
/// LockBench sends the mailbox operations its lock configuration lists (reads, then writes, then
/// sets) and `97 02`. Parsing reads every tag, skips unknown ones, and refuses a known tag of the
/// wrong length.
public struct ExchangeCommandPlaintext: Equatable, Sendable {
    public var atomic: Bool?
    public var mailbox: [MailboxOperation]
    /// `AE` value, raw (LockBench sends none).
    public var notify: [UInt8]?
    public var readerStatus: UInt16?
    public var urskRequest: Bool

    public init(readerStatus: UInt16?, mailbox: [MailboxOperation] = [], atomic: Bool? = nil, notify: [UInt8]? = nil,
                urskRequest: Bool = false) {
        self.readerStatus = readerStatus
        self.mailbox = mailbox
        self.atomic = atomic
        self.notify = notify
        self.urskRequest = urskRequest
    }

    /// The mailbox operations in the order they are sent: reads, writes, sets.
    public var orderedMailbox: [MailboxOperation] {
        mailbox.filter(\.isRead) + mailbox.filter { if case .write = $0 { return true } else { return false } }
            + mailbox.filter { if case .set = $0 { return true } else { return false } }
    }

    public var reads: Int { mailbox.filter(\.isRead).count }

    public func encoded() -> [UInt8] {
        var t: [TLV] = []
        if !mailbox.isEmpty || atomic != nil {
            var ops: [TLV] = []
            if let atomic { ops.append(TLV(Tag.Exchange.atomic, [atomic ? 0x01 : 0x00])) }
            ops += orderedMailbox.map(\.tlv)
            t.append(TLV(Tag.Exchange.mailboxOperations, children: ops))
        }
        if let notify { t.append(TLV(Tag.Exchange.notify, notify)) }
        if let readerStatus { t.append(TLV(Tag.Exchange.readerStatus, readerStatus.bigEndianBytes)) }
        if urskRequest { t.append(TLV(Tag.Exchange.urskRequest, [])) }
        return t.encoded()
    }

    public init(parsing data: [UInt8]) throws(TLVError) {
        let t = try TLV.parseFields(data)
        readerStatus = try t.optional(Tag.Exchange.readerStatus, length: 2).map { be16($0, at: 0) }
        notify = t.first(Tag.Exchange.notify)?.value
        urskRequest = t.first(Tag.Exchange.urskRequest) != nil
        atomic = nil
        mailbox = []
        guard let ba = t.first(Tag.Exchange.mailboxOperations) else { return }
        for op in try TLV.parseFields(ba.value) {
            switch op.tag {
            case Tag.Exchange.atomic:
                guard op.value.count == 1 else { throw TLVError(.badLength, "8C (atomic) holds \(op.value.count) bytes, not 1") }
                atomic = op.value[0] != 0
            case Tag.Exchange.read:
                guard op.value.count == 4 else { throw TLVError(.badLength, "87 (mailbox read) holds \(op.value.count) bytes, not 4") }
                mailbox.append(.read(offset: be16(op.value, at: 0), length: be16(op.value, at: 2)))
            case Tag.Exchange.write:
                guard op.value.count >= 2 else { throw TLVError(.badLength, "8A (mailbox write) holds \(op.value.count) bytes, fewer than the 2-byte offset") }
                mailbox.append(.write(offset: be16(op.value, at: 0), data: Array(op.value[2...])))
            case Tag.Exchange.set:
                guard op.value.count == 5 else { throw TLVError(.badLength, "95 (mailbox set) holds \(op.value.count) bytes, not 5") }
                mailbox.append(.set(offset: be16(op.value, at: 0), length: be16(op.value, at: 2), value: op.value[4]))
            default:
                continue
            }
        }
    }
}

/// EXCHANGE response plaintext: for each mailbox read `length(2) ‖ data`, then `00 02 SS SS`
/// (the status of the whole command). A failed command answers the status alone.
public struct ExchangeResponsePlaintext: Equatable, Sendable {
    public var reads: [[UInt8]]
    public var status: StatusWord

    /// No reads, success: `00 02 00 00`. A successful EXCHANGE ends in status `0000`, as the public
    /// reference device answers (a mailbox read of 8 bytes: `0008 ‖ 8 bytes ‖ 00020000`) and as the
    /// Aliro Certification Tool's reader requires (docs/protocol.md §8).
    public static let success: [UInt8] = [0x00, 0x02, 0x00, 0x00]
    /// The success status on the wire.
    public static let successStatus: UInt16 = 0x0000

    public init(reads: [[UInt8]] = [], status: StatusWord = .success) {
        self.reads = reads
        self.status = status
    }

    /// Strict in what it sends: success is `0000`, a failure its ISO 7816 status word.
    public func encoded() -> [UInt8] {
        let s = status == .success ? Self.successStatus : status.rawValue
        return reads.flatMap { UInt16($0.count).bigEndianBytes + $0 } + [0x00, 0x02] + s.bigEndianBytes
    }

    /// `0000` (Aliro) and `9000` (LockBench's phones before 2026-11-26) both read as success.
    static func status(_ hi: UInt8, _ lo: UInt8) -> StatusWord {
        (hi == 0x00 && lo == 0x00) ? .success : StatusWord(hi, lo)
    }

    /// Parses an answer to a command that carried `reads` mailbox reads.
    public init(parsing data: [UInt8], reads expected: Int) throws(TLVError) {
        if data.count == 4, data[0] == 0, data[1] == 2, expected > 0, Self.status(data[2], data[3]) != .success {
            // A failed command: the status alone.
            reads = []
            status = StatusWord(data[2], data[3])
            return
        }
        var i = 0
        var out: [[UInt8]] = []
        for n in 0..<expected {
            guard data.count - i >= 2 else { throw TLVError(.truncatedValue, "EXCHANGE answer ends before read \(n + 1)'s length") }
            let len = Int(be16(data, at: i))
            guard data.count - i - 2 >= len else {
                throw TLVError(.truncatedValue, "EXCHANGE answer: read \(n + 1) announces \(len) bytes, \(data.count - i - 2) left")
            }
            out.append(Array(data[(i + 2)..<(i + 2 + len)]))
            i += 2 + len
        }
        guard data.count - i == 4, data[i] == 0x00, data[i + 1] == 0x02 else {
            throw TLVError(.badLength, "EXCHANGE answer must end in 00 02 SS SS after \(expected) read(s); \(data.count - i) byte(s) left at offset \(i)")
        }
        reads = out
        status = Self.status(data[i + 2], data[i + 3])
    }
}

// MARK: - CONTROL FLOW

/// CONTROL FLOW data: `41 01 S1, 42 01 S2 [, 43 { B5 … }]`. LockBench sends S1 = 00 (the
/// transaction finished with failure) and S2 = 27 when no protocol version is in common, 00 (no
/// information) otherwise — as the public test plan expects (`nfc_rdr_neg_sel_rsp_no_common_expedited_protocol_version`,
/// `nfc_rdr_neg_auth0_wrong_value`).
public struct ControlFlow: Equatable, Sendable {
    public var s1: UInt8
    public var s2: UInt8
    public var info: [UInt8]?

    /// S1: the transaction finished with failure.
    public static let finishedWithFailure: UInt8 = 0x00
    /// S2: no information.
    public static let noInformation: UInt8 = 0x00
    /// S2: protocol version not supported.
    public static let protocolVersionNotSupported: UInt8 = 0x27

    public init(s1: UInt8 = 0x00, s2: UInt8, info: [UInt8]? = nil) {
        self.s1 = s1
        self.s2 = s2
        self.info = info
    }

    public func encoded() -> [UInt8] {
        var t = [TLV(Tag.ControlFlow.s1, [s1]), TLV(Tag.ControlFlow.s2, [s2])]
        if let info { t.append(TLV(Tag.ControlFlow.info, info)) }
        return t.encoded()
    }

    /// No Le: a strict device answers 6701 to CONTROL FLOW with Le.
    public var apdu: CommandAPDU { CommandAPDU(cla: 0x80, ins: Instruction.controlFlow, data: encoded(), le: nil) }

    public init(parsing data: [UInt8]) throws(TLVError) {
        let t = try TLV.parseFields(data)
        s1 = try t.require(Tag.ControlFlow.s1, length: 1)[0]
        s2 = try t.require(Tag.ControlFlow.s2, length: 1)[0]
        info = t.first(Tag.ControlFlow.info)?.value
    }
}

// MARK: - Command builders

public enum Commands {
    /// `00 A4 04 00 Lc AID 00`.
    public static func select(_ aid: [UInt8]) -> CommandAPDU {
        CommandAPDU(cla: 0x00, ins: Instruction.select, p1: 0x04, p2: 0x00, data: aid, le: 256)
    }
    /// `80 C9 00 00 Lc ciphertext‖tag 00`.
    public static func exchange(_ sealed: [UInt8]) -> CommandAPDU {
        CommandAPDU(cla: 0x80, ins: Instruction.exchange, data: sealed, le: 256)
    }
    /// `00 C3 00 00 Lc 53 L … 00` (chained when longer than 255).
    public static func envelope(_ data: [UInt8]) -> CommandAPDU {
        CommandAPDU(cla: 0x00, ins: Instruction.envelope, data: TLV(Tag.Envelope.data, data).encoded(), le: 256)
    }
}
