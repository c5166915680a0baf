import ByteCore
import Codecs
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import OfflineUnlock
@testable import TrustModel
@testable import TrustCore
@testable import TrustSQLite
@testable import TrustPostgres
@testable import TrustBackends
@testable import TrustHTTP
import XCTest

/// Push approval on the service (ForgeRock push authentication): every rule and every refusal.
final class ApprovalTests: XCTestCase {
    /// alice (approver, grant on the group) with one phone, bob (requester, no grant).
    struct Parties {
        let f: TrustFixture
        let bobKey = P256.Signing.PrivateKey()
        var rule: String { f.group }
    }

    func parties() async throws -> Parties {
        let f = try await TrustFixture.make()
        let p = Parties(f: f)
        _ = try await f.login("alice-phone", user: "alice")
        _ = try await f.login("bob-phone", user: "bob", key: p.bobKey)
        _ = try await f.service.addGrant(id: "ga", user: "alice", readers: [f.group])
        return p
    }

    func request(_ p: Parties, _ type: PushType = .default, ttl: Int? = nil, allowDeviceCredentials: Bool? = nil) async throws -> ApprovalRecord {
        try await p.f.service.requestApproval(ApprovalRequest(approver: "alice", lock: p.rule, pushType: type, ttl: ttl,
                                                              allowDeviceCredentials: allowDeviceCredentials), requester: "bob-phone")
    }

    func testDefaultAcceptIssuesAnUnlockCommandTheLockVerifies() async throws {
        let p = try await parties(); defer { Task { await p.f.close() } }
        let r = try await request(p)
        XCTAssertNil(r.challenge); XCTAssertNil(r.numbersChallenge)
        XCTAssertEqual(r.expiresAt, TrustFixture.t0.addingTimeInterval(ApprovalRules.defaultTTL))
        let inbox = try await p.f.service.pendingApprovals(device: "alice-phone")
        XCTAssertEqual(inbox.map(\.id), [r.id])
        let bobInbox = try await p.f.service.pendingApprovals(device: "bob-phone").count
        XCTAssertEqual(bobInbox, 0, "bob is not the approver")
        p.f.clock.advance(10)
        let answered = try await p.f.service.answerApproval(id: r.id, device: "alice-phone", .accept(challengeResponse: nil, authentication: .tap))
        XCTAssertEqual(answered.status, .approved)
        XCTAssertEqual(answered.answeredBy, "alice-phone")
        // The unlock command: the lock's own document, signed by the issuer, bound to bob's key,
        // this reader group only, valid 60 s from the approval.
        let doc = try AccessDocument(parsing: try XCTUnwrap(answered.unlockDocument))
        try doc.document.verify(trust: TrustStore(issuerPublicKeys: [Array(p.f.service.issuerKey.publicKey.x963Representation)]))
        XCTAssertEqual(doc.credentialPublicKey, Primitives.point(of: p.bobKey))
        XCTAssertEqual(doc.access.readers.map { Hex.encode($0.groupID) }, [p.rule])
        XCTAssertEqual(doc.validity.validFrom, TrustFixture.t0.addingTimeInterval(10))
        XCTAssertEqual(doc.validity.validUntil, TrustFixture.t0.addingTimeInterval(10 + ApprovalRules.unlockLifetime))
        let aliceInboxAfter = try await p.f.service.pendingApprovals(device: "alice-phone").count
        XCTAssertEqual(aliceInboxAfter, 0)
        // The requester sees the command, the approver does not.
        let (_, role) = try await p.f.service.approval(id: r.id, device: "bob-phone")
        XCTAssertEqual(ApprovalView(answered, as: role, now: p.f.service.now()).unlockDocument.flatMap { Data(base64Encoded: $0) }.map { Array($0) }, answered.unlockDocument)
        XCTAssertNil(ApprovalView(answered, as: .approver, now: p.f.service.now()).unlockDocument)
    }

