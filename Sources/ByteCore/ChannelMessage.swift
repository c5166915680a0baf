import Foundation

/// A message on a radio that carries more than APDUs (BLE's access-protocol channel): the frame's
/// type and id and its payload as sent (sealed under BleSK where the protocol says so). The radio
/// frames it; the access protocol says what it means (`InitiateAccessProtocol`,
/// `AccessProtocolCompleted`, `BLEEvent`).
public struct ChannelMessage: Equatable, Sendable, CustomStringConvertible {
    public var type: UInt8
    public var id: UInt8
    public var payload: [UInt8]

    public init(type: UInt8, id: UInt8, payload: [UInt8]) {
        self.type = type
        self.id = id
        self.payload = payload
    }

    /// Message types (aliro-actuator `ble_message_format.py` `ProtocolType`).
    public enum Kind {
        public static let apdu: UInt8 = 0x00
        public static let notification: UInt8 = 0x02
        /// Supplementary services (time sync).
        public static let timeSync: UInt8 = 0x03
    }

    /// Notification ids (`Notification_ID`).
    public enum Notification {
        public static let event: UInt8 = 0x00
        public static let readerStatusChanged: UInt8 = 0x02
        public static let accessProtocolCompleted: UInt8 = 0x03
        /// The phone's remote keyless entry request, after the completed notification (`RKE_REQUEST`).
        public static let rkeRequest: UInt8 = 0x04
        public static let initiateAccessProtocol: UInt8 = 0x05
        /// The initiate of a transaction whose purpose is a remote keyless entry action
        /// (`INITIATE_ACCESS_PROTOCOL_RKE`): same payload as `initiateAccessProtocol`.
        public static let initiateAccessProtocolRKE: UInt8 = 0x06
    }

    /// `type ‖ id ‖ length (2, big-endian) ‖ payload`: one frame per L2CAP SDU.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = [type, id]
        out.appendUInt16BE(UInt16(truncatingIfNeeded: payload.count))
        return out + payload
    }

    /// The frame in hex, e.g. `02050000c…`.
    public var description: String { Hex.encode(encoded()) }
}

/// The reader side of a radio whose channel carries messages besides APDUs (BLE): the credential
/// opens the transaction with a message and the reader closes it with one. The access protocol's
/// driver uses it when the link has it (`LockReader.drive`); NFC and the socket transport do not.
public protocol MessageBearer: APDUTransceiver {
    /// The next message from the credential that is not an APDU response, within `timeout`
    /// seconds; throws when none came or the channel closed.
    func receiveMessage(timeout: TimeInterval) throws -> ChannelMessage
    /// Sends a message (no answer expected).
    func sendMessage(_ message: ChannelMessage) throws
    /// How long the reader waits for the credential's first message.
    var openingTimeout: TimeInterval { get }
    /// The transport's own version negotiation, bound into the BLE keys: the versions the lock
    /// lists and the one the credential chose (2 bytes each); nil when none took place.
    var transportVersions: (supported: [UInt16], selected: UInt16)? { get }
    /// Whether `error` (thrown by `transceive`) means the credential did not answer in time
    /// while the channel is still up: the reader then tells it so with a message.
    func isResponseTimeout(_ error: Error) -> Bool
}

/// The credential side of such a radio: what the credential sends first once the channel is
/// open, and the reader's messages besides commands.
public protocol MessageResponder: APDUResponder {
    /// The first message on a new channel (BLE: "initiate access protocol"); nil to send none.
    /// `transportVersions` as for `MessageBearer`. Starts a new transaction.
    func openingMessage(transportVersions: (supported: [UInt16], selected: UInt16)?) -> ChannelMessage?
    /// A message from the reader (notification, event); returns true when it ends the transaction.
    func received(_ message: ChannelMessage) -> Bool
    /// What the last completed notification said of the bolt: true unsecured (the door opened),
    /// false secured or jammed, nil when none came or it did not open.
    var readerReportedUnsecured: Bool? { get }
    /// Whether the credential has a message to send after the completed notification (BLE: the
    /// RKE request of a transaction opened with `02 06`).
    var hasFollowUp: Bool { get }
    /// That message, once (nil when there is none, or not yet).
    func followUp() -> ChannelMessage?
}

extension MessageResponder {
    public var hasFollowUp: Bool { false }
    public func followUp() -> ChannelMessage? { nil }
}
