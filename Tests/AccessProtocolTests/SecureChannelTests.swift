import XCTest
import ByteCore
import Codecs
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

final class KeyScheduleHKDFTests: XCTestCase {
    /// The key schedule derives with the Wycheproof-tested `Primitives.hkdf` (one crypto API), on
    /// random inputs including empty salt and info and every output length the schedule uses.
    func testKeyScheduleDerivesWithPrimitivesHKDF() throws {
        for _ in 0..<300 {
            let ikm = Primitives.randomBytes(Int.random(in: 0...80))
            let salt = Primitives.randomBytes([0, 1, 32, 64, 65, 200, 300].randomElement()!)
            let info = Primitives.randomBytes(Int.random(in: 0...40))
            let n = [0, 1, 31, 32, 33, 64, 160, 255, 1000].randomElement()!
            XCTAssertEqual(KeySchedule.derive(ikm, salt: salt, info: info, count: n),
                           try Primitives.hkdf(ikm: ikm, salt: salt, info: info, length: n))
        }
        let stepUpSK = Primitives.randomBytes(32)
        let keys = KeySchedule.stepUpKeys(stepUpSK: stepUpSK)
        XCTAssertEqual(keys.reader, try Primitives.hkdf(ikm: stepUpSK, salt: [], info: Array("SKReader".utf8), length: 32))
        XCTAssertEqual(keys.device, try Primitives.hkdf(ikm: stepUpSK, salt: [], info: Array("SKDevice".utf8), length: 32))
    }

    /// RFC 5869 test case 1.
    func testHKDFRFC5869Case1() {
        let okm = KeySchedule.derive([UInt8](repeating: 0x0B, count: 22), salt: Hex.decode("000102030405060708090a0b0c")!,
                                     info: Hex.decode("f0f1f2f3f4f5f6f7f8f9")!, count: 42)
        XCTAssertEqual(okm.hex, "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }
}