    /// Issue 22 §1.2: an approval grants no more than the approver holds when answering. A grant
    /// revoked while the request waits leaves nothing to give (403, the request stays pending).
    func testAnApproverWhoseGrantWasRevokedCannotApprove() async throws {
        let p = try await parties(); defer { Task { await p.f.close() } }
        let r = try await request(p)
        _ = try await p.f.service.revokeGrant(id: "ga", reason: "left")
        await XCTAssertTrustError(.forbidden) {
            try await p.f.service.answerApproval(id: r.id, device: "alice-phone", .accept(challengeResponse: nil, authentication: .tap))
        }
        let (after, _) = try await p.f.service.approval(id: r.id, device: "bob-phone")
        XCTAssertEqual(after.status, .pending)
        XCTAssertNil(after.unlockDocument)
        // A grant on another door covers nothing here either.
        _ = try await p.f.service.addGrant(id: "gb", user: "alice", readers: [String(repeating: "ab", count: 16)])
        await XCTAssertTrustError(.forbidden) {
            try await p.f.service.answerApproval(id: r.id, device: "alice-phone", .accept(challengeResponse: nil, authentication: .tap))
        }
    }

    /// The unlock command carries the approver's schedule at that door: the lock refuses it when
    /// the approver could not have opened it herself.
    func testTheUnlockCommandIsBoundedByTheApproversSchedule() async throws {
        let p = try await parties(); defer { Task { await p.f.close() } }
        _ = try await p.f.service.modifyGrant(id: "ga", readers: nil, schedules: ["mon-fri 08:00-18:00"])
        let r = try await request(p)
        let answered = try await p.f.service.answerApproval(id: r.id, device: "alice-phone", .accept(challengeResponse: nil, authentication: .tap))
        let doc = try AccessDocument(parsing: try XCTUnwrap(answered.unlockDocument))
        XCTAssertEqual(doc.access.schedules, [try WeeklySchedule(parsing: "mon-fri 08:00-18:00")])
        let saturdayNoon = try XCTUnwrap(RFC3339.parse("2026-03-07T12:00:00Z")), mondayNoon = try XCTUnwrap(RFC3339.parse("2026-03-02T12:00:00Z"))
        XCTAssertFalse(doc.access.schedules.contains { $0.contains(saturdayNoon, utcOffsetMinutes: 0) })
        XCTAssertTrue(doc.access.schedules.contains { $0.contains(mondayNoon, utcOffsetMinutes: 0) })
        // A second, unscheduled grant on the door lifts the bound, as it would for her own key.
        _ = try await p.f.service.addGrant(id: "gc", user: "alice", readers: [p.f.group])
        let r2 = try await request(p)
        let free = try await p.f.service.answerApproval(id: r2.id, device: "alice-phone", .accept(challengeResponse: nil, authentication: .tap))
        XCTAssertEqual(try AccessDocument(parsing: try XCTUnwrap(free.unlockDocument)).access.schedules, [])
    }

    func testChallengeRightWrongAndMissingNumber() async throws {
        let p = try await parties(); defer { Task { await p.f.close() } }
        let r = try await request(p, .challenge)
        let numbers = try XCTUnwrap(r.numbersChallenge), shown = try XCTUnwrap(r.challenge)
        XCTAssertEqual(numbers.count, 3); XCTAssertEqual(Set(numbers).count, 3)
        XCTAssertTrue(numbers.contains(shown))
        XCTAssertTrue(numbers.allSatisfy { ApprovalRules.challengeRange.contains($0) })
        // The approver sees the three numbers, never which one is right; the requester sees only that one.
        XCTAssertNil(ApprovalView(r, as: .approver, now: TrustFixture.t0).challenge)
        XCTAssertEqual(ApprovalView(r, as: .approver, now: TrustFixture.t0).numbersChallenge, numbers)
        XCTAssertNil(ApprovalView(r, as: .requester, now: TrustFixture.t0).numbersChallenge)
        // accept without the number: an error, the request stays pending.
        await XCTAssertTrustError(.challengeResponseRequired) {
            try await p.f.service.answerApproval(id: r.id, device: "alice-phone", .accept(challengeResponse: nil, authentication: .tap))
        }
        let stillPending = try await p.f.service.pendingApprovals(device: "alice-phone").map(\.id)
        XCTAssertEqual(stillPending, [r.id])
        // The right number approves.
        let ok = try await p.f.service.answerApproval(id: r.id, device: "alice-phone", .accept(challengeResponse: shown, authentication: .tap))
        XCTAssertEqual(ok.status, .approved); XCTAssertNotNil(ok.unlockDocument)
        // A wrong number denies (no second try) and yields no command.
        let r2 = try await request(p, .challenge)
        let wrong = try XCTUnwrap(r2.numbersChallenge?.first { $0 != r2.challenge })
        let no = try await p.f.service.answerApproval(id: r2.id, device: "alice-phone", .accept(challengeResponse: wrong, authentication: .tap))
        XCTAssertEqual(no.status, .denied); XCTAssertEqual(no.denyReason, "wrong_challenge"); XCTAssertNil(no.unlockDocument)
        await XCTAssertTrustError(.alreadyAnswered) {
            try await p.f.service.answerApproval(id: r2.id, device: "alice-phone", .accept(challengeResponse: r2.challenge, authentication: .tap))
        }
    }

