import ByteCore

/// The ATT server of one connection, table-driven (STYLE 8; Zephyr `att.c` `handlers[]`):
/// opcode → minimum length and handler; the dispatcher answers unknown requests with "request
/// not supported", short PDUs with "invalid PDU", and ignores unknown commands. Pure: PDU in,
/// PDU out; the host sends what it returns.
public struct ATTServer {
    public let database: GATTDatabase
    /// The negotiated ATT_MTU (23 until an Exchange MTU).
    public private(set) var mtu: Int = 23
    /// What we accept in Exchange MTU.
    public let maxMTU: Int
    /// Client Characteristic Configuration per CCCD handle, for this connection.
    public private(set) var cccd: [UInt16: UInt16] = [:]
    /// The last value this connection's client wrote to each handle (the database holds the last
    /// write of any client): a lock judges each phone by what that phone wrote.
    public private(set) var written: [UInt16: [UInt8]] = [:]
    private var prepared: [(handle: UInt16, offset: Int, value: [UInt8])] = []
    static let prepareQueueLimit = 64
    static let maxAttributeLength = 512

    public init(database: GATTDatabase, maxMTU: Int = 247) {
        self.database = database
        self.maxMTU = maxMTU
    }

    private typealias Handler = @Sendable (inout ATTServer, [UInt8]) -> [UInt8]?

    /// opcode → (minimum PDU length including the opcode, handler).
    private static let handlers: [UInt8: (minLength: Int, handler: Handler)] = [
        ATTOpcode.exchangeMTURequest: (3, { $0.exchangeMTU($1) }),
        ATTOpcode.findInformationRequest: (5, { $0.findInformation($1) }),
        ATTOpcode.findByTypeValueRequest: (7, { $0.findByTypeValue($1) }),
        ATTOpcode.readByTypeRequest: (7, { $0.readByType($1) }),
        ATTOpcode.readRequest: (3, { $0.read($1) }),
        ATTOpcode.readBlobRequest: (5, { $0.readBlob($1) }),
        ATTOpcode.readByGroupTypeRequest: (7, { $0.readByGroupType($1) }),
        ATTOpcode.writeRequest: (3, { $0.write($1, respond: true) }),
        ATTOpcode.writeCommand: (3, { $0.write($1, respond: false) }),
        ATTOpcode.prepareWriteRequest: (5, { $0.prepareWrite($1) }),
        ATTOpcode.executeWriteRequest: (2, { $0.executeWrite($1) }),
        ATTOpcode.handleValueConfirmation: (1, { _, _ in nil }),
    ]

    /// Handles one PDU from the client; returns the PDU to send back, if any.
    public mutating func handle(_ pdu: [UInt8]) -> [UInt8]? {
        guard let op = pdu.first else { return nil }
        guard let entry = ATTServer.handlers[op] else {
            return ATTOpcode.isRequest(op) ? ATTPDU.error(request: op, handle: 0, code: ATTErrorCode.requestNotSupported) : nil
        }
        guard pdu.count >= entry.minLength else {
            return ATTOpcode.isCommand(op) ? nil : ATTPDU.error(request: op, handle: 0, code: ATTErrorCode.invalidPDU)
        }
        // ATT_MTU bounds every PDU in both directions (Core Vol 3 Part F §3.2.8): a longer one is
        // invalid, and its answer might not fit (a Prepare Write Response echoes its request).
        guard pdu.count <= mtu else {
            return ATTOpcode.isRequest(op) ? ATTPDU.error(request: op, handle: 0, code: ATTErrorCode.invalidPDU) : nil
        }
        return entry.handler(&self, pdu)
    }

    /// A Handle Value Notification for `handle` if this client enabled notifications on it.
    public func notification(handle: UInt16, value: [UInt8]) -> [UInt8]? {
        guard let cccdHandle = database.attributes.first(where: { $0.kind == .cccd && $0.valueHandle == handle })?.handle,
              (cccd[cccdHandle] ?? 0) & 1 != 0 else { return nil }
        return ATTPDU.withHandle(ATTOpcode.handleValueNotification, handle, Array(value.prefix(mtu - 3)))
    }

    /// A Handle Value Indication for `handle` if this client enabled indications on it.
    public func indication(handle: UInt16, value: [UInt8]) -> [UInt8]? {
        guard let cccdHandle = database.attributes.first(where: { $0.kind == .cccd && $0.valueHandle == handle })?.handle,
              (cccd[cccdHandle] ?? 0) & 2 != 0 else { return nil }
        return ATTPDU.withHandle(ATTOpcode.handleValueIndication, handle, Array(value.prefix(mtu - 3)))
    }

    // MARK: handlers

    private static func u16(_ p: [UInt8], _ at: Int) -> UInt16 { UInt16(p[at]) | UInt16(p[at + 1]) << 8 }

