@testable import BLE
import ByteCore
import XCTest

final class ATTServerTests: XCTestCase {
    static let notifyUUID = BLEUUID("0000AAAA-0000-1000-8000-00805F9B34FB")!   // shrinks to 16-bit AAAA
    var written: [[UInt8]] = []

    func makeServer() -> ATTServer {
        let services = GATTDatabase.standardServices(deviceName: "LockBench")
            + [AliroBLE.service(psm: 0x0080) { [unowned self] in self.written.append($0) }]
            + [ServiceDefinition(uuid: BLEUUID(0x180F), characteristics: [
                CharacteristicDefinition(uuid: Self.notifyUUID, properties: [.read, .notify], value: Array(0..<100)),
            ])]
        return ATTServer(database: GATTDatabase(services: services))
    }

    private func h(_ v: UInt16) -> [UInt8] { var o = [UInt8](); o.appendUInt16LE(v); return o }

    /// Handles: 1 GAP, 2-3 name, 4-5 appearance, 6 GATT, 7-8 service changed, 9 CCCD,
    /// 10 FFF2, 11-12 SPSM, 13-14 version, 15 battery, 16-17 notify char, 18 CCCD.
    func testLayout() {
        let s = makeServer()
        XCTAssertEqual(s.database.attributes.count, 18)
        XCTAssertEqual(s.database.valueHandle(of: AliroBLE.spsmCharacteristic), 12)
        XCTAssertEqual(s.database.valueHandle(of: AliroBLE.versionCharacteristic), 14)
        XCTAssertEqual(s.database.attribute(10)?.groupEnd, 14)
    }

    func testExchangeMTU() {
        var s = makeServer()
        XCTAssertEqual(s.handle([0x02] + h(517)), [0x03] + h(247))
        XCTAssertEqual(s.mtu, 247)
        var t = makeServer()
        _ = t.handle([0x02] + h(10))
        XCTAssertEqual(t.mtu, 23)
    }

    func testPrimaryServiceDiscoveryKeepsOneItemLength() {
        var s = makeServer()
        let r = s.handle([0x10] + h(1) + h(0xFFFF) + h(0x2800))!
        // 16-bit UUIDs: item length 6; the list stops within MTU 23 (3 items).
        XCTAssertEqual(Array(r[0..<2]), [0x11, 6])
        XCTAssertEqual(Array(r[2..<8]), h(1) + h(5) + h(0x1800))
        XCTAssertEqual((r.count - 2) % 6, 0)
        XCTAssertEqual(s.handle([0x10] + h(19) + h(0xFFFF) + h(0x2800)), [0x01, 0x10] + h(19) + [0x0A])
        XCTAssertEqual(s.handle([0x10] + h(1) + h(0xFFFF) + h(0x2803)), [0x01, 0x10] + h(1) + [0x10])
    }

    func testFindByTypeValueFindsTheLockService() {
        var s = makeServer()
        XCTAssertEqual(s.handle([0x06] + h(1) + h(0xFFFF) + h(0x2800) + h(0xFFF2)), [0x07] + h(10) + h(14))
        XCTAssertEqual(s.handle([0x06] + h(1) + h(0xFFFF) + h(0x2800) + h(0x1234)), [0x01, 0x06] + h(1) + [0x0A])
    }

    func testCharacteristicDiscoveryAndReads() {
        var s = makeServer()
        _ = s.handle([0x02] + h(247))
        let r = s.handle([0x08] + h(10) + h(14) + h(0x2803))!
        // 128-bit characteristic UUIDs: item = handle(2) + props(1) + value handle(2) + uuid(16) = 21.
        XCTAssertEqual(Array(r[0..<2]), [0x09, 21])
        XCTAssertEqual(r.count, 2 + 42)
        XCTAssertEqual(Array(r[2..<7]), h(11) + [0x02] + h(12))
        XCTAssertEqual(Array(r[7..<23]), AliroBLE.spsmCharacteristic.bytes)
        XCTAssertEqual(s.handle([0x0A] + h(12)), [0x0B, 0x00, 0x80, 0x02, 0x01, 0x00])
        XCTAssertEqual(s.handle([0x0A] + h(3)), [0x0B] + Array("LockBench".utf8))
        // Read by type on the characteristic UUID itself.
        XCTAssertEqual(s.handle([0x08] + h(1) + h(0xFFFF) + AliroBLE.spsmCharacteristic.bytes), [0x09, 7] + h(12) + [0x00, 0x80, 0x02, 0x01, 0x00])
    }

    func testFindInformationGroupsByUUIDFormat() {
        var s = makeServer()
        let r = s.handle([0x04] + h(10) + h(14))!
        XCTAssertEqual(Array(r[0..<2]), [0x05, 0x01])
        XCTAssertEqual(Array(r[2...]), h(10) + h(0x2800) + h(11) + h(0x2803))  // stops before the 128-bit value UUID
        let r2 = s.handle([0x04] + h(12) + h(12))!
        XCTAssertEqual(r2, [0x05, 0x02] + h(12) + AliroBLE.spsmCharacteristic.bytes)
        XCTAssertEqual(s.handle([0x04] + h(5) + h(1)), [0x01, 0x04] + h(5) + [0x01])
        XCTAssertEqual(s.handle([0x04] + h(100) + h(200)), [0x01, 0x04] + h(100) + [0x0A])
    }

    func testLongReadWithBlobs() {
        var s = makeServer()
        let first = s.handle([0x0A] + h(17))!
        XCTAssertEqual(first, [0x0B] + Array(0..<22))
        XCTAssertEqual(s.handle([0x0C] + h(17) + h(22)), [0x0D] + Array(22..<44))
        XCTAssertEqual(s.handle([0x0C] + h(17) + h(100)), [0x0D])
        XCTAssertEqual(s.handle([0x0C] + h(17) + h(101)), [0x01, 0x0C] + h(17) + [0x07])
    }

