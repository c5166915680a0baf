import Foundation
@testable import Push
import TrustModel
import TrustCore
import TrustSQLite
import TrustPostgres
import TrustBackends
import TrustHTTP
import XCTest

/// The mobile wake-up tutorial's rules, each at its boundary.
final class WakeUpTests: XCTestCase {
    let app = "lockbench"
    let sp = "/doors/front"

    /// A `value` payload of exactly `n` bytes (a node {"a": "xxx…"}).
    func valuePayload(bytes n: Int) -> [String: String] {
        let base = WakeUpPayload.size(["t": "value", "app": app, "sp": sp, "s": "OK", "d": WakeUpValue.object(["a": .string("")]).encoded()])
        return WakeUpPayload.value(app: app, sp: sp, node: .object(["a": .string(String(repeating: "x", count: n - base))]))
    }

    func testValueModeBelow4064CarriesTheDataAndFrom4064IsTooBigWithoutD() {
        for n in [4063, 4064, 4093, 4094, 4096] {
            let p = valuePayload(bytes: n)
            if n < 4064 {
                XCTAssertEqual(p["s"], "OK", "\(n)")
                XCTAssertNotNil(p["d"], "\(n)")
                XCTAssertEqual(WakeUpPayload.size(p), n, "the whole payload is \(n) bytes")
            } else {
                XCTAssertEqual(p["s"], "TooBig", "\(n)")
                XCTAssertNil(p["d"], "\(n): d is removed")
                XCTAssertEqual(p["t"], "value"); XCTAssertEqual(p["app"], app); XCTAssertEqual(p["sp"], sp)
            }
            XCTAssertLessThanOrEqual(WakeUpPayload.size(p), WakeUpRules.maxPayloadBytes)
        }
    }

