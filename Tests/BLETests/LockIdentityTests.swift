import BLE
import ByteCore
import Foundation
import XCTest

/// Addresses and the advertisement as values: static random addresses from a digest and from
/// text (each refusal), the service data decoded, the rotating tag's block and expiry.
final class AddressAndAdvertisementTests: XCTestCase {
    func testStaticRandomFromADigestSetsTheTopBitsAndAvoidsAllZerosAndOnes() {
        let a = BLEAddress.staticRandom(digest: [0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE])
        XCTAssertEqual(a.description, "D2:34:56:78:9A:BC/R")
        XCTAssertEqual(a.bytes, [0xBC, 0x9A, 0x78, 0x56, 0x34, 0xD2], "little-endian on the wire")
        XCTAssertEqual(BLEAddress.staticRandom(digest: [0, 0, 0, 0, 0, 0]).description, "C0:00:00:00:00:01/R")
        XCTAssertEqual(BLEAddress.staticRandom(digest: [0x3F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]).description, "FF:FF:FF:FF:FF:FE/R")
        XCTAssertEqual(BLEAddress.staticRandom(digest: [0xC0, 0, 0, 0, 0, 0]).description, "C0:00:00:00:00:01/R")
    }

    func testParsingAnAddressAndEachRefusal() throws {
        let a = try BLEAddress(staticRandom: "C3:12:34:56:78:9A")
        XCTAssertEqual(a, BLEAddress(type: 1, bytes: [0x9A, 0x78, 0x56, 0x34, 0x12, 0xC3]))
        XCTAssertEqual(try BLEAddress(staticRandom: "c3:12:34:56:78:9a/R"), a)
        XCTAssertEqual(try BLEAddress(staticRandom: a.description), a, "what the lock prints reads back")
        XCTAssertEqual(try BLEAddress(parsing: "00:1B:DC:07:32:A1/P"), BLEAddress(type: 0, bytes: [0xA1, 0x32, 0x07, 0xDC, 0x1B, 0x00]))

        func refusal(_ text: String) -> String {
            do { _ = try BLEAddress(staticRandom: text); return "accepted" } catch {
                XCTAssertEqual(error.code, .badAddress)
                return error.reason
            }
        }
        XCTAssertTrue(refusal("C3:12:34:56:78").contains("six hex bytes"))
        XCTAssertTrue(refusal("C3123456789A").contains("six hex bytes"))
        XCTAssertTrue(refusal("C3:12:34:56:78:ZZ").contains("six hex bytes"))
        XCTAssertTrue(refusal("C3:12:34:56:7:89A").contains("six hex bytes"))
        XCTAssertTrue(refusal("43:12:34:56:78:9A").contains("top two bits are 11"))
        XCTAssertTrue(refusal("C0:00:00:00:00:00").contains("all zeros or all ones"))
        XCTAssertTrue(refusal("FF:FF:FF:FF:FF:FF").contains("all zeros or all ones"))
        XCTAssertTrue(refusal("C3:12:34:56:78:9A/P").contains("not public"))
    }

    func testServiceDataDecodesAndTheTagCoversAddressAndExpiry() throws {
        var ad = AliroAdvertisement()
        ad.groupID = Array(0x10..<0x20)
        ad.subID = Array(0x30..<0x40)
        ad.txPower = -4
        let address = try BLEAddress(staticRandom: "C3:12:34:56:78:9A")
        var blocks: [[UInt8]] = []
        // Any block function: the tag is its first 7 bytes.
        ad.rotate(address: address, now: Date(timeIntervalSince1970: 1_795_000_100), window: 900) { block in
            blocks.append(block)
            return block.map { $0 ^ 0xA5 }
        }
        XCTAssertEqual(ad.expiry, [0x6A, 0xFD, 0x88, 0xB4], "end of the 900 s window: 1795000500")
        XCTAssertEqual(ad.expiryDate, Date(timeIntervalSince1970: 1_795_000_500))
        XCTAssertEqual(blocks, [[0, 0, 0, 0, 0, 0, 0xC3, 0x12, 0x34, 0x56, 0x78, 0x9A, 0x6A, 0xFD, 0x88, 0xB4]])
        XCTAssertEqual(ad.tag, Array(blocks[0].prefix(7)).map { $0 ^ 0xA5 })

        let data = ad.advertisingData
        XCTAssertEqual(data.count, 31)
        let decoded = try XCTUnwrap(AliroAdvertisement(advertisingData: data))
        XCTAssertEqual(decoded.groupID, Array(0x10..<0x18))
        XCTAssertEqual(decoded.subID, [0x30, 0x31])
        XCTAssertEqual(decoded.expiry, ad.expiry)
        XCTAssertEqual(decoded.tag, ad.tag)
        XCTAssertEqual(decoded.txPower, -4)
        // ALIRO_BLUETOOTH_LE_ADVERTISEMENT_VERSION = 0x00 (the reference phone leaves any other);
        // bit 6: BLE only.
        XCTAssertEqual(decoded.advertisingVersion, 0)
        XCTAssertEqual(ad.serviceData[0], 0x40)
        XCTAssertTrue(decoded.bleOnly)
        XCTAssertFalse(decoded.bleUWB)
        XCTAssertNil(AliroAdvertisement(serviceData: Array(ad.serviceData.prefix(23))), "short service data")
        XCTAssertNil(AliroAdvertisement(advertisingData: [2, 1, 6]), "no FFF2 service data")
    }