    func testWritesAndPermissions() {
        var s = makeServer()
        XCTAssertEqual(s.handle([0x12] + h(14) + [0x01, 0x00]), [0x13])
        XCTAssertEqual(written, [[0x01, 0x00]])
        XCTAssertEqual(s.handle([0x0A] + h(14)), [0x0B, 0x01, 0x00])
        XCTAssertEqual(s.handle([0x12] + h(12) + [0]), [0x01, 0x12] + h(12) + [0x03])
        XCTAssertEqual(s.handle([0x12] + h(99) + [0]), [0x01, 0x12] + h(99) + [0x01])
        XCTAssertNil(s.handle([0x52] + h(14) + [0x09, 0x09]))
        XCTAssertEqual(written.last, [0x09, 0x09])
        XCTAssertNil(s.handle([0x52] + h(12) + [0]))  // commands never get errors
    }

    func testPrepareAndExecuteLongWrite() {
        var s = makeServer()
        let value = (0..<512).map { UInt8(truncatingIfNeeded: $0) }
        var offset = 0
        while offset < value.count {
            let chunk = Array(value[offset..<min(value.count, offset + 18)])
            let req = [0x16] + h(14) + h(UInt16(offset)) + chunk
            XCTAssertEqual(s.handle(req), [0x17] + Array(req[1...]))
            offset += chunk.count
        }
        XCTAssertEqual(s.handle([0x18, 0x01]), [0x19])
        XCTAssertEqual(written.last, value)
        // Cancel discards.
        _ = s.handle([0x16] + h(14) + h(0) + [1, 2, 3])
        XCTAssertEqual(s.handle([0x18, 0x00]), [0x19])
        XCTAssertEqual(written.count, 1)
        XCTAssertEqual(s.handle([0x16] + h(12) + h(0) + [1]), [0x01, 0x16] + h(12) + [0x03])
    }

    func testNotificationsFollowTheCCCD() {
        var s = makeServer()
        XCTAssertNil(s.notification(handle: 17, value: [1, 2]))
        XCTAssertEqual(s.handle([0x12] + h(18) + [0x01, 0x00]), [0x13])
        XCTAssertEqual(s.handle([0x0A] + h(18)), [0x0B, 0x01, 0x00])
        XCTAssertEqual(s.notification(handle: 17, value: [1, 2]), [0x1B] + h(17) + [1, 2])
        XCTAssertNil(s.indication(handle: 8, value: [1, 0, 0xFF, 0xFF]))
        XCTAssertEqual(s.handle([0x12] + h(9) + [0x02, 0x00]), [0x13])
        XCTAssertEqual(s.indication(handle: 8, value: [1, 0, 0xFF, 0xFF]), [0x1D] + h(8) + [1, 0, 0xFF, 0xFF])
        XCTAssertEqual(s.handle([0x12] + h(18) + [0x01]), [0x01, 0x12] + h(18) + [0x0D])
        XCTAssertNil(s.handle([0x1E]))
    }

    func testDispatcherErrors() {
        var s = makeServer()
        XCTAssertEqual(s.handle([0x20, 1, 2]), [0x01, 0x20, 0, 0, 0x06])       // unknown request
        XCTAssertNil(s.handle([0x7F, 1, 2]))                                   // unknown command ignored
        XCTAssertEqual(s.handle([0x0A, 0x01]), [0x01, 0x0A, 0, 0, 0x04])       // short PDU
        XCTAssertEqual(s.handle([0x10] + h(1) + h(0xFFFF) + [0x00]), [0x01, 0x10, 0, 0, 0x04])
        XCTAssertNil(s.handle([0x1B, 1, 0]))                                   // a notification to a server
        XCTAssertNil(s.handle([]))
    }

    /// Fuzzer finding (Tests/Fuzz/att.swift): a Prepare Write Request longer than ATT_MTU was
    /// echoed in a Prepare Write Response longer than ATT_MTU. A PDU over the MTU is invalid now.
    func testPDUsLongerThanTheMTUAreInvalid() {
        var s = makeServer()
        let prepare = Hex.decode("16110061746f7250726f0001021800010218180001021800")!  // 24 bytes at ATT_MTU 23
        XCTAssertEqual(s.handle(prepare), [0x01, 0x16, 0, 0, 0x04])
        XCTAssertEqual(s.handle([0x12] + h(14) + [UInt8](repeating: 1, count: 21)), [0x01, 0x12, 0, 0, 0x04])
        XCTAssertNil(s.handle([0x52] + h(14) + [UInt8](repeating: 1, count: 21)))  // a command: dropped
        XCTAssertEqual(s.handle([0x02] + h(247)), [0x03] + h(247))
        // Within the larger MTU it reaches its handler (handle 17 is read/notify only here).
        XCTAssertEqual(s.handle(prepare), [0x01, 0x16] + h(17) + [0x03])
        let fits = [0x16] + h(14) + h(0) + [UInt8](repeating: 7, count: 40)
        XCTAssertEqual(s.handle(fits), [0x17] + Array(fits[1...]))
    }

    func testUUIDText() {
        XCTAssertEqual(AliroBLE.spsmCharacteristic.description, "D3B5A130-9E23-4B3A-8BE4-6B1EE5F980A3")
        XCTAssertEqual(BLEUUID("FFF2"), BLEUUID(0xFFF2))
        XCTAssertEqual(Self.notifyUUID, BLEUUID(0xAAAA))
        XCTAssertEqual(BLEUUID(0x2800).long.count, 16)
        XCTAssertNil(BLEUUID("12345"))
    }
}
