import ByteCore

/// One attribute of a BLE notification's payload: `id (1) ‖ length (1) ‖ value` (aliro-actuator
/// `ble_message_format.py` `BleAttribute.to_bytes`, @ 01b4381b158bfb74c892ebefcff48a6e5d9a5636).
public struct BLEAttribute: Equatable, Sendable {
    public var id: UInt8
    public var value: [UInt8]

    public init(id: UInt8, value: [UInt8]) {
        self.id = id
        self.value = value
    }

    public func encoded() -> [UInt8] { [id, UInt8(truncatingIfNeeded: value.count)] + value }

    /// Every attribute of a payload; refuses a length running past the end.
    public static func parseAll(_ payload: [UInt8]) throws(ProtocolError) -> [BLEAttribute] {
        var out: [BLEAttribute] = [], i = 0
        while i < payload.count {
            guard i + 2 <= payload.count, i + 2 + Int(payload[i + 1]) <= payload.count else {
                throw ProtocolError(.malformed, "BLE attribute at byte \(i): length \(i + 1 < payload.count ? Int(payload[i + 1]) : -1) runs past the \(payload.count)-byte payload")
            }
            let n = Int(payload[i + 1])
            out.append(BLEAttribute(id: payload[i], value: Array(payload[(i + 2)..<(i + 2 + n)])))
            i += 2 + n
        }
        return out
    }
}
