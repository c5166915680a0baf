import ByteCore
import Codecs
import Crypto

/// Everything both sides bind into the key derivation: SELECT's FCI, AUTH0's fields, and the
/// device's ephemeral key. Built identically by the reader and the credential.
///
///     salt = X(readerGroupKey) ‖ label(12) ‖ readerID(32) ‖ interface(1) ‖ 5C 02 version
///            ‖ X(readerEph) ‖ transactionID(16) ‖ flags(1) ‖ policy(1) ‖ A5 len FCI-proprietary
///            [‖ X(credentialKey)   for "Persistent**" and "VolatileFast"]
///     info = X(deviceEph)          (LockBench sends no vendor extensions)
public struct TranscriptContext: Equatable, Sendable {
    /// The reader's group public key (LockBench: the reader's own signing key), 65 bytes.
    public var readerGroupKey: [UInt8]
    /// Group id (16) ‖ sub id (16).
    public var readerID: [UInt8]
    /// `5E` on NFC and the socket transport, `C3` on BLE.
    public var interfaceByte: UInt8
    public var version: UInt16
    public var readerEphemeralKey: [UInt8]
    public var transactionID: [UInt8]
    public var flags: UInt8
    public var policy: UInt8
    /// The whole `A5` TLV (tag, length, value) exactly as SELECT returned it.
    public var fciProprietary: [UInt8]
    public var deviceEphemeralKey: [UInt8]

    public init(readerGroupKey: [UInt8], readerID: [UInt8], interfaceByte: UInt8, version: UInt16,
                readerEphemeralKey: [UInt8], transactionID: [UInt8], flags: UInt8, policy: UInt8,
                fciProprietary: [UInt8], deviceEphemeralKey: [UInt8]) {
        self.readerGroupKey = readerGroupKey
        self.readerID = readerID
        self.interfaceByte = interfaceByte
        self.version = version
        self.readerEphemeralKey = readerEphemeralKey
        self.transactionID = transactionID
        self.flags = flags
        self.policy = policy
        self.fciProprietary = fciProprietary
        self.deviceEphemeralKey = deviceEphemeralKey
    }

    public enum Label: String, Sendable {
        case volatile = "Volatile****"
        case persistent = "Persistent**"
        case volatileFast = "VolatileFast"
    }

    public func salt(_ label: Label, credentialKey: [UInt8]? = nil) -> [UInt8] {
        var s = Primitives.xCoordinate(readerGroupKey)
        s += Array(label.rawValue.utf8)
        s += readerID
        s.append(interfaceByte)
        s += [0x5C, 0x02] + version.bigEndianBytes
        s += Primitives.xCoordinate(readerEphemeralKey)
        s += transactionID
        s.append(flags)
        s.append(policy)
        s += fciProprietary
        if let credentialKey { s += Primitives.xCoordinate(credentialKey) }
        return s
    }

    public var info: [UInt8] { Primitives.xCoordinate(deviceEphemeralKey) }

    /// The signed transcript: `4D 20 readerID ‖ 86 20 X(deviceEph) ‖ 87 20 X(readerEph) ‖
    /// 4C 10 tid ‖ 93 04 domain` — domain `415D9569` for the reader, `4E887B4C` for the device.
    public func signedData(reader: Bool) -> [UInt8] {
        [0x4D, 0x20] + readerID
            + [0x86, 0x20] + Primitives.xCoordinate(deviceEphemeralKey)
            + [0x87, 0x20] + Primitives.xCoordinate(readerEphemeralKey)
            + [0x4C, 0x10] + transactionID
            + [0x93, 0x04] + (reader ? KeySchedule.readerDomain : KeySchedule.deviceDomain)
    }
}

/// Keys of one standard transaction.
public struct VolatileKeys: Equatable, Sendable {
    public var expeditedSKReader: [UInt8]
    public var expeditedSKDevice: [UInt8]
    public var stepUpSK: [UInt8]
    public var bleSK: [UInt8]
    public var ursk: [UInt8]
}

/// Keys of one FAST transaction.
public struct FastKeys: Equatable, Sendable {
    public var cryptogramSK: [UInt8]
    public var expeditedSKReader: [UInt8]
    public var expeditedSKDevice: [UInt8]
    public var bleSK: [UInt8]
    public var ursk: [UInt8]
}

/// The key schedule of ALIRO-FACTS "Keys".
public enum KeySchedule {
    public static let readerDomain: [UInt8] = [0x41, 0x5D, 0x95, 0x69]
    public static let deviceDomain: [UInt8] = [0x4E, 0x88, 0x7B, 0x4C]