    private func value(of a: Attribute) -> [UInt8] {
        if a.kind == .cccd { var v = [UInt8](); v.appendUInt16LE(cccd[a.handle] ?? 0); return v }
        return a.value
    }

    private mutating func exchangeMTU(_ p: [UInt8]) -> [UInt8]? {
        let clientMTU = Int(ATTServer.u16(p, 1))
        mtu = max(23, min(clientMTU, maxMTU))
        var out: [UInt8] = [ATTOpcode.exchangeMTUResponse]
        out.appendUInt16LE(UInt16(maxMTU))
        return out
    }

    private func range(_ p: [UInt8]) -> (UInt16, UInt16)? {
        let start = ATTServer.u16(p, 1), end = ATTServer.u16(p, 3)
        guard start != 0, start <= end else { return nil }
        return (start, end)
    }

    private func inRange(_ r: (UInt16, UInt16)) -> ArraySlice<Attribute> {
        database.attributes.filter { $0.handle >= r.0 && $0.handle <= r.1 }[...]
    }

    private mutating func findInformation(_ p: [UInt8]) -> [UInt8]? {
        guard let r = range(p) else { return ATTPDU.error(request: p[0], handle: ATTServer.u16(p, 1), code: ATTErrorCode.invalidHandle) }
        var items = [UInt8]()
        var format: UInt8 = 0
        for a in inRange(r) {
            let f: UInt8 = a.type.is16Bit ? 1 : 2
            if format == 0 { format = f }
            guard f == format else { break }
            let size = 2 + a.type.bytes.count
            guard 2 + items.count + size <= mtu else { break }
            items.appendUInt16LE(a.handle)
            items += a.type.bytes
        }
        guard format != 0 else { return ATTPDU.error(request: p[0], handle: r.0, code: ATTErrorCode.attributeNotFound) }
        return [ATTOpcode.findInformationResponse, format] + items
    }

    private mutating func findByTypeValue(_ p: [UInt8]) -> [UInt8]? {
        guard let r = range(p) else { return ATTPDU.error(request: p[0], handle: ATTServer.u16(p, 1), code: ATTErrorCode.invalidHandle) }
        let type = BLEUUID(ATTServer.u16(p, 5))
        let wanted = BLEUUID(wire: Array(p[7...])) ?? BLEUUID(0)
        var out: [UInt8] = [ATTOpcode.findByTypeValueResponse]
        for a in inRange(r) where a.type == type {
            let matches = a.kind == .serviceDeclaration ? BLEUUID(wire: a.value) == wanted : value(of: a) == Array(p[7...])
            guard matches else { continue }
            guard out.count + 4 <= mtu else { break }
            out.appendUInt16LE(a.handle)
            out.appendUInt16LE(a.kind == .serviceDeclaration ? a.groupEnd : a.handle)
        }
        return out.count > 1 ? out : ATTPDU.error(request: p[0], handle: r.0, code: ATTErrorCode.attributeNotFound)
    }

    private mutating func readByType(_ p: [UInt8]) -> [UInt8]? {
        guard let r = range(p) else { return ATTPDU.error(request: p[0], handle: ATTServer.u16(p, 1), code: ATTErrorCode.invalidHandle) }
        guard p.count == 7 || p.count == 21, let type = BLEUUID(wire: Array(p[5...])) else {
            return ATTPDU.error(request: p[0], handle: 0, code: ATTErrorCode.invalidPDU)
        }
        var items = [UInt8]()
        var itemLength = 0
        for a in inRange(r) where a.type == type {
            guard a.readable else {
                if items.isEmpty { return ATTPDU.error(request: p[0], handle: a.handle, code: ATTErrorCode.readNotPermitted) }
                break
            }
            let v = Array(value(of: a).prefix(min(mtu - 4, 253)))
            if itemLength == 0 { itemLength = 2 + v.count }
            guard 2 + v.count == itemLength, 2 + items.count + itemLength <= mtu else { break }
            items.appendUInt16LE(a.handle)
            items += v
        }
        guard itemLength > 0 else { return ATTPDU.error(request: p[0], handle: r.0, code: ATTErrorCode.attributeNotFound) }
        return [ATTOpcode.readByTypeResponse, UInt8(itemLength)] + items
    }

    private mutating func read(_ p: [UInt8]) -> [UInt8]? {
        let h = ATTServer.u16(p, 1)
        guard let a = database.attribute(h) else { return ATTPDU.error(request: p[0], handle: h, code: ATTErrorCode.invalidHandle) }
        guard a.readable else { return ATTPDU.error(request: p[0], handle: h, code: ATTErrorCode.readNotPermitted) }
        return [ATTOpcode.readResponse] + value(of: a).prefix(mtu - 1)
    }