    func testBiometricNeedsBiometricsOrAllowedDeviceCredentials() async throws {
        let p = try await parties(); defer { Task { await p.f.close() } }
        let strict = try await request(p, .biometric, allowDeviceCredentials: false)
        for how in [ApprovalAuthentication.tap, .deviceCredentials] {
            await XCTAssertTrustError(.biometricRequired) {
                try await p.f.service.answerApproval(id: strict.id, device: "alice-phone", .accept(challengeResponse: nil, authentication: how))
            }
        }
        let strictStatus = try await p.f.service.answerApproval(id: strict.id, device: "alice-phone", .accept(challengeResponse: nil, authentication: .biometric)).status
        XCTAssertEqual(strictStatus, .approved)
        let lenient = try await request(p, .biometric)
        XCTAssertTrue(lenient.allowDeviceCredentials)
        let r = try await p.f.service.answerApproval(id: lenient.id, device: "alice-phone", .accept(challengeResponse: nil, authentication: .deviceCredentials))
        XCTAssertEqual(r.status, .approved); XCTAssertEqual(r.authentication, .deviceCredentials)
    }

    func testTTLExpiryAndSecondAnswer() async throws {
        let p = try await parties(); defer { Task { await p.f.close() } }
        _ = try await p.f.login("alice-ipad", user: "alice")
        let r = try await request(p, ttl: 30)
        p.f.clock.advance(29)
        let pendingAt29s = try await p.f.service.pendingApprovals(device: "alice-ipad").count
        XCTAssertEqual(pendingAt29s, 1)
        p.f.clock.advance(1)   // exactly the TTL
        let pendingAt30s = try await p.f.service.pendingApprovals(device: "alice-ipad").count
        XCTAssertEqual(pendingAt30s, 0)
        await XCTAssertTrustError(.approvalExpired) {
            try await p.f.service.answerApproval(id: r.id, device: "alice-phone", .accept(challengeResponse: nil, authentication: .tap))
        }
        let expiredStatus = try await p.f.service.approval(id: r.id, device: "bob-phone").0.status
        XCTAssertEqual(expiredStatus, .expired)
        let expiredCommand = try await p.f.service.approval(id: r.id, device: "bob-phone").0.unlockDocument
        XCTAssertNil(expiredCommand)
        // Either of alice's devices may answer; the first answer is final.
        let r2 = try await request(p)
        _ = try await p.f.service.answerApproval(id: r2.id, device: "alice-ipad", .deny)
        await XCTAssertTrustError(.alreadyAnswered) {
            try await p.f.service.answerApproval(id: r2.id, device: "alice-phone", .accept(challengeResponse: nil, authentication: .tap))
        }
        await XCTAssertTrustError(.alreadyAnswered) { try await p.f.service.answerApproval(id: r2.id, device: "alice-ipad", .deny) }
    }

    func testWhoMayAskSeeAndAnswer() async throws {
        let p = try await parties(); defer { Task { await p.f.close() } }
        _ = try await p.f.login("eve-phone", user: "eve")
        // Only someone with a grant on the reader can approve it.
        await XCTAssertTrustError(.forbidden) {
            try await p.f.service.requestApproval(ApprovalRequest(approver: "eve", lock: p.rule), requester: "bob-phone")
        }
        await XCTAssertTrustError(.forbidden) {
            try await p.f.service.requestApproval(ApprovalRequest(approver: "alice", lock: "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"), requester: "bob-phone")
        }
        let r = try await request(p)
        // A stranger cannot see it; the requester cannot answer it.
        await XCTAssertTrustError(.notFound) { try await p.f.service.approval(id: r.id, device: "eve-phone") }
        await XCTAssertTrustError(.notFound) { try await p.f.service.answerApproval(id: r.id, device: "eve-phone", .deny) }
        await XCTAssertTrustError(.forbidden) { try await p.f.service.answerApproval(id: r.id, device: "bob-phone", .accept(challengeResponse: nil, authentication: .tap)) }
        await XCTAssertTrustError(.notFound) { try await p.f.service.approval(id: "nope", device: "bob-phone") }
        // A suspended approver device answers nothing; a suspended requester gets no command.
        _ = try await p.f.service.setCredential(device: "bob-phone", to: .suspended)
        await XCTAssertTrustError(.forbidden) { try await p.f.service.answerApproval(id: r.id, device: "alice-phone", .accept(challengeResponse: nil, authentication: .tap)) }
        await XCTAssertTrustError(.forbidden) { try await self.request(p) }
    }

