import ByteCore
import OfflineUnlock

/// The phone's remote keyless entry request (`02 04`), sent after the lock's completed
/// notification of a transaction the phone opened with `02 06`, sealed under BleSKDevice
/// (aliro-actuator `user_device.py` `send_rke_request`: `BleMessage.create_rke_request(
/// action.to_bytes(1, "big"), self.session.get_ble_encryption())`, id 59081559734). The builder's
/// own text is not in any stored version: LockBench sends the action as attribute `00` of one
/// byte, `00 01 <action>`, as every other notification builder wraps its value
/// (`BleAttribute.to_bytes`), and reads either that or the bare action byte.
public struct RKERequest: Equatable, Sendable {
    /// Attribute `00`: the action.
    public static let actionAttribute: UInt8 = 0x00

    public var action: RemoteAction

    public init(action: RemoteAction) { self.action = action }

    /// `00 01 <action>`.
    public func encoded() -> [UInt8] { BLEAttribute(id: Self.actionAttribute, value: [action.rawValue]).encoded() }

    /// The opened payload: the bare action byte, or attribute `00` of one byte holding it. Refuses
    /// anything else naming the byte and the rule.
    public init(parsing plaintext: [UInt8]) throws(ProtocolError) {
        let value: UInt8
        if plaintext.count == 1 {
            value = plaintext[0]
        } else {
            let attributes = try BLEAttribute.parseAll(plaintext)
            guard attributes.count == 1, let a = attributes.first else {
                throw ProtocolError(.malformed, "RKE request: \(Hex.encode(plaintext)) is not one attribute 00 of one byte (00 01 <action>)")
            }
            guard a.id == Self.actionAttribute else {
                throw ProtocolError(.malformed, "RKE request: byte 0 is attribute \(Hex.encode([a.id])), not 00 (the action)")
            }
            guard a.value.count == 1 else {
                throw ProtocolError(.malformed, "RKE request: byte 1, the action's length, is \(a.value.count), not 1")
            }
            value = a.value[0]
        }
        guard let action = RemoteAction(rawValue: value) else {
            throw ProtocolError(.malformed, "RKE request: action byte \(Hex.encode([value])) is not 00 (secure) or 01 (unsecure)")
        }
        self.action = action
    }

    /// The frame before sealing: `02 04 00 03 00 01 <action>`.
    public var message: ChannelMessage {
        ChannelMessage(type: ChannelMessage.Kind.notification, id: ChannelMessage.Notification.rkeRequest, payload: encoded())
    }
}
