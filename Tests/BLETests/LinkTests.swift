@testable import BLE
import ByteCore
import Foundation
import LockBenchTestSupport
import XCTest

/// L2CAP signaling, SMP refusal and GATT over a real Bumble link between the Swift lock and the
/// Swift phone's host.
final class LinkTests: XCTestCase {
    private var lock: BLELock!
    private var phone: BLEPhone!

    private func connect() throws -> BLEPhoneSession {
        let controllers = try bumbleControllers()
        lock = try startLock(on: controllers.spec(0), configure: { $0.echoPSM = AliroBLE.echoPSM },
                             transaction: { _ in Thread.sleep(forTimeInterval: 30); return false })
        phone = try startPhone(on: controllers.spec(1))
        return try phone.connectToLock()
    }

    private func lockSide(_ session: BLEPhoneSession) -> BLEConnection? {
        _ = lock.host.wait(timeout: 2) { !self.lock.host.connections.isEmpty }
        lock.host.cond.lock()
        defer { lock.host.cond.unlock() }
        return lock.host.connections.values.first
    }

    func testSignalingAndPairingRefusal() throws {
        let session = try connect()
        let c = session.connection
        // Unknown signaling code → Command Reject "not understood".
        guard case .commandReject(_, let reason, _)? = c.signalingRequest({ .unknown(code: 0x1F, id: $0, data: [1, 2]) }) else {
            return XCTFail("no command reject")
        }
        XCTAssertEqual(reason, 0x0000)
        // A central does not take a connection parameter update request: the lock (peripheral)
        // rejects it…
        guard case .commandReject? = c.signalingRequest({ .connectionParameterUpdateRequest(id: $0, intervalMin: 6, intervalMax: 6, latency: 0, timeout: 100) }) else {
            return XCTFail("the peripheral did not reject")
        }
        // …while the phone (central) accepts the lock's and updates the link.
        let lockLink = try XCTUnwrap(lockSide(session))
        guard case .connectionParameterUpdateResponse(_, let result)? = lockLink.signalingRequest({
            .connectionParameterUpdateRequest(id: $0, intervalMin: 12, intervalMax: 12, latency: 0, timeout: 200)
        }) else { return XCTFail("no update response") }
        XCTAssertEqual(result, 0)
        XCTAssertTrue(phone.host.wait(timeout: 5) { c.interval == 12 }, "no LE Connection Update Complete (interval \(c.interval))")
        // Unknown PSM → refused with result 0x0002.
        XCTAssertThrowsError(try c.openChannel(psm: 0x00F1)) { XCTAssertEqual(($0 as? BLEError)?.code, .channelRefused) }
        // Pairing Request → Pairing Failed, "pairing not supported".
        c.sendFixed(cid: L2CAPChannelID.smp, [0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07])
        XCTAssertTrue(phone.host.wait(timeout: 5) { c.smpReceived.contains([0x05, 0x05]) })
        XCTAssertTrue(c.isOpen)
    }

    func testGATTDiscoveryReadsAndLongWriteOverTheLink() throws {
        let session = try connect()
        let gatt = GATTClient(connection: session.connection)
        XCTAssertEqual(try gatt.exchangeMTU(100), 100)
        let services = try gatt.discoverPrimaryServices()
        XCTAssertEqual(services.map(\.uuid), [GATTUUID.genericAccess, GATTUUID.genericAttribute, BLEUUID(0xFFF2)])
        let chars = try gatt.discoverCharacteristics(in: services[2])
        XCTAssertEqual(chars.map(\.uuid), [AliroBLE.spsmCharacteristic, AliroBLE.versionCharacteristic])
        XCTAssertEqual(try gatt.read(chars[0].valueHandle), [0x00, 0x80, 0x02, 0x01, 0x00])
        let name = try gatt.read(try XCTUnwrap(try gatt.discoverCharacteristics(in: services[0]).first).valueHandle)
        XCTAssertEqual(String(decoding: name, as: UTF8.self), "LockBench")
        // A 300-byte value read back through Read Blob.
        let long = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 3) }
        for (i, chunk) in stride(from: 0, to: long.count, by: 90).enumerated() {
            var req: [UInt8] = [ATTOpcode.prepareWriteRequest]
            req.appendUInt16LE(chars[1].valueHandle)
            req.appendUInt16LE(UInt16(chunk))
            req += long[chunk..<min(long.count, chunk + 90)]
            XCTAssertEqual(try session.connection.attRequest(req), [ATTOpcode.prepareWriteResponse] + req.dropFirst(), "chunk \(i)")
        }
        XCTAssertEqual(try session.connection.attRequest([ATTOpcode.executeWriteRequest, 0x01]), [ATTOpcode.executeWriteResponse])
        XCTAssertEqual(try gatt.read(chars[1].valueHandle), long)
        XCTAssertEqual(lock.selectedVersion, long)
        // Errors come back as ATT errors.
        XCTAssertThrowsError(try gatt.write(chars[0].valueHandle, [1])) { XCTAssertEqual(($0 as? BLEError)?.code, .gattError) }
    }

    /// Large SDUs through small K-frames and few credits, both ways, on the lock's echo PSM.
    func testCreditChannelSegmentationAndCreditsOverTheLink() throws {
        let session = try connect()
        let channel = try session.connection.openChannel(psm: AliroBLE.echoPSM, mtu: 1024, mps: 23, credits: 2)
        for size in [1, 21, 22, 23, 300, 1000, 1024] {
            let sdu = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ size) }
            try channel.send(sdu)
            XCTAssertEqual(try channel.receive(timeout: 10), sdu, "size \(size)")
        }
        // Several in flight at once.
        let burst = (0..<10).map { i in [UInt8](repeating: UInt8(i), count: 500) }
        for sdu in burst { try channel.send(sdu) }
        for sdu in burst { XCTAssertEqual(try channel.receive(timeout: 10), sdu) }
        XCTAssertThrowsError(try channel.send([UInt8](repeating: 0, count: 1025))) { XCTAssertEqual(($0 as? BLEError)?.code, .malformedPacket) }
        channel.close()
        XCTAssertThrowsError(try channel.receive(timeout: 1)) { XCTAssertEqual(($0 as? BLEError)?.code, .channelClosed) }
    }
}
