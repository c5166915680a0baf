import ByteCore

/// The Event notification (`02 00`): attribute `00` Busy (no value) or `01` GENERAL_ERROR with a
/// one-byte reason. Over BLE a reader reports a failure with it instead of CONTROL FLOW
/// (aliro-actuator `reader.py` `failure_process` → `handle_error_event_ble_message(UNKNOWN_ERROR)`
/// = `02 00 00 03 01 01 00`), sealed under BleSK once the keys exist.
public enum BLEEvent: Equatable, Sendable {
    case busy
    case generalError(GeneralError)

    /// `GeneralError_Values`.
    public enum GeneralError: UInt8, Sendable, CaseIterable {
        case unknown = 0, resourceUnavailable = 1, wrongParameters = 2, urskUnavailable = 3
    }

    public static let busyAttribute: UInt8 = 0x00
    public static let generalErrorAttribute: UInt8 = 0x01

    public func encoded() -> [UInt8] {
        switch self {
        case .busy: return BLEAttribute(id: Self.busyAttribute, value: []).encoded()
        case .generalError(let e): return BLEAttribute(id: Self.generalErrorAttribute, value: [e.rawValue]).encoded()
        }
    }

    public init(parsing plaintext: [UInt8]) throws(ProtocolError) {
        let attributes = try BLEAttribute.parseAll(plaintext)
        if let e = attributes.first(where: { $0.id == Self.generalErrorAttribute }) {
            guard e.value.count == 1, let reason = GeneralError(rawValue: e.value[0]) else {
                throw ProtocolError(.malformed, "event: GENERAL_ERROR value \(Hex.encode(e.value)) is not one byte 00…03")
            }
            self = .generalError(reason)
        } else if attributes.contains(where: { $0.id == Self.busyAttribute }) {
            self = .busy
        } else {
            throw ProtocolError(.malformed, "event: \(Hex.encode(plaintext)) has neither attribute 00 (busy) nor 01 (general error)")
        }
    }
}