    func testTheTutorialsExamplePayloadIs114Bytes() {
        let p = ["s": "OK", "t": "value", "app": "toto", "sp": "/some/webcom/path", "d": #"{"a":"WGj2WtQWVEjQGhQqb7r678xW3PwWmB4Z3zj"}"#]
        XCTAssertEqual(WakeUpPayload.size(p), 114)
    }

    /// A `childEvent` payload of exactly `n` bytes: one child added.
    func childPayload(bytes n: Int) -> [String: String] {
        func full(_ l: Int) -> Int {
            WakeUpPayload.size(["t": "childEvent", "app": app, "sp": sp, "s": "OK", "removed": "[]", "changed": "{}",
                                "added": WakeUpValue.object(["a": .string(String(repeating: "x", count: l))]).encoded()])
        }
        return WakeUpPayload.childEvent(app: app, sp: sp, old: nil, new: .object(["a": .string(String(repeating: "x", count: n - full(0)))]))
    }

    func testChildEventFrom4064BecomesOnlyKeysWhenThatFits() {
        for n in [4063, 4064, 4093, 4094, 4096] {
            let p = childPayload(bytes: n)
            if n < 4064 {
                XCTAssertEqual(p["s"], "OK", "\(n)")
                XCTAssertEqual(WakeUpPayload.size(p), n)
                XCTAssertTrue(p["added"]!.hasPrefix(#"{"a":"xx"#))
            } else {
                XCTAssertEqual(p["s"], "OnlyKeys", "\(n)")
                XCTAssertEqual(p["added"], #"{"a":true}"#, "keys mapped to true")
                XCTAssertEqual(p["removed"], "[]"); XCTAssertEqual(p["changed"], "{}")
            }
            XCTAssertLessThanOrEqual(WakeUpPayload.size(p), WakeUpRules.maxPayloadBytes)
        }
    }

    func testChildEventWhoseKeysAloneReach4064IsTooBigWithEmptyFields() {
        var children = [String: WakeUpValue]()
        for i in 0..<400 { children[String(format: "key%05d", i)] = .number(Double(i)) }
        let p = WakeUpPayload.childEvent(app: app, sp: sp, old: nil, new: .object(children))
        XCTAssertEqual(p["s"], "TooBig")
        XCTAssertEqual(p["added"], "{}"); XCTAssertEqual(p["removed"], "[]"); XCTAssertEqual(p["changed"], "{}")
        XCTAssertLessThanOrEqual(WakeUpPayload.size(p), WakeUpRules.maxPayloadBytes)
    }

    func testChildEventNamesAddedRemovedAndChangedChildren() {
        let old: WakeUpValue = .object(["a": .number(1), "b": .number(2), "c": .number(3)])
        let new: WakeUpValue = .object(["a": .number(1), "b": .number(20), "d": .string("new")])
        let p = WakeUpPayload.childEvent(app: app, sp: sp, old: old, new: new)
        XCTAssertEqual(p["added"], #"{"d":"new"}"#)
        XCTAssertEqual(p["removed"], #"["c"]"#)
        XCTAssertEqual(p["changed"], #"{"b":20}"#)
        XCTAssertEqual(p["s"], "OK")
    }

    func testPathsOver2048BytesAreRefused() throws {
        XCTAssertNoThrow(try WakeUpPath(parsing: "/" + String(repeating: "p", count: 2047)))
        XCTAssertThrowsError(try WakeUpPath(parsing: "/" + String(repeating: "p", count: 2048))) { e in
            XCTAssertEqual((e as? WakeUpError)?.code, .pathTooLong)
        }
        XCTAssertThrowsError(try WakeUpPath(parsing: "/a/.wakeup")) { XCTAssertEqual(($0 as? WakeUpError)?.code, .badRequest) }
        XCTAssertThrowsError(try WakeUpPath(parsing: "/a\"b")) { XCTAssertEqual(($0 as? WakeUpError)?.code, .badRequest) }
    }

    func testModes() throws {
        XCTAssertEqual(try WakeUpMode(parsing: nil), .noData)
        XCTAssertEqual(try WakeUpMode(parsing: "null"), .noData)
        XCTAssertEqual(try WakeUpMode(parsing: "childEvent"), .childEvent)
        XCTAssertThrowsError(try WakeUpMode(parsing: "everything"))
    }

    // MARK: the service

    final class Inbox: @unchecked Sendable {
        let lock = NSLock()
        var messages: [[String: String]] = []
        func add(_ m: [String: String]) { lock.lock(); messages.append(m); lock.unlock() }
        var all: [[String: String]] { lock.lock(); defer { lock.unlock() }; return messages }
    }

    func service(lifetime: TimeInterval = 3600, maxNodeBytes: Int = 1 << 20) throws -> (WakeUpService, ManualClock, Inbox) {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_772_438_400))
        let relay = PushRelay(clock: clock)
        let inbox = Inbox()
        for device in ["dev1", "dev2"] {
            try relay.register(token: device, device: PushDevice { _, data in inbox.add(data); return true })
        }
        let s = WakeUpService(relay: relay, lifetime: lifetime, maxNodeBytes: maxNodeBytes)
        try s.createApplication(app)
        return (s, clock, inbox)
    }

    func testASubscriptionCoversChildrenAndResubscribingTheSameTupleIsIdempotent() async throws {
        let (s, _, inbox) = try service()
        let path = try WakeUpPath(parsing: "/doors")
        try s.subscribe(app: app, path: path, device: "dev1", token: nil, mode: .noData)
        try s.subscribe(app: app, path: path, device: "dev1", token: nil, mode: .value)
        XCTAssertEqual(s.subscriptions(app: app).count, 1, "(app, path, device id) is one subscription")
        XCTAssertEqual(s.subscriptions(app: app).first?.mode, .value, "the repeat replaces the mode")
        try await s.write(app: app, path: try WakeUpPath(parsing: "/doors/front/state"), value: .string("locked"))
        XCTAssertEqual(inbox.all.count, 1)
        XCTAssertEqual(inbox.all.first?["t"], "value")
        XCTAssertEqual(inbox.all.first?["sp"], "/doors")
        XCTAssertEqual(inbox.all.first?["d"], #"{"front":{"state":"locked"}}"#)
        try await s.write(app: app, path: try WakeUpPath(parsing: "/elsewhere"), value: .number(1))
        XCTAssertEqual(inbox.all.count, 1, "a write outside the path wakes nobody")
    }

    func testEachRefusal() async throws {
        let (s, _, _) = try service(maxNodeBytes: 100)
        let path = try WakeUpPath(parsing: "/a")
        XCTAssertThrowsError(try s.subscribe(app: "nope", path: path, device: "dev1", token: nil, mode: .noData)) {
            XCTAssertEqual(($0 as? WakeUpError)?.code, .namespaceDoesNotExist); XCTAssertEqual(($0 as? WakeUpError)?.code.httpStatus, 404)
        }
        try await s.setReadRule(app, token: "", paths: [try WakeUpPath(parsing: "/public")])
        XCTAssertThrowsError(try s.subscribe(app: app, path: path, device: "dev1", token: nil, mode: .noData)) {
            XCTAssertEqual(($0 as? WakeUpError)?.code, .permissionDenied); XCTAssertEqual(($0 as? WakeUpError)?.code.httpStatus, 403)
        }
        try await s.setReadRule(app, token: "alice-token", paths: [path])
        XCTAssertNoThrow(try s.subscribe(app: app, path: path, device: "dev1", token: "alice-token", mode: .noData))
        XCTAssertThrowsError(try s.unsubscribe(app: app, path: path, device: "dev1", token: "mallory")) {
            XCTAssertEqual(($0 as? WakeUpError)?.code, .permissionDenied)
        }
        try await s.write(app: app, path: try WakeUpPath(parsing: "/public/big"), value: .string(String(repeating: "x", count: 200)))
        XCTAssertThrowsError(try s.subscribe(app: app, path: try WakeUpPath(parsing: "/public"), device: "dev2", token: nil, mode: .value)) {
            XCTAssertEqual(($0 as? WakeUpError)?.code, .tooBig); XCTAssertEqual(($0 as? WakeUpError)?.code.httpStatus, 403)
        }
        try await s.setEnabled(app, false)
        XCTAssertThrowsError(try s.subscribe(app: app, path: path, device: "dev1", token: "alice-token", mode: .noData)) {
            XCTAssertEqual(($0 as? WakeUpError)?.code, .disabled); XCTAssertEqual(($0 as? WakeUpError)?.code.httpStatus, 403)
        }
    }

    func testExpiryRevokesWithExpiredAndRepeatingRefreshes() async throws {
        let (s, clock, inbox) = try service(lifetime: 3600)
        let path = try WakeUpPath(parsing: "/a")
        try s.subscribe(app: app, path: path, device: "dev1", token: nil, mode: .noData)
        try s.subscribe(app: app, path: path, device: "dev2", token: nil, mode: .noData)
        clock.advance(3000)
        try s.subscribe(app: app, path: path, device: "dev1", token: nil, mode: .noData)   // refresh
        clock.advance(700)
        await s.expire()
        XCTAssertEqual(inbox.all, [["t": "revoke", "r": "expired", "app": app, "sp": "/a"]], "only dev2's expired")
        XCTAssertEqual(s.subscriptions(app: app).map(\.key.device), ["dev1"])
    }

    func testEveryRevocationReason() async throws {
        let (s, _, inbox) = try service(maxNodeBytes: 100)
        let a = try WakeUpPath(parsing: "/a"), b = try WakeUpPath(parsing: "/b")
        try s.subscribe(app: app, path: a, device: "dev1", token: nil, mode: .value)
        try await s.write(app: app, path: a, value: .string(String(repeating: "x", count: 200)))
        XCTAssertEqual(inbox.all.last?["r"], "too_big")
        try s.subscribe(app: app, path: b, device: "dev1", token: nil, mode: .value)
        try await s.setReadRule(app, token: "", paths: [a])
        XCTAssertEqual(inbox.all.last?["r"], "permission_denied")
        try await s.setReadRule(app, token: "", paths: [WakeUpPath(segments: [])])
        try s.subscribe(app: app, path: b, device: "dev1", token: nil, mode: .value)
        try await s.setEnabled(app, false)
        XCTAssertEqual(inbox.all.last?["r"], "disabled")
        try await s.setEnabled(app, true)
        try s.subscribe(app: app, path: b, device: "dev1", token: nil, mode: .value)
        await s.deleteApplication(app)
        XCTAssertEqual(inbox.all.last?["r"], "namespace_does_not_exist")
        XCTAssertEqual(Set(inbox.all.compactMap { $0["r"] }), Set(WakeUpRevocation.allCases.map(\.rawValue)).subtracting(["expired"]))
        XCTAssertTrue(inbox.all.filter { $0["t"] == "revoke" }.allSatisfy { $0["app"] == app && $0["sp"] != nil })
    }

    func testDeviceIdRefreshSubscribesTheNewIdThenUnsubscribesTheOld() throws {
        let (s, _, _) = try service()
        try s.subscribe(app: app, path: try WakeUpPath(parsing: "/a"), device: "dev1", token: nil, mode: .childEvent)
        try s.refreshDevice(app: app, from: "dev1", to: "dev2")
        XCTAssertEqual(s.subscriptions(app: app).map(\.key.device), ["dev2"])
        XCTAssertEqual(s.subscriptions(app: app).first?.mode, .childEvent)
    }
}

/// Issue 22 §1.5 (memory): an application's data, and all applications' together, are bounded; a
/// write past either bound is refused `storage_full` (HTTP 507) and changes nothing; deleting data
/// makes room again.
final class WakeUpDataBoundTests: XCTestCase {
    func testDataWritesAreBoundedPerApplicationAndInTotal() async throws {
        let relay = PushRelay(clock: ManualClock(Date(timeIntervalSince1970: 1_772_438_400)))
        let s = WakeUpService(relay: relay, maxAppDataBytes: 1_000, maxTotalDataBytes: 1_500)
        try s.createApplication("a"); try s.createApplication("b")
        func blob(_ n: Int) throws -> WakeUpValue { try WakeUpValue(parsing: "\"" + String(repeating: "x", count: n) + "\"") }
        func refused(_ app: String, _ path: String, _ n: Int, mentioning text: String) async throws {
            let value = try blob(n), at = try WakeUpPath(parsing: path)
            do { try await s.write(app: app, path: at, value: value); XCTFail("\(app)\(path) \(n) bytes accepted") } catch {
                XCTAssertEqual(error.code, .storageFull); XCTAssertEqual(error.code.httpStatus, 507)
                XCTAssertTrue(error.message.contains(text), error.message)
            }
        }
        try await s.write(app: "a", path: try WakeUpPath(parsing: "/one"), value: try blob(600))
        try await refused("a", "/two", 600, mentioning: "a holds")
        XCTAssertNil(try s.read(app: "a", path: try WakeUpPath(parsing: "/two"), token: nil), "a refused write changes nothing")
        try await s.write(app: "b", path: try WakeUpPath(parsing: "/one"), value: try blob(600))
        try await refused("b", "/two", 300, mentioning: "the relay holds")
        // Replacing a node counts the difference; deleting it frees its bytes.
        try await s.write(app: "a", path: try WakeUpPath(parsing: "/one"), value: try blob(300))
        try await s.write(app: "a", path: try WakeUpPath(parsing: "/one"), value: nil)
        try await s.write(app: "a", path: try WakeUpPath(parsing: "/two"), value: try blob(800))
    }
}
