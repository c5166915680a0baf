import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
@testable import Push
import TrustModel
import XCTest

/// The relay authenticates senders as APNs does (issue 22 §1.5): a provider token signed with the
/// key the relay is configured with, verified on every push and data write; and the phones'
/// inboxes are bounded in bytes, per inbox and in total, with a refusal naming the bound.
final class ProviderTokenTests: XCTestCase {
    static let secret = "phone-secret-0123456789abcdef"
    static let start = Date(timeIntervalSince1970: 1_772_438_400)

    struct Answer { var status: Int; var body: String }

    func call(_ http: HTTPClient, _ method: HTTPMethod, _ url: String, _ body: String? = nil, bearer: String? = nil) async throws -> Answer {
        var r = HTTPClientRequest(url: url)
        r.method = method
        if let bearer { r.headers.add(name: "Authorization", value: "bearer " + bearer) }
        if let body { r.body = .bytes(ByteBuffer(string: body)) }
        let response = try await http.execute(r, timeout: .seconds(30))
        return Answer(status: Int(response.status.code), body: String(buffer: try await response.body.collect(upTo: 1 << 20)))
    }

    /// A token with the given header and claims, signed by `key` (for the malformed ones).
    func token(header: String, claims: String, key: P256.Signing.PrivateKey) throws -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        return input + "." + Base64URL.encode(Array(try key.signature(for: Data(input.utf8)).rawRepresentation))
    }

    func testEveryRefusalOfAProviderToken() throws {
        let key = P256.Signing.PrivateKey(), other = P256.Signing.PrivateKey()
        let kid = ProviderToken.keyID(key.publicKey), now = Self.start
        func refused(_ authorization: String?, _ expected: PushRefusal, _ why: String) {
            do throws(PushRefusal) {
                try ProviderToken.verify(authorization, key: key.publicKey, now: now)
                XCTFail("accepted: \(why)")
            } catch {
                switch (error, expected) {
                case (.missingProviderToken, .missingProviderToken), (.expiredProviderToken, .expiredProviderToken): break
                case (.invalidProviderToken(let m), .invalidProviderToken(let part)): XCTAssertTrue(m.contains(part), "\(why): \(m)")
                default: XCTFail("\(why): \(error)")
                }
            }
        }
        let good = try ProviderToken.sign(key: key, issuer: "team", issuedAt: now)
        XCTAssertNoThrow(try ProviderToken.verify("bearer " + good, key: key.publicKey, now: now))
        XCTAssertNoThrow(try ProviderToken.verify("Bearer " + good, key: key.publicKey, now: now.addingTimeInterval(3599)))
        refused(nil, .missingProviderToken, "no header")
        refused("Basic abc", .missingProviderToken, "not a bearer token")
        refused("bearer " + String(repeating: "a", count: 1025), .invalidProviderToken("1025 bytes"), "too long")
        refused("bearer a.b", .invalidProviderToken("three base64url parts"), "two parts")
        refused("bearer " + (try ProviderToken.sign(key: other, issuer: "team", issuedAt: now)), .invalidProviderToken("is not this relay's provider key"), "another key's kid")
        refused("bearer " + (try token(header: #"{"alg":"ES256","kid":"\#(kid)"}"#, claims: #"{"iss":"team","iat":1772438400}"#, key: other)),
                .invalidProviderToken("signature does not verify"), "our kid, another key's signature")
        let parts = good.split(separator: ".")
        let tampered = parts[0] + "." + Base64URL.encode(Array(#"{"iss":"team","iat":1772438999}"#.utf8)) + "." + parts[2]
        refused("bearer " + tampered, .invalidProviderToken("signature does not verify"), "claims changed after signing")
        refused("bearer " + (try token(header: #"{"alg":"none","kid":"\#(kid)"}"#, claims: #"{"iss":"team","iat":1772438400}"#, key: key)),
                .invalidProviderToken("alg must be ES256"), "alg none")
        refused("bearer " + (try token(header: #"{"alg":"ES256","kid":"\#(kid)","crit":["x"]}"#, claims: #"{"iss":"team","iat":1772438400}"#, key: key)),
                .invalidProviderToken("crit"), "crit")
        refused("bearer " + (try token(header: #"{"alg":"ES256","kid":"\#(kid)"}"#, claims: #"{"iat":1772438400}"#, key: key)),
                .invalidProviderToken("iss"), "no issuer")
        refused("bearer " + (try token(header: #"{"alg":"ES256","kid":"\#(kid)"}"#, claims: #"{"iss":"team"}"#, key: key)),
                .invalidProviderToken("iat"), "no iat")
        refused("bearer " + (try ProviderToken.sign(key: key, issuer: "team", issuedAt: now.addingTimeInterval(-3601))), .expiredProviderToken, "older than an hour")
        refused("bearer " + (try ProviderToken.sign(key: key, issuer: "team", issuedAt: now.addingTimeInterval(61))), .invalidProviderToken("ahead of the relay's clock"), "from the future")
    }

    /// The signer reuses its token for 30 minutes (APNs refuses more than one new token per 20),
    /// then makes a new one.
    func testTheSignerRefreshesItsTokenWithinTheHour() throws {
        let key = P256.Signing.PrivateKey()
        let signer = ProviderTokenSigner(key: key)
        let first = try signer.token(now: Self.start)
        XCTAssertEqual(try signer.token(now: Self.start.addingTimeInterval(29 * 60)), first)
        let later = try signer.token(now: Self.start.addingTimeInterval(31 * 60))
        XCTAssertNotEqual(later, first)
        XCTAssertNoThrow(try ProviderToken.verify("bearer " + later, key: key.publicKey, now: Self.start.addingTimeInterval(90 * 60)))
    }

    func testARelayWithAProviderKeyVerifiesEveryPushAndDataWrite() async throws {
        let key = P256.Signing.PrivateKey()
        let clock = ManualClock(Self.start)
        let relay = PushRelay(clock: clock)
        let wakeUp = WakeUpService(relay: relay)
        try wakeUp.createApplication("demo")
        let server = try await PushServer.start(relay: relay, wakeUp: wakeUp, providerKey: key.publicKey)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try server.inboxes.open("phone-1", secret: Self.secret)
            let base = server.baseURL
            let good = try ProviderToken.sign(key: key, issuer: "team", issuedAt: clock.now())
            let apns = #"{"aps":{"content-available":1},"k":"v"}"#
            let fcm = #"{"message":{"token":"phone-1","data":{"k":"v"}}}"#

            var a = try await call(http, .POST, base + "/3/device/phone-1", apns)
            XCTAssertEqual(a.status, 403); XCTAssertTrue(a.body.contains("MissingProviderToken"), a.body)
            a = try await call(http, .POST, base + "/v1/projects/demo/messages:send", fcm)
            XCTAssertEqual(a.status, 401); XCTAssertTrue(a.body.contains("UNAUTHENTICATED"), a.body)
            a = try await call(http, .POST, base + "/3/device/phone-1", apns, bearer: try ProviderToken.sign(key: P256.Signing.PrivateKey(), issuer: "team", issuedAt: clock.now()))
            XCTAssertEqual(a.status, 403); XCTAssertTrue(a.body.contains("InvalidProviderToken"), a.body)
            a = try await call(http, .PUT, base + "/base/demo/doors", #"{"state":"open"}"#)
            XCTAssertEqual(a.status, 403); XCTAssertTrue(a.body.contains("permission_denied") && a.body.contains("verifies senders"), a.body)
            a = try await call(http, .DELETE, base + "/base/demo/doors")
            XCTAssertEqual(a.status, 403, a.body)
            XCTAssertTrue(relay.log.isEmpty, "nothing refused was queued: \(relay.log)")

            a = try await call(http, .POST, base + "/3/device/phone-1", apns, bearer: good)
            XCTAssertEqual(a.status, 200, a.body)
            a = try await call(http, .POST, base + "/v1/projects/demo/messages:send", fcm, bearer: good)
            XCTAssertEqual(a.status, 200, a.body)
            a = try await call(http, .PUT, base + "/base/demo/doors", #"{"state":"open"}"#, bearer: good)
            XCTAssertEqual(a.status, 204, a.body)
            // Reading the data and the phone's own requests need no provider token.
            a = try await call(http, .GET, base + "/base/demo/doors")
            XCTAssertEqual(a.body, #"{"state":"open"}"#)
            a = try await call(http, .GET, base + "/lockbench/devices/phone-1/inbox?wait=1", bearer: Self.secret)
            XCTAssertEqual(a.body, #"[{"k":"v"},{"k":"v"}]"#)

            // An hour later the same token is stale; the sender's signer makes a fresh one.
            clock.advance(3601)
            a = try await call(http, .POST, base + "/3/device/phone-1", apns, bearer: good)
            XCTAssertEqual(a.status, 403); XCTAssertTrue(a.body.contains("ExpiredProviderToken"), a.body)
            let signer = ProviderTokenSigner(key: key)
            let sender = APNsHTTPSender(baseURL: base, provider: signer)
            do { _ = try await APNsHTTPSender(baseURL: base).send(PushMessage(token: "phone-1", data: ["n": "1"])); XCTFail("an unsigned sender was accepted") }
            catch { XCTAssertEqual(error, .missingProviderToken) }
            // The signer stamps tokens with the wall clock; the relay's clock is moved to it.
            clock.set(Date())
            let id = try await sender.send(PushMessage(token: "phone-1", data: ["n": "2"]))
            XCTAssertFalse(id.isEmpty)
        } catch {
            try? await http.shutdown(); await server.stop(); throw error
        }
        try await http.shutdown()
        await server.stop()
    }

    /// Bytes waiting per inbox and in all inboxes are bounded: a push past either is refused when
    /// sent (in process, and over HTTP as APNs 429 TooManyRequests / FCM 429 QUOTA_EXCEEDED),
    /// names the bound, queues nothing, and is accepted again once the phone collects.
    func testInboxesAreBoundedPerInboxAndInTotal() async throws {
        let relay = PushRelay()
        let one = PushMessage(token: "a", data: ["k": String(repeating: "x", count: 52)])
        let size = PushRules.compactJSON(one.data).utf8.count
        XCTAssertEqual(size, 60)
        let inboxes = PushInboxes(relay: relay, maxInboxBytes: 2 * size, maxTotalBytes: 3 * size)
        let server = try await PushServer.start(relay: relay, wakeUp: WakeUpService(relay: relay), inboxes: inboxes)
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try inboxes.open("a", secret: Self.secret); try inboxes.open("b", secret: Self.secret)
            func refused(_ token: String, mentioning text: String) async {
                var m = one; m.token = token
                do { _ = try await relay.send(m); XCTFail("\(token): accepted past the bound") } catch {
                    guard case .inboxFull(let why) = error else { return XCTFail("\(error)") }
                    XCTAssertTrue(why.contains(text), why)
                }
            }
            _ = try await relay.send(one); _ = try await relay.send(one)
            XCTAssertEqual(inboxes.heldBytes("a").inbox, 2 * size)
            await refused("a", mentioning: "inbox of this token holds \(2 * size) bytes")
            var b = one; b.token = "b"
            _ = try await relay.send(b)
            await refused("b", mentioning: "the relay's inboxes hold \(3 * size) bytes")
            XCTAssertEqual(inboxes.heldBytes("b").inbox, size); XCTAssertEqual(inboxes.heldBytes("b").total, 3 * size, "refused pushes took no room")

            let apns = #"{"aps":{"content-available":1},"k":""# + String(repeating: "x", count: 52) + #""}"#
            var a = try await call(http, .POST, server.baseURL + "/3/device/a", apns)
            XCTAssertEqual(a.status, 429); XCTAssertTrue(a.body.contains("TooManyRequests"), a.body)
            a = try await call(http, .POST, server.baseURL + "/v1/projects/p/messages:send", #"{"message":{"token":"a","data":{"k":"v"}}}"#)
            XCTAssertEqual(a.status, 429); XCTAssertTrue(a.body.contains("QUOTA_EXCEEDED") && a.body.contains("holds"), a.body)

            // Collecting frees the room; retiring an inbox frees its share of the total.
            let taken = await inboxes.collect("a", wait: 0)
            XCTAssertEqual(taken?.count, 2)
            XCTAssertEqual(inboxes.heldBytes("a").inbox, 0); XCTAssertEqual(inboxes.heldBytes("a").total, size)
            a = try await call(http, .POST, server.baseURL + "/3/device/a", apns)
            XCTAssertEqual(a.status, 200, a.body)
            XCTAssertTrue(inboxes.close("b", secret: Self.secret))
            XCTAssertEqual(inboxes.heldBytes("a").inbox, size); XCTAssertEqual(inboxes.heldBytes("a").total, size, "b's bytes went with its inbox")
        } catch {
            try? await http.shutdown(); await server.stop(); throw error
        }
        try await http.shutdown()
        await server.stop()
    }
}