    func testExpiryIsTheEndOfTheWindowAndClamped() {
        XCTAssertEqual(AliroAdvertisement.expiry(at: Date(timeIntervalSince1970: 0), window: 60), [0, 0, 0, 60])
        XCTAssertEqual(AliroAdvertisement.expiry(at: Date(timeIntervalSince1970: 59.9), window: 60), [0, 0, 0, 60])
        XCTAssertEqual(AliroAdvertisement.expiry(at: Date(timeIntervalSince1970: 60), window: 60), [0, 0, 0, 120])
        XCTAssertEqual(AliroAdvertisement.expiry(at: Date(timeIntervalSince1970: 1e12), window: 60), [0xFF, 0xFF, 0xFF, 0xFF])
        XCTAssertEqual(AliroAdvertisement.expiry(at: Date(timeIntervalSince1970: -5), window: 60), [0, 0, 0, 0])
        XCTAssertEqual(AliroAdvertisement.expiry(at: Date(timeIntervalSince1970: 10), window: .nan), [0, 0, 0, 11])
    }

    func testTargetsMatchByAddressOrByReaderPrefixes() throws {
        var ad = AliroAdvertisement()
        ad.groupID = Array(0x10..<0x20)
        ad.subID = Array(0x30..<0x40)
        let address = try BLEAddress(staticRandom: "C3:12:34:56:78:9A")
        let report = AdvertisingReport(eventType: 0, address: address, data: ad.advertisingData, rssi: -40)
        XCTAssertTrue(LockTarget.any.matches(report))
        XCTAssertTrue(LockTarget.address(address).matches(report))
        XCTAssertFalse(LockTarget.address(try BLEAddress(staticRandom: "C3:12:34:56:78:9B")).matches(report))
        XCTAssertTrue(LockTarget.readers([.init(groupID: Array(0x10..<0x20))]).matches(report))
        XCTAssertTrue(LockTarget.readers([.init(groupID: Array(0x10..<0x20), subID: Array(0x30..<0x40))]).matches(report))
        XCTAssertFalse(LockTarget.readers([.init(groupID: Array(0x10..<0x20), subID: Array(0x31..<0x41))]).matches(report))
        XCTAssertFalse(LockTarget.readers([.init(groupID: Array(0x11..<0x21))]).matches(report))
        XCTAssertFalse(LockTarget.address(address).matches(AdvertisingReport(eventType: 0, address: address, data: [2, 1, 6], rssi: 0)))
    }
}

