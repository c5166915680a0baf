import ByteCore

/// A discovered service.
public struct DiscoveredService: Equatable, Sendable {
    public var uuid: BLEUUID
    public var start: UInt16
    public var end: UInt16
}

/// A discovered characteristic.
public struct DiscoveredCharacteristic: Equatable, Sendable {
    public var uuid: BLEUUID
    public var properties: UInt8
    public var declarationHandle: UInt16
    public var valueHandle: UInt16
}

/// The small GATT client the phone needs (Core Vol 3 Part G §4): MTU exchange, primary service
/// and characteristic discovery, read (with blobs), write.
public struct GATTClient {
    public let connection: BLEConnection

    public init(connection: BLEConnection) { self.connection = connection }

    private func request(_ pdu: [UInt8], expecting: UInt8) throws(BLEError) -> [UInt8]? {
        let r = try connection.attRequest(pdu)
        if r.first == ATTOpcode.errorResponse, r.count >= 5 {
            if r[4] == ATTErrorCode.attributeNotFound { return nil }
            throw BLEError(.gattError, "GATT: request 0x\(Hex.encode([pdu[0]])) failed with ATT error 0x\(Hex.encode([r[4]]))")
        }
        guard r.first == expecting else { throw BLEError(.malformedPacket, "GATT: unexpected response 0x\(Hex.encode([r.first ?? 0]))") }
        return r
    }

    /// Exchange MTU; returns the ATT_MTU in use.
    @discardableResult
    public func exchangeMTU(_ mtu: UInt16 = 247) throws(BLEError) -> Int {
        var pdu: [UInt8] = [ATTOpcode.exchangeMTURequest]
        pdu.appendUInt16LE(mtu)
        guard let r = try request(pdu, expecting: ATTOpcode.exchangeMTUResponse), r.count >= 3 else { return 23 }
        let m = max(23, min(Int(mtu), Int(UInt16(r[1]) | UInt16(r[2]) << 8)))
        connection.setClientMTU(m)
        return m
    }

    /// All primary services (Read By Group Type on 0x2800).
    public func discoverPrimaryServices() throws(BLEError) -> [DiscoveredService] {
        var out = [DiscoveredService]()
        var start: UInt16 = 1
        while start != 0 {
            var pdu: [UInt8] = [ATTOpcode.readByGroupTypeRequest]
            pdu.appendUInt16LE(start); pdu.appendUInt16LE(0xFFFF); pdu += GATTUUID.primaryService.bytes
            guard let r = try request(pdu, expecting: ATTOpcode.readByGroupTypeResponse), r.count >= 2 else { break }
            let len = Int(r[1])
            guard len >= 6 else { throw BLEError(.malformedPacket, "GATT: bad service list item length \(len)") }
            var i = 2
            var last: UInt16 = 0
            while i + len <= r.count {
                let h = UInt16(r[i]) | UInt16(r[i + 1]) << 8
                let e = UInt16(r[i + 2]) | UInt16(r[i + 3]) << 8
                if let u = BLEUUID(wire: Array(r[(i + 4)..<(i + len)])) { out.append(DiscoveredService(uuid: u, start: h, end: e)) }
                last = max(e, h)
                i += len
            }
            // A server that does not move forward (handles at or below the request's start) ends
            // discovery rather than looping forever.
            start = last == 0xFFFF || last < start ? 0 : last + 1
        }
        return out
    }

    /// Primary services with `uuid` (Find By Type Value on 0x2800): one round trip.
    public func findPrimaryServices(_ uuid: BLEUUID) throws(BLEError) -> [DiscoveredService] {
        var out = [DiscoveredService]()
        var start: UInt16 = 1
        while start != 0 {
            var pdu: [UInt8] = [ATTOpcode.findByTypeValueRequest]
            pdu.appendUInt16LE(start); pdu.appendUInt16LE(0xFFFF); pdu.appendUInt16LE(0x2800); pdu += uuid.bytes
            guard let r = try request(pdu, expecting: ATTOpcode.findByTypeValueResponse), r.count >= 5 else { break }
            var i = 1
            var last: UInt16 = 0xFFFF
            while i + 4 <= r.count {
                let h = UInt16(r[i]) | UInt16(r[i + 1]) << 8
                let e = UInt16(r[i + 2]) | UInt16(r[i + 3]) << 8
                out.append(DiscoveredService(uuid: uuid, start: h, end: e))
                last = e
                i += 4
            }
            // Stop once the list ends early or reaches the last handle.
            start = last == 0xFFFF || last < start || r.count + 4 <= connection.clientMTU ? 0 : last + 1
        }
        return out
    }

    /// Characteristics in a service (Read By Type on 0x2803).
    public func discoverCharacteristics(in service: DiscoveredService) throws(BLEError) -> [DiscoveredCharacteristic] {
        var out = [DiscoveredCharacteristic]()
        var start = service.start
        while start <= service.end {
            var pdu: [UInt8] = [ATTOpcode.readByTypeRequest]
            pdu.appendUInt16LE(start); pdu.appendUInt16LE(service.end); pdu += GATTUUID.characteristic.bytes
            guard let r = try request(pdu, expecting: ATTOpcode.readByTypeResponse), r.count >= 2 else { break }
            let len = Int(r[1])
            guard len >= 7 else { throw BLEError(.malformedPacket, "GATT: bad characteristic item length \(len)") }
            var i = 2
            var last: UInt16 = start
            while i + len <= r.count {
                let h = UInt16(r[i]) | UInt16(r[i + 1]) << 8
                let props = r[i + 2]
                let vh = UInt16(r[i + 3]) | UInt16(r[i + 4]) << 8
                if let u = BLEUUID(wire: Array(r[(i + 5)..<(i + len)])) {
                    out.append(DiscoveredCharacteristic(uuid: u, properties: props, declarationHandle: h, valueHandle: vh))
                }
                last = max(h, vh)
                i += len
            }
            if last >= service.end || last < start { break }  // done, or a server that does not move forward
            start = last + 1
        }
        return out
    }

    /// Reads a value, following with Read Blob while responses fill the MTU.
    public func read(_ handle: UInt16) throws(BLEError) -> [UInt8] {
        guard let r = try request(ATTPDU.withHandle(ATTOpcode.readRequest, handle), expecting: ATTOpcode.readResponse) else {
            throw BLEError(.notFound, "GATT: attribute 0x\(String(handle, radix: 16)) not found")
        }
        var value = Array(r.dropFirst())
        let mtu = connection.clientMTU
        var chunk = value.count
        while chunk == mtu - 1 && value.count < 512 {
            var rest = [UInt8]()
            rest.appendUInt16LE(UInt16(value.count))
            guard let b = try request(ATTPDU.withHandle(ATTOpcode.readBlobRequest, handle, rest), expecting: ATTOpcode.readBlobResponse) else { break }
            chunk = b.count - 1
            value += b.dropFirst()
        }
        return value
    }

    /// Write Request (value must fit ATT_MTU − 3).
    public func write(_ handle: UInt16, _ value: [UInt8]) throws(BLEError) {
        _ = try request(ATTPDU.withHandle(ATTOpcode.writeRequest, handle, value), expecting: ATTOpcode.writeResponse)
    }
}
