import ByteCore
import Foundation
import XCTest
@testable import AccessProtocol

final class FastCacheTests: XCTestCase {
    func testLeastRecentlyUsedIsEvicted() {
        var cache = FastCache(capacity: 2)
        cache.store([1], for: [0xA])
        cache.store([2], for: [0xB])
        XCTAssertEqual(cache.lookup([0xA]), [1])  // A is now fresher than B
        cache.store([3], for: [0xC])
        XCTAssertEqual(cache.count, 2)
        XCTAssertNil(cache.lookup([0xB]))
        XCTAssertEqual(cache.lookup([0xA]), [1])
        XCTAssertEqual(cache.lookup([0xC]), [3])
        XCTAssertEqual(cache.all.map(\.key), [[0xC], [0xA]])
        cache.store([4], for: [0xA])
        XCTAssertEqual(cache.lookup([0xA]), [4])
        cache.remove([0xA])
        XCTAssertEqual(cache.count, 1)
    }

    func testCodableRoundTrip() throws {
        var cache = FastCache(capacity: 3)
        cache.store([1, 2, 3], for: [9, 9])
        let data = try JSONEncoder().encode(cache)
        var back = try JSONDecoder().decode(FastCache.self, from: data)
        XCTAssertEqual(back, cache)
        XCTAssertEqual(back.lookup([9, 9]), [1, 2, 3])
    }

    func testReplayGuardIsBounded() {
        var g = ReplayGuard(capacity: 2)
        g.insert([1]); g.insert([2]); g.insert([3])
        XCTAssertFalse(g.contains([1]))
        XCTAssertTrue(g.contains([2]))
        XCTAssertTrue(g.contains([3]))
    }
}

final class ReplayGuardCodableTests: XCTestCase {
    func testCodableKeepsOrderAndLookups() throws {
        var g = ReplayGuard(capacity: 3)
        for i in 0..<5 { g.insert([UInt8(i)]) }
        let back = try JSONDecoder().decode(ReplayGuard.self, from: try JSONEncoder().encode(g))
        XCTAssertEqual(back, g)
        XCTAssertTrue(back.contains([4]))
        XCTAssertFalse(back.contains([1]))
        XCTAssertEqual(back.seen, ["02", "03", "04"])
    }
}
