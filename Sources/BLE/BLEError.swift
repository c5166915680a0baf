import ByteCore

/// The BLE layer's one error type: a stable code tests match on, a human reason, and the
/// source site that raised it (swift-asn1 `Errors.swift` shape).
public struct BLEError: CodedError, CustomStringConvertible, Equatable {
    public enum Code: String, Sendable {
        /// `--ble` value not understood.
        case badTransportSpec
        /// The kernel has no AF_BLUETOOTH (no Bluetooth module / container).
        case bluetoothUnsupported
        /// The adapter is still up in bluetoothd (EBUSY on bind).
        case adapterBusy
        /// Missing CAP_NET_ADMIN (EPERM/EACCES).
        case permissionDenied
        /// No such adapter / device / host.
        case noSuchDevice
        /// Connecting or opening the transport failed.
        case transportUnavailable
        /// The transport reached end of stream or was closed.
        case transportClosed
        /// Bytes that do not frame as H4 / HCI / L2CAP / ATT.
        case malformedPacket
        /// An HCI command got no Command Complete / Status in time.
        case commandTimeout
        /// An HCI command completed with a non-zero status.
        case commandFailed
        /// The link or the peer refused or dropped a connection.
        case connectionFailed
        /// The peer refused the LE credit-based channel.
        case channelRefused
        /// The channel or link closed while waiting.
        case channelClosed
        /// A wait ran out of time.
        case timeout
        /// A GATT request got an ATT error response.
        case gattError
        /// A service, characteristic or peer was not found.
        case notFound
        /// A virtual controller (Bumble, RootCanal) is not installed or did not start.
        case controllerUnavailable
        /// A device address given by the user is not a valid static random address.
        case badAddress
    }

    public let code: Code
    public let reason: String
    public let file: String
    public let line: Int

    public init(_ code: Code, _ reason: String, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    public var description: String { reason }

    public static func == (a: BLEError, b: BLEError) -> Bool { a.code == b.code && a.reason == b.reason }
}
