import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
@testable import Push
import TrustModel
import TrustCore
import TrustSQLite
import TrustPostgres
import TrustBackends
import TrustHTTP
import XCTest

/// The relay's rules and faults, in process and over its APNs- and FCM-shaped HTTP doors.
final class PushRelayTests: XCTestCase {
    static let secret = "phone-secret-0123456789abcdef"

    final class Box: @unchecked Sendable {
        let lock = NSLock()
        var got: [[String: String]] = []
        var reachable = true
        var state: PushAppState = .background
        func add(_ m: [String: String]) { lock.lock(); got.append(m); lock.unlock() }
        var count: Int { lock.lock(); defer { lock.unlock() }; return got.count }
    }

    func relay() throws -> (PushRelay, ManualClock, Box) {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_772_438_400))
        let relay = PushRelay(clock: clock)
        let box = Box()
        try relay.register(token: "tok", device: PushDevice(isReachable: { box.reachable }, appState: { box.state }) { _, d in box.add(d); return true })
        return (relay, clock, box)
    }

    func testPayloadsOver4096BytesAndCollapseIdsOver64BytesAreRefused() async throws {
        let (relay, _, box) = try relay()
        let base = PushRules.compactJSON(["a": ""]).utf8.count
        try await relay.send(PushMessage(token: "tok", data: ["a": String(repeating: "x", count: 4096 - base)]))
        XCTAssertEqual(box.count, 1, "exactly 4096 bytes is delivered")
        do {
            try await relay.send(PushMessage(token: "tok", data: ["a": String(repeating: "x", count: 4097 - base)]))
            XCTFail("4097 bytes accepted")
        } catch {
            XCTAssertEqual(error, .payloadTooLarge(4097)); XCTAssertEqual(error.apns.status, 413); XCTAssertEqual(error.fcm.code, "INVALID_ARGUMENT")
        }
        try await relay.send(PushMessage(token: "tok", data: [:], collapseID: String(repeating: "c", count: 64)))
        do {
            try await relay.send(PushMessage(token: "tok", data: [:], collapseID: String(repeating: "c", count: 65)))
            XCTFail("a 65-byte collapse id accepted")
        } catch { XCTAssertEqual(error, .badCollapseID(65)); XCTAssertEqual(error.apns.reason, "BadCollapseId") }
    }

    func testTTLZeroIsNotStoredButAStoredMessageArrivesOnceReachable() async throws {
        let (relay, clock, box) = try relay()
        box.reachable = false
        try await relay.send(PushMessage(token: "tok", data: ["n": "ttl0"], timeToLive: 0))
        try await relay.send(PushMessage(token: "tok", data: ["n": "ttl60"], timeToLive: 60))
        try await relay.send(PushMessage(token: "tok", data: ["n": "ttl3600"], timeToLive: 3600))
        XCTAssertEqual(relay.pendingCount, 2, "the TTL-0 message was not stored")
        clock.advance(120)
        box.reachable = true
        await relay.deliverDue()
        XCTAssertEqual(box.got.map { $0["n"] }, ["ttl3600"], "the 60-second one expired on the way")
        XCTAssertEqual(relay.log.filter { $0.fate == .expired }.count, 2)
    }

    func testCollapseIdReplacesTheStoredMessage() async throws {
        let (relay, _, box) = try relay()
        box.reachable = false
        try await relay.send(PushMessage(token: "tok", data: ["n": "1"], collapseID: "keys"))
        try await relay.send(PushMessage(token: "tok", data: ["n": "2"], collapseID: "keys"))
        box.reachable = true
        await relay.deliverDue()
        XCTAssertEqual(box.got.map { $0["n"] }, ["2"])
    }

    func testDeadTokensAreGoneAndStayGone() async throws {
        let (relay, _, _) = try relay()
        relay.unregister(token: "tok")
        do { try await relay.send(PushMessage(token: "tok", data: [:])); XCTFail("sent to a dead token") } catch {
            guard case .unregistered = error else { return XCTFail("\(error)") }
            XCTAssertEqual(error.apns.status, 410); XCTAssertEqual(error.fcm.status, 404); XCTAssertEqual(error.fcm.code, "UNREGISTERED")
        }
        XCTAssertThrowsError(try relay.register(token: "tok", device: PushDevice { _, _ in true }), "a dead token is not reused")
        do { try await relay.send(PushMessage(token: "never-registered", data: [:])); XCTFail() } catch { XCTAssertEqual(error, .badDeviceToken) }
    }

    func testForceQuitDiscardsBackgroundPushesButNotAlerts() async throws {
        let (relay, _, box) = try relay()
        box.state = .forceQuit
        try await relay.send(PushMessage(token: "tok", data: ["n": "bg"], background: true))
        try await relay.send(PushMessage(token: "tok", data: ["n": "alert"], background: false))
        XCTAssertEqual(box.got.map { $0["n"] }, ["alert"])
        XCTAssertEqual(relay.log.filter { $0.fate == .discarded }.count, 1)
    }

    func testThrottlingDropAndDelay() async throws {
        let (relay, clock, box) = try relay()
        var f = PushFaults(); f.backgroundPerHour = 2
        relay.faults = f
        for i in 0..<5 { try await relay.send(PushMessage(token: "tok", data: ["n": "\(i)"])) }
        XCTAssertEqual(box.count, 2, "two per hour in the background")
        XCTAssertEqual(relay.log.filter { $0.fate == .throttled }.count, 3)
        clock.advance(3601)
        try await relay.send(PushMessage(token: "tok", data: ["n": "later"]))
        XCTAssertEqual(box.count, 3, "the budget renews")

        f = PushFaults(); f.dropPercent = 50
        relay.faults = f
        for i in 0..<200 { try await relay.send(PushMessage(token: "tok", data: ["n": "d\(i)"])) }
        let dropped = relay.log.filter { $0.fate == .dropped }.count
        XCTAssertTrue((60...140).contains(dropped), "about half of 200 dropped, got \(dropped)")
        XCTAssertEqual(box.count, 3 + 200 - dropped)

        f = PushFaults(); f.delay = 30
        relay.faults = f
        let before = box.count
        try await relay.send(PushMessage(token: "tok", data: ["n": "slow"]))
        XCTAssertEqual(box.count, before)
        XCTAssertEqual(relay.nextDue, clock.now().addingTimeInterval(30))
        clock.advance(30)
        await relay.deliverDue()
        XCTAssertEqual(box.count, before + 1)
    }

    // MARK: HTTP

    func testAPNsAndFCMShapesOverHTTP() async throws {
        let relay = PushRelay()
        let server = try await PushServer.start(relay: relay, wakeUp: WakeUpService(relay: relay))
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try server.inboxes.open("phone-1", secret: Self.secret)
            func post(_ path: String, _ body: String, _ headers: [(String, String)] = []) async throws -> (Int, String, HTTPClientResponse) {
                var r = HTTPClientRequest(url: server.baseURL + path)
                r.method = .POST
                for (k, v) in headers { r.headers.add(name: k, value: v) }
                r.body = .bytes(ByteBuffer(string: body))
                let response = try await http.execute(r, timeout: .seconds(30))
                let b = try await response.body.collect(upTo: 1 << 20)
                return (Int(response.status.code), String(buffer: b), response)
            }
            var (status, body, response) = try await post("/3/device/phone-1", #"{"aps":{"content-available":1},"k":"v"}"#)
            XCTAssertEqual(status, 200, body)
            XCTAssertNotNil(response.headers.first(name: "apns-id"))
            let big = #"{"aps":{},"k":""# + String(repeating: "x", count: 4100) + #""}"#
            (status, body, _) = try await post("/3/device/phone-1", big)
            XCTAssertEqual(status, 413); XCTAssertTrue(body.contains("PayloadTooLarge"), body)
            (status, body, _) = try await post("/3/device/phone-1", #"{"aps":{}}"#, [("apns-collapse-id", String(repeating: "c", count: 65))])
            XCTAssertEqual(status, 400); XCTAssertTrue(body.contains("BadCollapseId"), body)

            (status, body, _) = try await post("/v1/projects/demo/messages:send", #"{"message":{"token":"phone-1","data":{"k":"v"},"android":{"ttl":"0s"}}}"#)
            XCTAssertEqual(status, 200, body); XCTAssertTrue(body.contains("projects/demo/messages/"), body)
            (status, body, _) = try await post("/v1/projects/demo/messages:send", #"{"message":{"token":"phone-1","data":{"k":1}}}"#)
            XCTAssertEqual(status, 400); XCTAssertTrue(body.contains("INVALID_ARGUMENT") && body.contains("must be strings"), body)
            let bigFCM = #"{"message":{"token":"phone-1","data":{"k":""# + String(repeating: "x", count: 4100) + #""}}}"#
            (status, body, _) = try await post("/v1/projects/demo/messages:send", bigFCM)
            XCTAssertEqual(status, 400); XCTAssertTrue(body.contains("INVALID_ARGUMENT"), body)

            // The phone's inbox has the two accepted messages.
            // Only the phone that opened the inbox reads it (issue 22 §1.5).
            let stranger = try await http.execute(HTTPClientRequest(url: server.baseURL + "/lockbench/devices/phone-1/inbox?wait=0"), timeout: .seconds(30))
            XCTAssertEqual(stranger.status.code, 403)
            var owner = HTTPClientRequest(url: server.baseURL + "/lockbench/devices/phone-1/inbox?wait=1")
            owner.headers.add(name: "Authorization", value: "Bearer " + Self.secret)
            let inbox = try await http.execute(owner, timeout: .seconds(30))
            let inboxBody = String(buffer: try await inbox.body.collect(upTo: 1 << 20))
            XCTAssertEqual(inboxBody, #"[{"k":"v"},{"k":"v"}]"#)

            XCTAssertTrue(server.inboxes.close("phone-1", secret: Self.secret))
            (status, body, _) = try await post("/3/device/phone-1", #"{"aps":{}}"#)
            XCTAssertEqual(status, 410); XCTAssertTrue(body.contains("Unregistered") && body.contains("timestamp"), body)
            (status, body, _) = try await post("/v1/projects/demo/messages:send", #"{"message":{"token":"phone-1","data":{}}}"#)
            XCTAssertEqual(status, 404); XCTAssertTrue(body.contains("UNREGISTERED"), body)
        } catch {
            try? await http.shutdown(); await server.stop(); throw error
        }
        try await http.shutdown()
        await server.stop()
    }

    func testWakeUpRESTAnswers() async throws {
        let relay = PushRelay()
        let wakeUp = WakeUpService(relay: relay, maxNodeBytes: 64)
        try wakeUp.createApplication("demo")
        let server = try await PushServer.start(relay: relay, wakeUp: wakeUp)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        func call(_ method: HTTPMethod, _ path: String, _ body: String? = nil, secret: String? = PushRelayTests.secret) async throws -> (Int, String) {
            var r = HTTPClientRequest(url: server.baseURL + path)
            r.method = method
            if let secret { r.headers.add(name: "Authorization", value: "Bearer " + secret) }
            if let body { r.body = .bytes(ByteBuffer(string: body)) }
            let response = try await http.execute(r, timeout: .seconds(30))
            return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 20)))
        }
        do {
            try server.inboxes.open("dev1", secret: Self.secret)
            var (s, b) = try await call(.PUT, "/base/demo/.wakeup/doors/front?id=dev1&mode=value")
            XCTAssertEqual(s, 204, b)
            (s, b) = try await call(.PUT, "/base/demo/.wakeup/doors/front?id=dev1&mode=value")
            XCTAssertEqual(s, 204, "repeating refreshes")
            XCTAssertEqual(wakeUp.subscriptions(app: "demo").count, 1)
            (s, b) = try await call(.PUT, "/base/nope/.wakeup/a?id=dev1")
            XCTAssertEqual(s, 404); XCTAssertTrue(b.contains(#""status":"namespace_does_not_exist""#), b)
            (s, b) = try await call(.PUT, "/base/demo/.wakeup/" + String(repeating: "p", count: 2049) + "?id=dev1")
            XCTAssertEqual(s, 400); XCTAssertTrue(b.contains("2048"), b)
            (s, b) = try await call(.PUT, "/base/demo/.wakeup/a")
            XCTAssertEqual(s, 400); XCTAssertTrue(b.contains("id"), b)
            (s, b) = try await call(.PUT, "/base/demo/big", #"{"v":""# + String(repeating: "x", count: 100) + #""}"#)
            XCTAssertEqual(s, 204)
            (s, b) = try await call(.PUT, "/base/demo/.wakeup/big?id=dev1")
            XCTAssertEqual(s, 403); XCTAssertTrue(b.contains(#""status":"too_big""#), b)
            (s, b) = try await call(.PUT, "/base/demo/doors/front", #"{"state":"open"}"#)
            XCTAssertEqual(s, 204)
            var owner = HTTPClientRequest(url: server.baseURL + "/lockbench/devices/dev1/inbox?wait=1")
            owner.headers.add(name: "Authorization", value: "Bearer " + Self.secret)
            let inbox = try await http.execute(owner, timeout: .seconds(30))
            let got = String(buffer: try await inbox.body.collect(upTo: 1 << 20))
            XCTAssertTrue(got.contains(#""t":"value""#) && got.contains(#""sp":"/doors/front""#) && got.contains(#""s":"OK""#), got)
            (s, b) = try await call(.GET, "/base/demo/doors")
            XCTAssertEqual(b, #"{"front":{"state":"open"}}"#)
            // Someone else cannot remove dev1's subscription (issue 22 §1.5).
            (s, b) = try await call(.DELETE, "/base/demo/.wakeup/doors/front?id=dev1", secret: nil)
            XCTAssertEqual(s, 403, b)
            (s, b) = try await call(.DELETE, "/base/demo/.wakeup/doors/front?id=dev1", secret: "another-secret-0123456789")
            XCTAssertEqual(s, 403, b)
            (s, b) = try await call(.DELETE, "/base/demo/.wakeup/doors/front?id=dev1")
            XCTAssertEqual(s, 204)
            XCTAssertEqual(wakeUp.subscriptions(app: "demo").count, 0)
            try await wakeUp.setEnabled("demo", false)
            (s, b) = try await call(.PUT, "/base/demo/.wakeup/doors?id=dev1")
            XCTAssertEqual(s, 403); XCTAssertTrue(b.contains(#""status":"disabled""#), b)
            try await wakeUp.setEnabled("demo", true)
            try await wakeUp.setReadRule("demo", token: "", paths: [])
            (s, b) = try await call(.PUT, "/base/demo/.wakeup/doors?id=dev1")
            XCTAssertEqual(s, 403); XCTAssertTrue(b.contains(#""status":"permission_denied""#), b)
        } catch {
            try? await http.shutdown(); await server.stop(); throw error
        }
        try await http.shutdown()
        await server.stop()
    }

    /// `trust serve --push-relay`'s sender against the relay over HTTP: a delivered push answers the
    /// relay's id and lands in the inbox with its data (a token with `:` kept as it is in the
    /// path), a retired token is `unregistered` (410, so the notifier forgets it), a token the
    /// relay never saw `badDeviceToken`, an oversized payload `payloadTooLarge`, a relay that is not
    /// there a refusal naming it.
    func testTheAPNsHTTPSenderSpeaksToTheRelay() async throws {
        let relay = PushRelay()
        let server = try await PushServer.start(relay: relay, wakeUp: WakeUpService(relay: relay))
        do {
            try server.inboxes.open("tok:1", secret: Self.secret)
            let sender = APNsHTTPSender(baseURL: server.baseURL + "/")
            let id = try await sender.send(PushMessage(token: "tok:1", data: ["k": "v"], collapseID: "c1"))
            XCTAssertFalse(id.isEmpty)
            let got = await server.inboxes.collect("tok:1", wait: 5)
            XCTAssertEqual(got?.first?["k"], "v")
            XCTAssertTrue(relay.log.contains { $0.token == "tok:1" && $0.fate == .delivered && $0.data["k"] == "v" }, "\(relay.log)")

            do { _ = try await sender.send(PushMessage(token: "never-seen", data: ["k": "v"])); XCTFail("an unknown token was accepted") }
            catch { XCTAssertEqual(error, .badDeviceToken) }
            XCTAssertTrue(server.inboxes.close("tok:1", secret: Self.secret))
            do { _ = try await sender.send(PushMessage(token: "tok:1", data: ["k": "v"])); XCTFail("a retired token was accepted") }
            catch { guard case .unregistered = error else { return XCTFail("\(error)") } }
            try server.inboxes.open("tok:2", secret: Self.secret)
            do { _ = try await sender.send(PushMessage(token: "tok:2", data: ["k": String(repeating: "x", count: 5000)])); XCTFail("5,000 bytes were accepted") }
            catch { guard case .payloadTooLarge = error else { return XCTFail("\(error)") } }
        } catch {
            await server.stop(); throw error
        }
        await server.stop()
        let gone = APNsHTTPSender(baseURL: server.baseURL, timeout: .seconds(2))
        do { _ = try await gone.send(PushMessage(token: "tok:2", data: [:])); XCTFail("a stopped relay accepted a push") }
        catch { XCTAssertTrue(error.description.contains(server.baseURL), error.description) }
    }
}