    private mutating func readBlob(_ p: [UInt8]) -> [UInt8]? {
        let h = ATTServer.u16(p, 1), offset = Int(ATTServer.u16(p, 3))
        guard let a = database.attribute(h) else { return ATTPDU.error(request: p[0], handle: h, code: ATTErrorCode.invalidHandle) }
        guard a.readable else { return ATTPDU.error(request: p[0], handle: h, code: ATTErrorCode.readNotPermitted) }
        let v = value(of: a)
        guard offset <= v.count else { return ATTPDU.error(request: p[0], handle: h, code: ATTErrorCode.invalidOffset) }
        return [ATTOpcode.readBlobResponse] + v[offset...].prefix(mtu - 1)
    }

    private mutating func readByGroupType(_ p: [UInt8]) -> [UInt8]? {
        guard let r = range(p) else { return ATTPDU.error(request: p[0], handle: ATTServer.u16(p, 1), code: ATTErrorCode.invalidHandle) }
        guard p.count == 7 || p.count == 21, let type = BLEUUID(wire: Array(p[5...])) else {
            return ATTPDU.error(request: p[0], handle: 0, code: ATTErrorCode.invalidPDU)
        }
        guard type == GATTUUID.primaryService || type == GATTUUID.secondaryService else {
            return ATTPDU.error(request: p[0], handle: r.0, code: ATTErrorCode.unsupportedGroupType)
        }
        var items = [UInt8]()
        var itemLength = 0
        for a in inRange(r) where a.type == type {
            if itemLength == 0 { itemLength = 4 + a.value.count }
            guard 4 + a.value.count == itemLength, 2 + items.count + itemLength <= mtu else { break }
            items.appendUInt16LE(a.handle)
            items.appendUInt16LE(a.groupEnd)
            items += a.value
        }
        guard itemLength > 0 else { return ATTPDU.error(request: p[0], handle: r.0, code: ATTErrorCode.attributeNotFound) }
        return [ATTOpcode.readByGroupTypeResponse, UInt8(itemLength)] + items
    }

    private mutating func store(_ a: Attribute, _ v: [UInt8]) -> UInt8? {
        if a.kind == .cccd {
            guard v.count == 2 else { return ATTErrorCode.invalidAttributeValueLength }
            cccd[a.handle] = ATTServer.u16(v, 0)
            return nil
        }
        guard v.count <= ATTServer.maxAttributeLength else { return ATTErrorCode.invalidAttributeValueLength }
        database.setValue(a.handle, v)
        written[a.handle] = v
        a.onWrite?(v)
        return nil
    }

    private mutating func write(_ p: [UInt8], respond: Bool) -> [UInt8]? {
        let h = ATTServer.u16(p, 1)
        guard let a = database.attribute(h) else { return respond ? ATTPDU.error(request: p[0], handle: h, code: ATTErrorCode.invalidHandle) : nil }
        guard a.writable else { return respond ? ATTPDU.error(request: p[0], handle: h, code: ATTErrorCode.writeNotPermitted) : nil }
        if let err = store(a, Array(p[3...])) { return respond ? ATTPDU.error(request: p[0], handle: h, code: err) : nil }
        return respond ? [ATTOpcode.writeResponse] : nil
    }

    private mutating func prepareWrite(_ p: [UInt8]) -> [UInt8]? {
        let h = ATTServer.u16(p, 1), offset = Int(ATTServer.u16(p, 3))
        guard let a = database.attribute(h) else { return ATTPDU.error(request: p[0], handle: h, code: ATTErrorCode.invalidHandle) }
        guard a.writable else { return ATTPDU.error(request: p[0], handle: h, code: ATTErrorCode.writeNotPermitted) }
        guard prepared.count < ATTServer.prepareQueueLimit else { return ATTPDU.error(request: p[0], handle: h, code: ATTErrorCode.prepareQueueFull) }
        prepared.append((h, offset, Array(p[5...])))
        return [ATTOpcode.prepareWriteResponse] + p[1...]
    }

    private mutating func executeWrite(_ p: [UInt8]) -> [UInt8]? {
        let queue = prepared
        prepared = []
        if p[1] == 0x01 {
            var values: [UInt16: [UInt8]] = [:]
            var order: [UInt16] = []
            for item in queue {
                var v = values[item.handle] ?? []
                if values[item.handle] == nil { order.append(item.handle) }
                guard item.offset <= v.count else { return ATTPDU.error(request: p[0], handle: item.handle, code: ATTErrorCode.invalidOffset) }
                v.replaceSubrange(item.offset..<min(v.count, item.offset + item.value.count), with: item.value)
                values[item.handle] = v
            }
            for h in order {
                guard let a = database.attribute(h) else { continue }
                if let err = store(a, values[h]!) { return ATTPDU.error(request: p[0], handle: h, code: err) }
            }
        }
        return [ATTOpcode.executeWriteResponse]
    }
}
