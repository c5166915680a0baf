@testable import BLE
import ByteCore
import XCTest

final class HCICommandTests: XCTestCase {
    static let commands: [HCICommand] = [
        .disconnect(handle: 0x0040, reason: 0x13),
        .setEventMask(0x2000_8000_0200_8090),
        .reset,
        .readBufferSize,
        .readBDADDR,
        .leSetEventMask(0xA7F),
        .leReadBufferSize,
        .leSetRandomAddress([1, 2, 3, 4, 5, 0xC6]),
        .leSetAdvertisingParameters(intervalMin: 0x20, intervalMax: 0x30, type: 0, ownAddressType: 1, channelMap: 7),
        .leSetAdvertisingData(AliroAdvertisement().advertisingData),
        .leSetScanResponseData(AliroAdvertisement.scanResponse(name: "LockBench")),
        .leSetAdvertisingEnable(true),
        .leSetScanParameters(active: false, interval: 0x10, window: 0x10, ownAddressType: 1),
        .leSetScanEnable(enable: true, filterDuplicates: false),
        .leCreateConnection(peer: BLEAddress(type: 1, bytes: [6, 5, 4, 3, 2, 0xC1]), ownAddressType: 1, intervalMin: 24, intervalMax: 24, latency: 0, timeout: 200),
        .leCreateConnectionCancel,
        .leConnectionUpdate(handle: 1, intervalMin: 6, intervalMax: 12, latency: 0, timeout: 100),
        .leLTKRequestNegativeReply(handle: 1),
        .leRemoteConnParamRequestReply(handle: 2, intervalMin: 6, intervalMax: 6, latency: 1, timeout: 300),
        .unknown(opcode: 0xFC01, parameters: [1, 2, 3]),
    ]

    func testRoundTrip() throws {
        for c in Self.commands {
            XCTAssertEqual(try HCICommand(parsing: c.encoded()), c, "\(c)")
        }
    }

    func testKnownEncodings() {
        XCTAssertEqual(HCICommand.reset.encoded(), [0x03, 0x0C, 0x00])
        XCTAssertEqual(HCICommand.leSetAdvertisingEnable(true).encoded(), [0x0A, 0x20, 0x01, 0x01])
        XCTAssertEqual(HCICommand.leSetAdvertisingData([2, 1, 6]).encoded().count, 3 + 32)
        XCTAssertEqual(HCICommand.leCreateConnection(peer: BLEAddress(type: 1, bytes: [1, 2, 3, 4, 5, 6]), ownAddressType: 1,
                                                     intervalMin: 24, intervalMax: 24, latency: 0, timeout: 200).encoded().count, 3 + 25)
        XCTAssertEqual(HCICommand.leSetAdvertisingParameters(intervalMin: 0x20, intervalMax: 0x20, type: 0, ownAddressType: 1, channelMap: 7).encoded().count, 3 + 15)
        XCTAssertEqual(HCICommand.leRemoteConnParamRequestReply(handle: 1, intervalMin: 1, intervalMax: 1, latency: 0, timeout: 1).encoded().count, 3 + 14)
    }

    func testMalformedKnownCommandDecodesAsUnknown() throws {
        XCTAssertEqual(try HCICommand(parsing: [0x06, 0x04, 0x01, 0x01]), .unknown(opcode: 0x0406, parameters: [1]))
        XCTAssertThrowsError(try HCICommand(parsing: [0x03, 0x0C, 0x05]))
    }
}

final class HCIEventTests: XCTestCase {
    static var peer: BLEAddress { BLEAddress(type: 1, bytes: [1, 2, 3, 4, 5, 0xC0]) }

