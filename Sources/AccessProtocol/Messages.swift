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
}

/// Reader status codes sent in EXCHANGE `97 02`.
public enum ReaderStatus {
    public static let keyNotFound: UInt16 = 0x0001
    public static let keyExpired: UInt16 = 0x0002
    public static let keyNotTrusted: UInt16 = 0x0003
    public static let badSignature: UInt16 = 0x0004
    public static let badData: UInt16 = 0x0006
    public static let accessRights: UInt16 = 0x0025
    public static let secured: UInt16 = 0x0100
    public static let unsecured: UInt16 = 0x0101
    public static let jammed: UInt16 = 0x0102
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
        let fci = try TLV.parse(data)
        guard fci.tag == Tag.FCI.template else { throw TLVError(.unexpectedTag, "SELECT response is not a 6F template") }
        let inner = try fci.children()
        aid = try inner.require(Tag.FCI.aid)
        guard let prop = inner.first(Tag.FCI.proprietary) else { throw TLVError(.missingTag, "A5 missing from FCI") }
        proprietaryTLV = prop.encoded()
        let fields = try prop.children()
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

    public init(parsing data: [UInt8]) throws(TLVError) {
        let t = try TLV.parseAll(data)
        let order: [UInt32] = [Tag.Auth0.flags, Tag.Auth0.policy, Tag.Auth0.version, Tag.Auth0.readerEphemeralKey,
                               Tag.Auth0.transactionID, Tag.Auth0.readerID]
        guard t.count >= order.count, zip(t, order).allSatisfy({ $0.tag == $1 }) else {
            throw TLVError(.unexpectedTag, "AUTH0 fields must be 41 42 5C 87 4C 4D in this order")
        }
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
        let t = try TLV.parseAll(data)
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
        let t = try TLV.parseAll(data)
        flags = try t.require(Tag.Auth1.flags, length: 1)[0]
        signature = try t.require(Tag.Auth1.signature, length: 64)
        certificate = t.first(Tag.Auth1.certificate)?.value
    }
}

/// AUTH1 response plaintext: `5A 41 key | 4E 08 slot, 9E 40 device signature, [4B mailbox],
/// 5E 02 signaling, 91 14 credential timestamp, 92 14 revocation timestamp`.
public struct Auth1ResponsePlaintext: Equatable, Sendable {
    public enum Identity: Equatable, Sendable {
        case publicKey([UInt8])
        case keySlot([UInt8])
    }
    public var identity: Identity
    public var signature: [UInt8]
    public var mailbox: [UInt8]?
    public var signaling: SignalingBitmap
    /// ASCII `YYYY-MM-DDTHH:MM:SSZ`, or 20 zero bytes.
    public var credentialTimestamp: [UInt8]
    public var revocationTimestamp: [UInt8]

    public static let zeroTimestamp = [UInt8](repeating: 0, count: 20)

    public init(identity: Identity, signature: [UInt8], mailbox: [UInt8]? = nil, signaling: SignalingBitmap,
                credentialTimestamp: [UInt8] = zeroTimestamp, revocationTimestamp: [UInt8] = zeroTimestamp) {
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
        t.append(TLV(Tag.Auth1.signaling, signaling.rawValue.bigEndianBytes))
        t.append(TLV(Tag.Auth1.credentialTimestamp, credentialTimestamp))
        t.append(TLV(Tag.Auth1.revocationTimestamp, revocationTimestamp))
        return t.encoded()
    }

    public init(parsing data: [UInt8]) throws(TLVError) {
        let t = try TLV.parseAll(data)
        if t.first(Tag.Auth1.credentialKey) != nil {
            identity = .publicKey(try t.require(Tag.Auth1.credentialKey, length: 65))
        } else if t.first(Tag.Auth1.keySlot) != nil {
            identity = .keySlot(try t.require(Tag.Auth1.keySlot, length: 8))
        } else {
            throw TLVError(.missingTag, "AUTH1 response has neither 5A nor 4E")
        }
        signature = try t.require(Tag.Auth1.signature, length: 64)
        mailbox = t.first(Tag.Auth1.mailbox)?.value
        let s = try t.require(Tag.Auth1.signaling, length: 2)
        signaling = SignalingBitmap(rawValue: UInt16(s[0]) << 8 | UInt16(s[1]))
        credentialTimestamp = try t.require(Tag.Auth1.credentialTimestamp, length: 20)
        revocationTimestamp = try t.require(Tag.Auth1.revocationTimestamp, length: 20)
    }

    /// `5E 02 bitmap ‖ 91 14 ts ‖ 92 14 ts`: the FAST cryptogram's plaintext.
    public static func cryptogramPlaintext(signaling: SignalingBitmap, credentialTimestamp: [UInt8],
                                           revocationTimestamp: [UInt8]) -> [UInt8] {
        [TLV(Tag.Auth1.signaling, signaling.rawValue.bigEndianBytes),
         TLV(Tag.Auth1.credentialTimestamp, credentialTimestamp),
         TLV(Tag.Auth1.revocationTimestamp, revocationTimestamp)].encoded()
    }
}

// MARK: - EXCHANGE

/// EXCHANGE plaintext as LockBench sends it: `97 02 reader status` (no mailbox operations, no
/// notify, no URSK request). Parsing accepts the other tags of ALIRO-FACTS and ignores them.
public struct ExchangeCommandPlaintext: Equatable, Sendable {
    public var readerStatus: UInt16?

    public init(readerStatus: UInt16?) { self.readerStatus = readerStatus }

    public func encoded() -> [UInt8] {
        guard let readerStatus else { return [] }
        return TLV(Tag.Exchange.readerStatus, readerStatus.bigEndianBytes).encoded()
    }

    public init(parsing data: [UInt8]) throws(TLVError) {
        let t = try TLV.parseAll(data)
        if t.first(Tag.Exchange.readerStatus) != nil {
            let s = try t.require(Tag.Exchange.readerStatus, length: 2)
            readerStatus = UInt16(s[0]) << 8 | UInt16(s[1])
        } else {
            readerStatus = nil
        }
    }
}

/// EXCHANGE response plaintext with no mailbox reads: `00 02 90 00` (2-byte length ‖ status).
public enum ExchangeResponsePlaintext {
    public static let success: [UInt8] = [0x00, 0x02, 0x90, 0x00]
}

// MARK: - CONTROL FLOW

/// CONTROL FLOW data: `41 01 S1, 42 01 S2 [, 43 { B5 … }]`. LockBench sends S1 = 00 (the
/// transaction failed) and S2 = 27 after an authentication/secure-channel failure, 00 otherwise.
public struct ControlFlow: Equatable, Sendable {
    public var s1: UInt8
    public var s2: UInt8
    public var info: [UInt8]?

    public static let authenticationFailure: UInt8 = 0x27

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
        let t = try TLV.parseAll(data)
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
