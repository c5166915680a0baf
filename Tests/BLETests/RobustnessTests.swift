@testable import BLE
import ByteCore
import XCTest

/// Every parser that takes bytes from a radio, fed random bytes: errors or generic cases,
/// never a crash (a seeded generator, so failures reproduce).
final class RobustnessTests: XCTestCase {
    func testRandomBytesNeverCrashParsers() {
        var rng = SplitMix64(seed: 2026)
        var server = ATTServer(database: GATTDatabase(services: GATTDatabase.standardServices(deviceName: "x") + [AliroBLE.service(psm: 0x80)]))
        for _ in 0..<20_000 {
            let n = Int.random(in: 0...40, using: &rng)
            var bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if n > 0, Bool.random(using: &rng) { bytes[0] = [0x3E, 0x0E, 0x0F, 0x05, 0x13][Int.random(in: 0..<5, using: &rng)] }
            if n > 1, Bool.random(using: &rng) { bytes[1] = UInt8(n - 2) }
            _ = try? HCIEvent(parsing: bytes)
            _ = try? HCICommand(parsing: bytes)
            _ = try? ACLPacket(parsing: bytes)
            _ = try? SignalingCommand.decodeAll(bytes)
            _ = try? AliroFrame(parsing: bytes)
            _ = server.handle(bytes)
            var r = L2CAPReassembler()
            _ = try? r.feed(ACLPacket(handle: 1, boundary: .firstFlushable, data: bytes))
            var d = H4Decoder()
            d.feed(bytes)
            while (try? d.next()) ?? nil != nil {}
            var ch = CreditChannelState(localCID: 0x40, remoteCID: 0x40, localMTU: 64, localMPS: 23, initialReceiveCredits: 2,
                                        remoteMTU: 64, remoteMPS: 23, initialSendCredits: 2)
            _ = try? ch.receive(bytes)
            _ = AdvertisingData.parse(bytes)
        }
    }
}
