import ByteCore

/// ATT opcodes (Core Vol 3 Part F §3.4).
public enum ATTOpcode {
    public static let errorResponse: UInt8 = 0x01
    public static let exchangeMTURequest: UInt8 = 0x02
    public static let exchangeMTUResponse: UInt8 = 0x03
    public static let findInformationRequest: UInt8 = 0x04
    public static let findInformationResponse: UInt8 = 0x05
    public static let findByTypeValueRequest: UInt8 = 0x06
    public static let findByTypeValueResponse: UInt8 = 0x07
    public static let readByTypeRequest: UInt8 = 0x08
    public static let readByTypeResponse: UInt8 = 0x09
    public static let readRequest: UInt8 = 0x0A
    public static let readResponse: UInt8 = 0x0B
    public static let readBlobRequest: UInt8 = 0x0C
    public static let readBlobResponse: UInt8 = 0x0D
    public static let readByGroupTypeRequest: UInt8 = 0x10
    public static let readByGroupTypeResponse: UInt8 = 0x11
    public static let writeRequest: UInt8 = 0x12
    public static let writeResponse: UInt8 = 0x13
    public static let prepareWriteRequest: UInt8 = 0x16
    public static let prepareWriteResponse: UInt8 = 0x17
    public static let executeWriteRequest: UInt8 = 0x18
    public static let executeWriteResponse: UInt8 = 0x19
    public static let handleValueNotification: UInt8 = 0x1B
    public static let handleValueIndication: UInt8 = 0x1D
    public static let handleValueConfirmation: UInt8 = 0x1E
    public static let writeCommand: UInt8 = 0x52

    /// Bit 6: a command (no response expected); unknown commands are ignored.
    public static func isCommand(_ op: UInt8) -> Bool { op & 0x40 != 0 }
    /// Requests the server must answer (everything else is a response, notification or command).
    public static func isRequest(_ op: UInt8) -> Bool {
        !isCommand(op) && op != handleValueConfirmation && op != handleValueNotification && op != handleValueIndication && op & 1 == 0
    }
}

/// ATT error codes (Core Vol 3 Part F §3.4.1.1).
public enum ATTErrorCode {
    public static let invalidHandle: UInt8 = 0x01
    public static let readNotPermitted: UInt8 = 0x02
    public static let writeNotPermitted: UInt8 = 0x03
    public static let invalidPDU: UInt8 = 0x04
    public static let requestNotSupported: UInt8 = 0x06
    public static let invalidOffset: UInt8 = 0x07
    public static let prepareQueueFull: UInt8 = 0x09
    public static let attributeNotFound: UInt8 = 0x0A
    public static let attributeNotLong: UInt8 = 0x0B
    public static let invalidAttributeValueLength: UInt8 = 0x0D
    public static let unsupportedGroupType: UInt8 = 0x10
}

/// A Bluetooth UUID, 16-bit or 128-bit, kept as its little-endian wire bytes.
public struct BLEUUID: Hashable, Sendable, CustomStringConvertible {
    /// 2 or 16 little-endian bytes.
    public let bytes: [UInt8]

    static let base: [UInt8] = [0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00]

    public init(_ short: UInt16) { bytes = short.littleEndianBytes }

    /// From wire bytes (2 or 16); a 128-bit UUID on the Bluetooth base shrinks to 16 bits.
    public init?(wire: [UInt8]) {
        if wire.count == 2 { bytes = wire; return }
        guard wire.count == 16 else { return nil }
        if Array(wire[0..<12]) == BLEUUID.base && wire[14] == 0 && wire[15] == 0 { bytes = [wire[12], wire[13]] } else { bytes = wire }
    }

    /// From text: `FFF2`, `2800`, or `D3B5A130-9E23-4B3A-8BE4-6B1EE5F980A3`.
    public init?(_ text: String) {
        let hex = text.replacingOccurrences(of: "-", with: "")
        guard let b = Hex.decode(hex), b.count == 2 || b.count == 16 else { return nil }
        self.init(wire: b.reversed())
    }

    public var is16Bit: Bool { bytes.count == 2 }
    public var short: UInt16? { is16Bit ? UInt16(bytes[0]) | UInt16(bytes[1]) << 8 : nil }
    /// The 128-bit little-endian form.
    public var long: [UInt8] { is16Bit ? BLEUUID.base + bytes + [0, 0] : bytes }

    public var description: String {
        if let s = short { return Hex.encode(s.bigEndianBytes).uppercased() }
        let h = Hex.encode(bytes.reversed()).uppercased()
        let c = Array(h)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-" + String(c[20..<32])
    }
}

/// GATT attribute types and assigned numbers (Core Vol 3 Part G §3; Assigned Numbers).
public enum GATTUUID {
    public static let primaryService = BLEUUID(0x2800)
    public static let secondaryService = BLEUUID(0x2801)
    public static let include = BLEUUID(0x2802)
    public static let characteristic = BLEUUID(0x2803)
    public static let clientCharacteristicConfiguration = BLEUUID(0x2902)
    public static let genericAccess = BLEUUID(0x1800)
    public static let genericAttribute = BLEUUID(0x1801)
    public static let deviceName = BLEUUID(0x2A00)
    public static let appearance = BLEUUID(0x2A01)
    public static let serviceChanged = BLEUUID(0x2A05)
}

/// ATT PDU builders shared by the server and the client.
enum ATTPDU {
    static func error(request: UInt8, handle: UInt16, code: UInt8) -> [UInt8] {
        var out: [UInt8] = [ATTOpcode.errorResponse, request]
        out.appendUInt16LE(handle)
        out.append(code)
        return out
    }

    static func withHandle(_ op: UInt8, _ handle: UInt16, _ rest: [UInt8] = []) -> [UInt8] {
        var out: [UInt8] = [op]
        out.appendUInt16LE(handle)
        return out + rest
    }
}
