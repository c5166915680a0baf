import ByteCore

/// BLE's own secure messaging for the channel's non-APDU messages (notifications, events):
/// AES-256-GCM under BleSKReader / BleSKDevice = HKDF(BleSK, salt = the lock's transport
/// versions ‖ the selected one, info "BleSKReader" / "BleSKDevice") with the expedited channel's
/// nonces (direction prefix ‖ counter from 1), and `type ‖ id ‖ plaintext length (2, big-endian)`
/// as AAD (aliro-actuator `transport_protocol/ble_encryption.py` @
/// ff213bccf346999288611201c1e4b15c60deffbd, `ble_message_format.py` @
/// 01b4381b158bfb74c892ebefcff48a6e5d9a5636). APDU frames are never sealed here.
public struct BLESecureMessaging: Equatable, Sendable {
    /// What LockBench's lock lists and what a phone picks when the transport said nothing.
    public static let defaultTransportVersions: (supported: [UInt16], selected: UInt16) = ([0x0100], 0x0100)

    private var channel: SecureChannel

    public init(role: SecureChannel.Role, bleSK: [UInt8], transportVersions: (supported: [UInt16], selected: UInt16)?) {
        let v = transportVersions ?? Self.defaultTransportVersions
        let keys = KeySchedule.bleKeys(bleSK: bleSK, supportedVersions: v.supported, selected: v.selected)
        channel = SecureChannel(role: role, readerKey: keys.reader, deviceKey: keys.device)
    }

    static func aad(_ type: UInt8, _ id: UInt8, plaintextCount: Int) -> [UInt8] {
        [type, id, UInt8(truncatingIfNeeded: plaintextCount >> 8), UInt8(truncatingIfNeeded: plaintextCount)]
    }

    /// `message` with its payload sealed (ciphertext ‖ tag).
    public mutating func seal(_ message: ChannelMessage) throws(ProtocolError) -> ChannelMessage {
        let sealed = try channel.seal(message.payload, aad: Self.aad(message.type, message.id, plaintextCount: message.payload.count))
        return ChannelMessage(type: message.type, id: message.id, payload: sealed)
    }

    /// The plaintext of a sealed message from the peer, at its next counter.
    public mutating func open(_ message: ChannelMessage) throws(ProtocolError) -> [UInt8] {
        guard message.payload.count >= 16 else {
            throw ProtocolError(.decryptFailed, "BLE message \(message) is shorter than a 16-byte GCM tag: not sealed under BleSK")
        }
        return try channel.open(message.payload, aad: Self.aad(message.type, message.id, plaintextCount: message.payload.count - 16))
    }
}