/// Two locks and two phones on one link (four Bumble controllers): each lock has its own address,
/// and each phone lands on the lock it targets — by address, or by the reader ids in the
/// advertisement. With one constant address both locks answered and phones hit the wrong one.
final class TwoLocksOneLinkTests: XCTestCase {
    func testEachPhoneReachesTheLockItTargets() throws {
        let controllers = try bumbleControllers(count: 4)
        let decisionsA = Decisions(), decisionsB = Decisions()
        let addressA = try BLEAddress(staticRandom: "C1:AA:AA:AA:AA:01"), addressB = try BLEAddress(staticRandom: "C2:BB:BB:BB:BB:02")
        let lockA = try startLock(on: controllers.spec(0), configure: {
            $0.address = addressA
            $0.advertisement.groupID = [UInt8](repeating: 0xA1, count: 16)
            $0.advertisement.subID = [UInt8](repeating: 0xA2, count: 16)
        }, transaction: EchoFlow.lockTransaction { decisionsA.add($0) })
        let lockB = try startLock(on: controllers.spec(1), configure: {
            $0.address = addressB
            $0.advertisement.groupID = [UInt8](repeating: 0xB1, count: 16)
            $0.advertisement.subID = [UInt8](repeating: 0xB2, count: 16)
        }, transaction: EchoFlow.lockTransaction { decisionsB.add($0) })
        XCTAssertEqual(lockA.host.ownAddress, addressA)
        XCTAssertEqual(lockB.host.ownAddress, addressB)

        let byAddress = try startPhone(on: controllers.spec(2), configure: { $0.target = .address(addressB) })
        let byReader = try startPhone(on: controllers.spec(3), configure: {
            $0.target = .readers([.init(groupID: [UInt8](repeating: 0xA1, count: 16), subID: [UInt8](repeating: 0xA2, count: 16))])
        })
        // Both phones at once, then again: every transaction on its own lock.
        for _ in 0..<2 {
            final class Box: @unchecked Sendable { var outcome: Result<BLEPhoneOutcome, Error>? }
            let first = Box()
            let group = DispatchGroup()
            group.enter()
            DispatchQueue.global().async {
                do { first.outcome = .success(try byAddress.unlock(with: EchoCredential())) } catch { first.outcome = .failure(error) }
                group.leave()
            }
            let second = try byReader.unlock(with: EchoCredential())
            group.wait()
            let firstOutcome = try XCTUnwrap(first.outcome).get()
            XCTAssertEqual(firstOutcome.lock.bytes, addressB.bytes)
            XCTAssertEqual(firstOutcome.completion, EchoFlow.granted)
            XCTAssertEqual(second.lock.bytes, addressA.bytes)
            XCTAssertEqual(second.completion, EchoFlow.granted)
        }
        XCTAssertEqual(decisionsA.all, [true, true])
        XCTAssertEqual(decisionsB.all, [true, true])

        // A target nobody advertises is "not found", naming what was looked for.
        byReader.stop()
        let lost = try startPhone(on: controllers.spec(3), configure: {
            $0.target = .readers([.init(groupID: [UInt8](repeating: 0xC1, count: 16))])
            $0.scanTimeout = 1
        })
        XCTAssertThrowsError(try lost.connectToLock()) {
            XCTAssertEqual(($0 as? BLEError)?.code, .notFound)
            XCTAssertTrue("\($0)".contains("a lock of reader c1c1c1c1c1c1c1c1"), "\($0)")
        }
    }
}

/// The idle rules: a central that connects and never opens the channel is dropped after
/// `idleTimeout`; one that opens a channel and goes quiet after `transactionTimeout`; the next
/// phone then gets through.
final class IdleLinkTests: XCTestCase {
    func testCentralThatOpensNoChannelIsDroppedAndTheNextPhoneSucceeds() throws {
        let controllers = try bumbleControllers()
        let events = DropLog()
        let lock = try startLock(on: controllers.spec(0), configure: { $0.idleTimeout = 1.5 },
                                 onEvent: { events.add($0) })
        let phone = try startPhone(on: controllers.spec(1))

        // A GATT browser: connects, reads the services, never opens the channel.
        let idle = try phone.connectToLock()
        try idle.discover()
        let t0 = Date()
        XCTAssertTrue(idle.connection.waitUntilDisconnected(timeout: 10), "the lock kept an idle central")
        let held = Date().timeIntervalSince(t0)
        XCTAssertGreaterThan(held, 1.0, "dropped before the idle time")
        XCTAssertEqual(idle.connection.disconnectReason, 0x13)
        XCTAssertTrue(events.drops.contains { $0.contains("no L2CAP channel opened within 1.5 s") }, "\(events.drops)")
        XCTAssertTrue(waitUntil(5) { lock.host.connectionCount == 0 })

        // The next phone gets through.
        XCTAssertEqual(try phone.unlock(with: EchoCredential()).completion, EchoFlow.granted)
        XCTAssertEqual(events.drops.count, 1, "a phone that opens its channel is not dropped")
    }