    func testRequestsAreBounded() async throws {
        let p = try await parties(); defer { Task { await p.f.close() } }
        func ask(_ r: ApprovalRequest) async throws { _ = try await p.f.service.requestApproval(r, requester: "bob-phone") }
        let base = ApprovalRequest(approver: "alice", lock: p.rule)
        var r = base; r.message = String(repeating: "m", count: ApprovalRules.maxMessage + 1)
        await XCTAssertTrustError(.invalidRequest) { try await ask(r) }
        r = base; r.ttl = 0
        await XCTAssertTrustError(.invalidRequest) { try await ask(r) }
        r = base; r.ttl = 601
        await XCTAssertTrustError(.invalidRequest) { try await ask(r) }
        r = base; r.contextInfo = "[1,2]"
        await XCTAssertTrustError(.invalidRequest) { try await ask(r) }
        r = base; r.contextInfo = #"{"location":{"latitude":91,"longitude":0}}"#
        await XCTAssertTrustError(.invalidRequest) { try await ask(r) }
        r = base; r.customPayload = "\"text\""
        await XCTAssertTrustError(.invalidRequest) { try await ask(r) }
        r = base; r.lock = "zz"
        await XCTAssertTrustError(.invalidRequest) { try await ask(r) }
        // Nulls and absent fields in contextInfo are fine (ForgeRock: "check these attributes for null values").
        r = base; r.contextInfo = #"{"location":null,"userAgent":null,"remoteIp":null,"extra":1}"#
        try await ask(r)
        XCTAssertEqual(try ContextInfo(parsing: r.contextInfo!), ContextInfo())
        // One device holds at most two of alice's pending slots (issue 22 §1.4): its third is
        // refused, and another device's request still gets in.
        try await ask(base)
        await XCTAssertTrustError(.tooManyPending) { try await ask(base) }
        var others = [String]()
        for i in 0..<ApprovalRules.maxPendingPerApprover {
            _ = try await p.f.login("mallory-\(i)", user: "mallory-\(i)")
            others.append("mallory-\(i)")
        }
        _ = try await p.f.service.requestApproval(base, requester: others[0])
        // The approver's own bound still holds across devices.
        var placed = 3
        for d in others.dropFirst() where placed < ApprovalRules.maxPendingPerApprover {
            _ = try await p.f.service.requestApproval(base, requester: d); placed += 1
        }
        await XCTAssertTrustError(.tooManyPending) { _ = try await p.f.service.requestApproval(base, requester: others.last!) }
        // Expired ones no longer count.
        p.f.clock.advance(ApprovalRules.defaultTTL)
        try await ask(base)
    }

