import ByteCore
import Codecs

/// The phone's first message on the BLE channel, "initiate access protocol" (`02 05`): attribute
/// `00` holds the `A5` proprietary information a SELECT answer would carry over NFC, so the
/// reader sends AUTH0 first and binds these bytes into the keys (aliro-actuator
/// `user_device.py` `send_initiate_access_protocol_notification`; `reader.py`
/// `wait_for_initiate_access_protocol_notification`). The reference phone sends
/// `02 05 00 0C 00 0A A5 08 80 02 00 00 5C 02 01 00`.
public struct InitiateAccessProtocol: Equatable, Sendable {
    /// Attribute `00`, PROPRIETARY_INFO.
    public static let proprietaryInformation: UInt8 = 0x00

    /// The whole `A5` TLV, bound into the key derivation as SELECT's would be.
    public var proprietaryTLV: [UInt8]
    /// `80`: the application type (`0000` for Aliro).
    public var applicationType: [UInt8]
    /// `5C`: the versions the phone speaks.
    public var versions: [UInt16]

    /// What the reference phone builds (`create_proprietary_information`): type `0000` and the
    /// versions, no `7F66`.
    public init(versions: [UInt16]) {
        self.versions = versions
        self.applicationType = [0x00, 0x00]
        self.proprietaryTLV = SelectResponse(versions: versions).proprietaryTLV
    }

    /// The notification's payload (attributes); refuses one without attribute `00` holding an
    /// `A5 { 80, 5C }`.
    public init(parsing payload: [UInt8]) throws(ProtocolError) {
        let attributes = try BLEAttribute.parseAll(payload)
        guard let a = attributes.first(where: { $0.id == Self.proprietaryInformation }) else {
            throw ProtocolError(.malformed, "initiate access protocol: no attribute 00 (proprietary information) in \(Hex.encode(payload))")
        }
        do {
            let a5 = try TLV(parsing: a.value)
            guard a5.tag == Tag.FCI.proprietary else {
                throw ProtocolError(.malformed, "initiate access protocol: attribute 00 holds tag \(String(a5.tag, radix: 16)), not A5")
            }
            let fields = try TLV.parseFields(a5.value)
            applicationType = try fields.require(Tag.FCI.type, length: 2)
            let v = try fields.require(Tag.FCI.versions)
            guard !v.isEmpty, v.count % 2 == 0 else {
                throw ProtocolError(.malformed, "initiate access protocol: 5C holds \(v.count) bytes, not 2 per version")
            }
            versions = stride(from: 0, to: v.count, by: 2).map { UInt16(v[$0]) << 8 | UInt16(v[$0 + 1]) }
            proprietaryTLV = a.value
        } catch let e as ProtocolError {
            throw e
        } catch {
            throw ProtocolError(.malformed, "initiate access protocol: attribute 00 is not A5 { 80, 5C }: \(error)")
        }
    }

    public func encoded() -> [UInt8] { BLEAttribute(id: Self.proprietaryInformation, value: proprietaryTLV).encoded() }

    /// `02 05 len ‖ 00 len A5 …` (sent before any key exists: never sealed).
    public var message: ChannelMessage { message(remoteAction: false) }

    /// `02 05`, or `02 06` ("initiate access protocol RKE") for a transaction opened for a remote
    /// keyless entry request (`send_initiate_access_protocol_notification(rke=True)`; the same payload).
    public func message(remoteAction: Bool) -> ChannelMessage {
        ChannelMessage(type: ChannelMessage.Kind.notification,
                       id: remoteAction ? ChannelMessage.Notification.initiateAccessProtocolRKE : ChannelMessage.Notification.initiateAccessProtocol,
                       payload: encoded())
    }
}