    func testChannelWithNoTrafficIsClosedAfterTheTransactionTimeout() throws {
        let controllers = try bumbleControllers()
        let events = DropLog()
        let lock = try startLock(on: controllers.spec(0), configure: { $0.transactionTimeout = 1.5; $0.idleTimeout = 30; $0.echoPSM = AliroBLE.echoPSM },
                                 onEvent: { events.add($0) })
        let phone = try startPhone(on: controllers.spec(1))

        // A channel on the echo PSM (the lock waits for the phone there) and then silence.
        let quiet = try phone.connectToLock()
        try quiet.discover()
        let channel = try quiet.openChannel(psm: AliroBLE.echoPSM)
        try channel.send([1, 2, 3])
        XCTAssertEqual(try channel.receive(timeout: 5), [1, 2, 3])
        XCTAssertTrue(quiet.connection.waitUntilDisconnected(timeout: 10), "the lock kept a silent channel")
        XCTAssertTrue(events.drops.contains { $0.contains("for 1.5 s") && $0.contains("PSM 0x81") }, "\(events.drops)")
        XCTAssertTrue(waitUntil(5) { lock.host.connectionCount == 0 })
        XCTAssertEqual(try phone.unlock(with: EchoCredential()).completion, EchoFlow.granted)
    }

    private func waitUntil(_ seconds: TimeInterval, _ condition: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline { if condition() { return true }; Thread.sleep(forTimeInterval: 0.05) }
        return condition()
    }
}

final class DropLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ e: BLELockEvent) { if case .dropped(_, let why) = e { lock.withLock { list.append(why) } } }
    var drops: [String] { lock.withLock { list } }
}

/// A stop is not a controller loss, and takes the lock off the air.
final class CleanStopTests: XCTestCase {
    func testStopReportsNoControllerLossAndDisconnectsPhones() throws {
        let controllers = try bumbleControllers()
        let events = EventLog()
        let lock = try startLock(on: controllers.spec(0), onEvent: { events.add($0) })
        let phone = try startPhone(on: controllers.spec(1))
        let session = try phone.connectToLock()
        lock.stop()
        XCTAssertTrue(session.connection.waitUntilDisconnected(timeout: 5), "a stopping lock leaves its phones connected")
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(events.lost, 0, "a stop reported a controller loss")
    }
}

/// The rotating tag on the air: filled at start from the lock's clock, renewed when its window
/// ends (and when the clock is set back), as a scanner hears it.
final class TagRotationTests: XCTestCase {
    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var t = Date(timeIntervalSince1970: 1_795_000_100)
        var now: Date { lock.withLock { t } }
        func set(_ d: Date) { lock.withLock { t = d } }
    }

    func testTagAndExpiryAreFilledAndRenewedAtTheEndOfTheWindow() throws {
        let controllers = try bumbleControllers()
        let clock = Clock()
        let address = try BLEAddress(staticRandom: "C5:01:02:03:04:05")
        let lock = try startLock(on: controllers.spec(0), configure: {
            $0.address = address
            $0.tagWindow = 60
            $0.now = { clock.now }
            // A stand-in block function that lets expiry reach the tag's 7 bytes (AES is tested end to end).
            $0.tagCipher = { block in block.reversed().map { $0 ^ 0x5A } }
        })
        let scanner = try startPhone(on: controllers.spec(1))
        func heard(expiry: [UInt8]) throws -> AliroAdvertisement {
            let report = try scanner.host.scan(timeout: 10) {
                $0.address.bytes == address.bytes && AliroAdvertisement(advertisingData: $0.data)?.expiry == expiry
            }
            return try XCTUnwrap(AliroAdvertisement(advertisingData: report.data))
        }
        let first = try heard(expiry: AliroAdvertisement.expiry(at: clock.now, window: 60))
        XCTAssertEqual(first.expiryDate, Date(timeIntervalSince1970: 1_795_000_140))
        XCTAssertEqual(first.tag, Array(AliroAdvertisement.tagBlock(address: address, expiry: first.expiry).reversed().prefix(7)).map { $0 ^ 0x5A })
        XCTAssertEqual(lock.advertisement.serviceData, first.serviceData)

        clock.set(Date(timeIntervalSince1970: 1_795_000_141))
        let second = try heard(expiry: AliroAdvertisement.expiry(at: clock.now, window: 60))
        XCTAssertEqual(second.expiryDate, Date(timeIntervalSince1970: 1_795_000_200))
        XCTAssertNotEqual(second.tag, first.tag)

        clock.set(Date(timeIntervalSince1970: 1_795_000_000))
        let back = try heard(expiry: AliroAdvertisement.expiry(at: clock.now, window: 60))
        XCTAssertEqual(back.expiryDate, Date(timeIntervalSince1970: 1_795_000_020))
    }
}