    /// HKDF-SHA256 (`Primitives.hkdf`, the Wycheproof-tested one) for the schedule's fixed output
    /// lengths (32 and 160 bytes, far below HKDF's 8160-byte limit, so it cannot fail).
    static func derive(_ ikm: [UInt8], salt: [UInt8], info: [UInt8], count: Int) -> [UInt8] {
        do { return try Primitives.hkdf(ikm: ikm, salt: salt, info: info, length: count) } catch {
            preconditionFailure("HKDF-SHA256 output of \(count) bytes: \(error)")
        }
    }

    /// Key slot = SHA-1(65-byte public key)[0:8]: how a FAST credential names its key.
    public static func keySlot(_ publicKey: [UInt8]) -> [UInt8] {
        Array(Primitives.sha1(publicKey).prefix(8))
    }

    /// K = X9.63-KDF-SHA256(Z, sharedInfo = transaction id, 32).
    public static func sharedK(z: [UInt8], transactionID: [UInt8]) -> [UInt8] {
        Primitives.x963KDF(sharedSecret: z, sharedInfo: transactionID, length: 32)
    }

    /// Standard keys: HKDF(K, salt "Volatile****", info, 160).
    public static func volatileKeys(k: [UInt8], context: TranscriptContext) -> VolatileKeys {
        let okm = derive(k, salt: context.salt(.volatile), info: context.info, count: 160)
        return VolatileKeys(expeditedSKReader: Array(okm[0..<32]), expeditedSKDevice: Array(okm[32..<64]),
                            stepUpSK: Array(okm[64..<96]), bleSK: Array(okm[96..<128]), ursk: Array(okm[128..<160]))
    }

    /// Kpersistent = HKDF(K, salt "Persistent**" ‖ X(credential key), info, 32), cached for FAST.
    public static func persistentKey(k: [UInt8], context: TranscriptContext, credentialKey: [UInt8]) -> [UInt8] {
        derive(k, salt: context.salt(.persistent, credentialKey: credentialKey), info: context.info, count: 32)
    }

    /// FAST keys from a cached Kpersistent.
    public static func fastKeys(persistent: [UInt8], context: TranscriptContext, credentialKey: [UInt8]) -> FastKeys {
        let okm = derive(persistent, salt: context.salt(.volatileFast, credentialKey: credentialKey),
                                      info: context.info, count: 160)
        return FastKeys(cryptogramSK: Array(okm[0..<32]), expeditedSKReader: Array(okm[32..<64]),
                        expeditedSKDevice: Array(okm[64..<96]), bleSK: Array(okm[96..<128]), ursk: Array(okm[128..<160]))
    }

    /// Step-up keys: HKDF(StepUpSK, empty salt, "SKReader" / "SKDevice", 32).
    public static func stepUpKeys(stepUpSK: [UInt8]) -> (reader: [UInt8], device: [UInt8]) {
        (derive(stepUpSK, salt: [], info: Array("SKReader".utf8), count: 32),
         derive(stepUpSK, salt: [], info: Array("SKDevice".utf8), count: 32))
    }

    /// BLE keys (LockBench's reading; sources differ): HKDF(BleSK, salt = supported versions
    /// (2 bytes each) ‖ selected version, info "BleSKReader" / "BleSKDevice", 32).
    public static func bleKeys(bleSK: [UInt8], supportedVersions: [UInt16], selected: UInt16) -> (reader: [UInt8], device: [UInt8]) {
        var salt: [UInt8] = []
        for v in supportedVersions + [selected] { salt.appendUInt16BE(v) }
        return (derive(bleSK, salt: salt, info: Array("BleSKReader".utf8), count: 32),
                derive(bleSK, salt: salt, info: Array("BleSKDevice".utf8), count: 32))
    }

    /// FAST cryptogram = AES-GCM(CryptogramSK, IV 00×12, `5E 02 bitmap ‖ 91 14 ts ‖ 92 14 ts`) —
    /// 48 bytes of plaintext, 64 bytes with the tag.
    public static func cryptogram(_ keys: FastKeys, plaintext: [UInt8]) -> [UInt8] {
        do { return try Primitives.seal(key: keys.cryptogramSK, nonce: [UInt8](repeating: 0, count: 12), plaintext: plaintext) } catch {
            preconditionFailure("AES-GCM seal with a 32-byte key and a 12-byte IV cannot fail: \(error)")
        }
    }

    public static func openCryptogram(_ keys: FastKeys, _ cryptogram: [UInt8]) -> [UInt8]? {
        try? Primitives.open(key: keys.cryptogramSK, nonce: [UInt8](repeating: 0, count: 12), sealed: cryptogram)
    }
}