    /// Answered and expired requests are deleted `ApprovalRules.retention` after they settle (the
    /// answer, or the end of the TTL), by the next approval write or `purgeApprovals`; pending
    /// ones and those settled more recently stay.
    func testSettledRequestsAreDeletedAfterTheRetention() async throws {
        let p = try await parties(); defer { Task { await p.f.close() } }
        func stored(_ id: String) async throws -> Bool {
            try await p.f.storage.read { tx in try await tx.setting("approval." + id) } != nil
        }
        let answered = try await request(p)
        p.f.clock.advance(10)
        _ = try await p.f.service.answerApproval(id: answered.id, device: "alice-phone", .deny)   // settles at t0+10
        let expired = try await request(p, ttl: 30)                                               // settles at t0+40
        // One second before the answered one's retention ends: nothing goes.
        p.f.clock.advance(ApprovalRules.retention - 1)
        var purged = try await p.f.service.purgeApprovals()
        XCTAssertEqual(purged, 0)
        let stillThere = try await p.f.service.approval(id: answered.id, device: "bob-phone").0.status
        XCTAssertEqual(stillThere, .denied)
        // At the end of its retention the answered request is deleted; the expired one stays 30 s more.
        p.f.clock.advance(1)
        purged = try await p.f.service.purgeApprovals()
        XCTAssertEqual(purged, 1)
        let answeredStored = try await stored(answered.id), expiredStored = try await stored(expired.id)
        XCTAssertFalse(answeredStored, "the row is gone, not blanked")
        XCTAssertTrue(expiredStored)
        await XCTAssertTrustError(.notFound) { try await p.f.service.approval(id: answered.id, device: "bob-phone") }
        // A new request (a write) purges what is due by then: the expired one, not itself.
        p.f.clock.advance(30)
        let fresh = try await request(p)
        let expiredGone = try await stored(expired.id), freshStored = try await stored(fresh.id)
        XCTAssertFalse(expiredGone)
        XCTAssertTrue(freshStored)
        let index = try await p.f.storage.read { tx in try await tx.oldestSettled(limit: 100) }.map(\.id)
        XCTAssertEqual(index, [fresh.id], "the index holds only what is stored")
        purged = try await p.f.service.purgeApprovals()
        XCTAssertEqual(purged, 0, "a pending request is never purged")
        let inbox = try await p.f.service.pendingApprovals(device: "alice-phone").map(\.id)
        XCTAssertEqual(inbox, [fresh.id])
    }
}

