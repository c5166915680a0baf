import ByteCore
import Codecs

/// AES-256-GCM secure channel: 16-byte tag appended, no AAD (BLE messages bind their header as
/// AAD: `BLESecureMessaging`). IV = 8-byte direction prefix
/// (reader→device `00×8`, device→reader `00×7 01`) ‖ 4-byte big-endian counter starting at 1.
/// Each direction keeps its own counter; a counter is never used twice (sealing past 2³²−1
/// fails, opening a counter at or below the last accepted one is `counterReuse`).
public struct SecureChannel: Equatable, Sendable {
    public enum Role: Sendable { case reader, device }

    public static let readerPrefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0]
    public static let devicePrefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 1]

    public let role: Role
    let readerKey: [UInt8]
    let deviceKey: [UInt8]
    /// The counter the next sealed message uses.
    public private(set) var sendCounter: UInt32 = 1
    /// The last counter accepted from the peer (0 = none yet).
    public private(set) var lastReceivedCounter: UInt32 = 0

    public init(role: Role, readerKey: [UInt8], deviceKey: [UInt8], firstSendCounter: UInt32 = 1,
                lastReceivedCounter: UInt32 = 0) {
        self.role = role
        self.readerKey = readerKey
        self.deviceKey = deviceKey
        self.sendCounter = firstSendCounter
        self.lastReceivedCounter = lastReceivedCounter
    }

    public static func iv(prefix: [UInt8], counter: UInt32) -> [UInt8] {
        prefix + counter.bigEndianBytes
    }

    public mutating func seal(_ plaintext: [UInt8], aad: [UInt8] = []) throws(ProtocolError) -> [UInt8] {
        guard sendCounter != 0 else { throw ProtocolError(.counterExhausted, "send counter exhausted") }
        let (key, prefix) = role == .reader ? (readerKey, SecureChannel.readerPrefix) : (deviceKey, SecureChannel.devicePrefix)
        let out: [UInt8]
        do { out = try Primitives.seal(key: key, nonce: SecureChannel.iv(prefix: prefix, counter: sendCounter), plaintext: plaintext, aad: aad) } catch {
            preconditionFailure("AES-GCM seal with a 32-byte key and a 12-byte IV cannot fail: \(error)")
        }
        sendCounter &+= 1
        return out
    }

    /// Opens the peer's next message (counter = last accepted + 1).
    public mutating func open(_ sealed: [UInt8], aad: [UInt8] = []) throws(ProtocolError) -> [UInt8] {
        guard lastReceivedCounter != UInt32.max else { throw ProtocolError(.counterExhausted, "receive counter exhausted") }
        return try open(sealed, counter: lastReceivedCounter + 1, aad: aad)
    }

    /// Opens a peer message claimed to use `counter`; a counter at or below the last accepted one
    /// is refused before any decryption.
    public mutating func open(_ sealed: [UInt8], counter: UInt32, aad: [UInt8] = []) throws(ProtocolError) -> [UInt8] {
        guard counter > lastReceivedCounter else {
            throw ProtocolError(.counterReuse, "counter \(counter) already used (last accepted \(lastReceivedCounter))")
        }
        let (key, prefix) = role == .reader ? (deviceKey, SecureChannel.devicePrefix) : (readerKey, SecureChannel.readerPrefix)
        guard let plain = try? Primitives.open(key: key, nonce: SecureChannel.iv(prefix: prefix, counter: counter), sealed: sealed, aad: aad) else {
            throw ProtocolError(.decryptFailed, "AES-GCM tag did not verify (counter \(counter))")
        }
        lastReceivedCounter = counter
        return plain
    }
}
