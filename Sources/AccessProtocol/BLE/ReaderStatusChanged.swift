import ByteCore
import OfflineUnlock

/// "Reader status changed" (`02 02`): the lock tells the phone what its bolt did, here after an
/// RKE request, sealed under BleSKReader (aliro-actuator `reader.py` `reader_status_status_changed(
/// operation_source_information, reader_status_information)`, id 59086422691). The byte layout of
/// `create_reader_status_changed` is in no stored version: LockBench follows Nordic's Aliro reader
/// (`AliroUWBbuildState`: attribute `00` STATE, two bytes `<operation source> <reader status>`),
/// i.e. `00 02 <source> <status>`, the shape of the completed notification.
public struct ReaderStatusChanged: Equatable, Sendable {
    public static let stateAttribute: UInt8 = 0x00
    /// `OperationSourceInformation_Values.UNSPECIFIED`, what the tool's reader sends
    /// (BLERKE_UD_STEPUP_PHASE); its byte value is not stored: `00`.
    public static let unspecifiedSource: UInt8 = 0x00

    public var operationSource: UInt8
    public var readerStatus: AccessProtocolCompleted.ReaderStatusInformation

    public init(operationSource: UInt8 = ReaderStatusChanged.unspecifiedSource, readerStatus: AccessProtocolCompleted.ReaderStatusInformation) {
        self.operationSource = operationSource
        self.readerStatus = readerStatus
    }

    /// `00 02 <source> <status>`.
    public func encoded() -> [UInt8] { BLEAttribute(id: Self.stateAttribute, value: [operationSource, readerStatus.rawValue]).encoded() }

    /// Attribute `00` of two bytes, the status inside the enum; refuses anything else naming the byte.
    public init(parsing plaintext: [UInt8]) throws(ProtocolError) {
        let attributes = try BLEAttribute.parseAll(plaintext)
        guard attributes.count == 1, let a = attributes.first, a.id == Self.stateAttribute, a.value.count == 2 else {
            throw ProtocolError(.malformed, "reader status changed: \(Hex.encode(plaintext)) is not one attribute 00 of 2 bytes (00 02 <source> <status>)")
        }
        guard let s = AccessProtocolCompleted.ReaderStatusInformation(rawValue: a.value[1]) else {
            throw ProtocolError(.malformed, "reader status changed: byte 3, the reader status \(Hex.encode([a.value[1]])), is not 00, 01, 02, 80, 81 or 82")
        }
        operationSource = a.value[0]
        readerStatus = s
    }

    public var message: ChannelMessage {
        ChannelMessage(type: ChannelMessage.Kind.notification, id: ChannelMessage.Notification.readerStatusChanged, payload: encoded())
    }
}

extension AccessProtocolCompleted.ReaderStatusInformation {
    /// What "reader status changed" reports after an RKE `action`, given the bolt's reader status
    /// (`0100` secured, `0101` unsecured, `0102` jammed) once the lock acted: UNSECURED when an
    /// unsecure left it unsecured (BLERKE_RDR_UNSECURE accepts only that), STARTED_SECURE when a
    /// secure left it secured (BLERKE_RDR_SECURE accepts JAMMED, STARTED_SECURE or UNKNOWN, not
    /// SECURED: the lock reports the throw it started), JAMMED when jammed, else the state as is.
    public init(after action: RemoteAction, bolt readerStatus: UInt16) {
        switch (action, readerStatus) {
        case (_, ReaderStatus.jammed): self = .jammed
        case (.secure, ReaderStatus.secured): self = .startedSecure
        case (.unsecure, ReaderStatus.unsecured): self = .unsecured
        case (_, ReaderStatus.unsecured): self = .unsecured
        case (_, ReaderStatus.secured): self = .secured
        default: self = .unknown
        }
    }
}