/// The approval endpoints over HTTP, checked against docs/trust-openapi.json.
final class ApprovalHTTPTests: XCTestCase {
    func testEveryApprovalAnswerIsDocumented() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let alice = try await f.login("alice-phone", user: "alice")
        let bob = try await f.login("bob-phone", user: "bob")
        _ = try await f.service.addGrant(id: "ga", user: "alice", readers: [f.group])
        let app = Application(router: TrustAPI.router(service: f.service))
        @Sendable func auth(_ t: TokenResponse) -> HTTPFields { [.authorization: "Bearer " + t.access_token, .contentType: "application/json"] }
        try await app.test(.router) { client in
            func call(_ method: HTTPRequest.Method, _ uri: String, _ doc: String, _ t: TokenResponse?, _ body: String = "", expect: HTTPResponse.Status) async throws -> [String: Any] {
                var out: [String: Any] = [:]
                try await client.execute(uri: uri, method: method, headers: t.map(auth) ?? [:], body: ByteBuffer(string: body)) { r in
                    XCTAssertEqual(r.status, expect, "\(method) \(uri): \(String(buffer: r.body))")
                    Self.conforms(doc, method == .post ? "post" : "get", Int(r.status.code), r.body)
                    out = (try? JSONSerialization.jsonObject(with: Data(buffer: r.body))) as? [String: Any] ?? [:]
                }
                return out
            }
            let ctx = #"{\"location\":{\"latitude\":51.4517076,\"longitude\":-2.5950234},\"userAgent\":null,\"remoteIp\":\"198.51.100.23\"}"#
            let created = try await call(.post, "/v1/approvals", "/v1/approvals", bob,
                                         #"{"approver":"alice","lock":"\#(f.group)","pushType":"challenge","message":"Bob at the door","contextInfo":"\#(ctx)","ttl":60}"#, expect: .created)
            let id = try XCTUnwrap(created["id"] as? String)
            let shown = try XCTUnwrap(created["challenge"] as? Int)
            XCTAssertNil(created["numbersChallenge"])
            let inbox = try await call(.get, "/v1/approvals", "/v1/approvals", alice, expect: .ok)
            let first = try XCTUnwrap((inbox["approvals"] as? [[String: Any]])?.first)
            XCTAssertEqual((first["numbersChallenge"] as? [Int])?.count, 3); XCTAssertNil(first["challenge"])
            XCTAssertEqual(first["contextInfo"] as? String, ctx.replacingOccurrences(of: "\\\"", with: "\""))
            _ = try await call(.get, "/v1/approvals/" + id, "/v1/approvals/{id}", bob, expect: .ok)
            _ = try await call(.post, "/v1/approvals/" + id + "/accept", "/v1/approvals/{id}/accept", alice, "{}", expect: .badRequest)
            _ = try await call(.post, "/v1/approvals/" + id + "/accept", "/v1/approvals/{id}/accept", alice, "not json", expect: .badRequest)
            _ = try await call(.post, "/v1/approvals/" + id + "/accept", "/v1/approvals/{id}/accept", bob, #"{"challengeResponse":\#(shown)}"#, expect: .forbidden)
            _ = try await call(.post, "/v1/approvals/" + id + "/accept", "/v1/approvals/{id}/accept", nil, "{}", expect: .unauthorized)
            let ok = try await call(.post, "/v1/approvals/" + id + "/accept", "/v1/approvals/{id}/accept", alice, #"{"challengeResponse":\#(shown)}"#, expect: .ok)
            XCTAssertEqual(ok["status"] as? String, "approved")
            _ = try await call(.post, "/v1/approvals/" + id + "/deny", "/v1/approvals/{id}/deny", alice, expect: .conflict)
            let mine = try await call(.get, "/v1/approvals/" + id, "/v1/approvals/{id}", bob, expect: .ok)
            XCTAssertNotNil(mine["unlockDocument"] as? String); XCTAssertNotNil(mine["unlockValidUntil"] as? String)
            _ = try await call(.get, "/v1/approvals/nope", "/v1/approvals/{id}", bob, expect: .notFound)
            _ = try await call(.post, "/v1/approvals", "/v1/approvals", bob, #"{"approver":"bob","lock":"\#(f.group)"}"#, expect: .forbidden)
            _ = try await call(.post, "/v1/approvals", "/v1/approvals", bob, #"{"lock":"\#(f.group)"}"#, expect: .badRequest)
            let short = try await call(.post, "/v1/approvals", "/v1/approvals", bob, #"{"approver":"alice","lock":"\#(f.group)","ttl":1}"#, expect: .created)
            f.clock.advance(1)
            _ = try await call(.post, "/v1/approvals/" + (short["id"] as! String) + "/deny", "/v1/approvals/{id}/deny", alice, expect: .gone)
            for _ in 0..<ApprovalRules.maxPendingPerRequester {
                _ = try await call(.post, "/v1/approvals", "/v1/approvals", bob, #"{"approver":"alice","lock":"\#(f.group)"}"#, expect: .created)
            }
            _ = try await call(.post, "/v1/approvals", "/v1/approvals", bob, #"{"approver":"alice","lock":"\#(f.group)"}"#, expect: .tooManyRequests)
            _ = try await call(.post, "/v1/approvals", "/v1/approvals", bob, String(repeating: " ", count: 9000), expect: .contentTooLarge)
            // A revoked login (reuse detected, credential deactivated) neither asks nor answers.
            try await f.storage.write { tx in try await tx.revokeFamilies(device: "alice-phone", at: f.service.now(), reason: "test") }
            _ = try await call(.get, "/v1/approvals", "/v1/approvals", alice, expect: .unauthorized)
            _ = try await call(.post, "/v1/approvals/" + id + "/deny", "/v1/approvals/{id}/deny", alice, expect: .unauthorized)
        }
    }
}

/// The approval push's data: strings only, and the largest possible request well under 4096 bytes.
final class ApprovalPushTests: XCTestCase {
    func testTheLargestApprovalPushFits() throws {
        let r = ApprovalRecord(id: String(repeating: "f", count: 16), requester: String(repeating: "d", count: 64), approver: "alice",
                               lock: String(repeating: "a", count: 65), pushType: .challenge, message: String(repeating: "é", count: 128),
                               contextInfo: String(repeating: "x", count: 1024), customPayload: String(repeating: "y", count: 1024),
                               numbersChallenge: [10, 11, 12], challenge: 11, allowDeviceCredentials: true, timeAdded: TrustFixture.t0,
                               ttl: 600, status: .pending)
        let data = ApprovalPush.data(r)
        XCTAssertEqual(data[ApprovalPush.identifier], r.id)
        XCTAssertNil(data["challenge"]); XCTAssertNil(data["numbersChallenge"]); XCTAssertNil(data["contextInfo"])
        let encoder = JSONEncoder(); encoder.outputFormatting = [.sortedKeys]
        XCTAssertLessThan(try encoder.encode(data).count, 1024)
    }
}
