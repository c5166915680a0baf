import XCTest
@testable import AccessProtocol

final class SecureChannelTests: XCTestCase {
    func testSealOpenBothDirectionsWithSeparateCounters() throws {
        let kr = [UInt8](repeating: 1, count: 32), kd = [UInt8](repeating: 2, count: 32)
        var reader = SecureChannel(role: .reader, readerKey: kr, deviceKey: kd)
        var device = SecureChannel(role: .device, readerKey: kr, deviceKey: kd)
        for i in 0..<5 {
            let m = [UInt8(i), 0xAA]
            XCTAssertEqual(try device.open(try reader.seal(m)), m)
            XCTAssertEqual(try reader.open(try device.seal(m + m)), m + m)
        }
        XCTAssertEqual(reader.sendCounter, 6)
        XCTAssertEqual(device.lastReceivedCounter, 5)
    }

    func testCounterReuseIsRefused() throws {
        let kr = [UInt8](repeating: 1, count: 32), kd = [UInt8](repeating: 2, count: 32)
        var reader = SecureChannel(role: .reader, readerKey: kr, deviceKey: kd)
        var device = SecureChannel(role: .device, readerKey: kr, deviceKey: kd)
        let first = try reader.seal([1])
        XCTAssertEqual(try device.open(first, counter: 1), [1])
        XCTAssertThrowsError(try device.open(first, counter: 1)) { XCTAssertEqual(($0 as? ProtocolError)?.code, .counterReuse) }
        // Replaying the first message as the next one fails: it was sealed under counter 1.
        XCTAssertThrowsError(try device.open(first)) { XCTAssertEqual(($0 as? ProtocolError)?.code, .decryptFailed) }
        XCTAssertEqual(device.lastReceivedCounter, 1)
    }

    func testIVLayout() {
        XCTAssertEqual(SecureChannel.iv(prefix: SecureChannel.devicePrefix, counter: 0x01020304).hex,
                       "000000000000000101020304")
        XCTAssertEqual(SecureChannel.iv(prefix: SecureChannel.readerPrefix, counter: 1).hex, "000000000000000000000001")
    }
}