    static var events: [HCIEvent] {
        var enhanced = LEConnectionComplete(subevent: 0x0A, status: 0, handle: 0x0EFF, role: 1, peer: peer, interval: 24, latency: 0, supervisionTimeout: 200, clockAccuracy: 1)
        enhanced.localRPA = [9, 9, 9, 9, 9, 9]
        var v2 = enhanced
        v2.subevent = 0x29
        v2.advertisingHandle = 0
        v2.syncHandle = 0xFFFF
        var ext = ExtendedAdvertisingReport(eventType: 0x13, address: peer, rssi: -40, data: AliroAdvertisement().advertisingData)
        ext.txPower = 5
        return [
            .disconnectionComplete(status: 0, handle: 1, reason: 0x13),
            .commandComplete(numPackets: 1, opcode: 0x2002, returnParameters: [0, 27, 0, 64]),
            .commandStatus(status: 0, numPackets: 1, opcode: 0x200D),
            .hardwareError(3),
            .numberOfCompletedPackets([.init(handle: 1, count: 2), .init(handle: 2, count: 1)]),
            .leConnectionComplete(LEConnectionComplete(status: 0, handle: 1, role: 0, peer: peer, interval: 24, latency: 0, supervisionTimeout: 200)),
            .leConnectionComplete(enhanced),
            .leConnectionComplete(v2),
            .leAdvertisingReport([AdvertisingReport(eventType: 0, address: peer, data: [2, 1, 6], rssi: -50)]),
            .leExtendedAdvertisingReport([ext]),
            .leConnectionUpdateComplete(status: 0, handle: 1, interval: 6, latency: 0, timeout: 100),
            .leLTKRequest(handle: 1, random: 0x0102030405060708, ediv: 0x1234),
            .leRemoteConnParamRequest(handle: 1, intervalMin: 6, intervalMax: 12, latency: 0, timeout: 100),
            .leUnknown(subevent: 0x14, parameters: [1, 2]),
            .unknown(code: 0x57, parameters: [1]),
        ]
    }

    func testRoundTrip() throws {
        for e in Self.events { XCTAssertEqual(try HCIEvent(parsing: e.encoded()), e, "\(e)") }
    }

    /// BLE-FACTS: the enhanced event's parameters start at offset 23 (after the subevent byte).
    func testEnhancedConnectionCompleteLayout() throws {
        var params: [UInt8] = [0x0A, 0x00, 0x05, 0x00, 0x01, 0x00] + [1, 2, 3, 4, 5, 6] + [UInt8](repeating: 0, count: 12)
        XCTAssertEqual(params.count - 1, 23)
        params += [0x18, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00]
        guard case .leConnectionComplete(let c) = try HCIEvent(parsing: [0x3E, UInt8(params.count)] + params) else { return XCTFail() }
        XCTAssertEqual(c.handle, 5)
        XCTAssertEqual(c.role, 1)
        XCTAssertEqual(c.interval, 0x18)
        XCTAssertEqual(c.supervisionTimeout, 200)
    }

    func testMalformedKnownEventsDecodeGenerically() throws {
        XCTAssertEqual(try HCIEvent(parsing: [0x05, 0x02, 0x00, 0x01]), .unknown(code: 0x05, parameters: [0, 1]))
        XCTAssertEqual(try HCIEvent(parsing: [0x3E, 0x02, 0x01, 0x00]), .leUnknown(subevent: 0x01, parameters: [0]))
        XCTAssertThrowsError(try HCIEvent(parsing: [0x0E, 0x05, 0x01]))
        XCTAssertThrowsError(try HCIEvent(parsing: [0x3E, 0x00]))
    }

    func testAdvertisementFitsLegacyAdvertisingData() {
        var adv = AliroAdvertisement()
        adv.groupID = Array(1...16)
        adv.subID = [0xA1, 0xA2, 0xA3]
        adv.expiry = [1, 2, 3, 4]
        adv.tag = [7, 7, 7, 7, 7, 7, 7]
        adv.notify = true
        let data = adv.advertisingData
        XCTAssertEqual(data.count, 31)
        XCTAssertEqual(Array(data[0..<3]), [0x02, 0x01, 0x06])
        let sd = AdvertisingData.serviceData(0xFFF2, in: data)
        // Version 0 (bits 0-2), notification 1 (bits 3-4), BLE only (bit 6).
        XCTAssertEqual(sd, [0x48, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 0xA1, 0xA2, 1, 2, 3, 4, 0, 7, 7, 7, 7, 7, 7, 7])
        XCTAssertEqual(AliroAdvertisement.scanResponse(name: "LockBench"), [10, 0x09] + Array("LockBench".utf8))
        XCTAssertLessThanOrEqual(AliroAdvertisement.scanResponse(name: String(repeating: "x", count: 40)).count, 31)
    }

    func testStaticRandomAddressHasTopBitsSet() {
        for seed: UInt64 in [0, 1, 42, .max] {
            let a = BLEAddress.staticRandom(seed: seed)
            XCTAssertEqual(a.type, 1)
            XCTAssertEqual(a.bytes[5] & 0xC0, 0xC0)
        }
    }
}
