import Crypto
import Foundation
@testable import TrustModel
@testable import TrustCore
@testable import TrustSQLite
@testable import TrustPostgres
@testable import TrustBackends
@testable import TrustHTTP
import TrustPhone
import XCTest

/// The virtual phone's side of push approval against the real server on a loopback port: what it
/// refuses before sending anything, and that the requester receives and presents the command.
final class PhoneApprovalTests: XCTestCase {
    func testPhoneRefusalsAndDelivery() async throws {
        let f = try await TrustFixture.make(); defer { Task { await f.close() } }
        let server = try await TrustServer.start(service: f.service)
        let client = TrustClient(baseURL: server.baseURL)
        defer { Task { await client.shutdown(); await server.stop() } }
        let alice = VirtualPhone(id: "alice-phone", client: client, clock: f.clock)
        let bob = VirtualPhone(id: "bob-phone", client: client, clock: f.clock)
        let aliceCode = try await f.service.addDevice(id: "alice-phone", user: "alice", credentialKey: alice.publicKey)
        let bobCode = try await f.service.addDevice(id: "bob-phone", user: "bob", credentialKey: bob.publicKey)
        _ = try await f.service.addGrant(id: "ga", user: "alice", readers: [f.group])
        _ = await alice.login(code: aliceCode)
        _ = await bob.login(code: bobCode)

        // Nothing pending: nothing sent.
        if case .refused(let code, _) = await alice.approve() { XCTAssertEqual(code, "no_pending_request") } else { XCTFail("approved nothing") }

        // A challenge: no number, or a number not shown, is refused on the phone and the request stays pending.
        guard case .success(let mine) = await bob.requestUnlock(ApprovalRequest(approver: "alice", lock: f.group, pushType: .challenge)) else { return XCTFail("request") }
        let shown = try XCTUnwrap(mine.challenge)
        XCTAssertNil(mine.numbersChallenge)
        guard case .success(let new) = await alice.fetchApprovals() else { return XCTFail("fetch") }
        XCTAssertEqual(new.map(\.id), [mine.id])
        if case .refused(let code, _) = await alice.approve() { XCTAssertEqual(code, "challenge_response_required") } else { XCTFail("accepted without a number") }
        let notShown = (10...99).first { !(alice.approvals.inbox.first?.numbersChallenge ?? []).contains($0) }!
        if case .refused(let code, _) = await alice.approve(notShown) { XCTAssertEqual(code, "not_a_choice") } else { XCTFail("accepted a number not shown") }
        XCTAssertEqual(alice.approvals.inbox.count, 1)
        guard case .answered(let v) = await alice.approve(shown) else { return XCTFail("the right number") }
        XCTAssertEqual(v.status, .approved)
        XCTAssertEqual(alice.approvals.inbox.count, 0)
        let delivered = await bob.fetchUnlocks()
        XCTAssertEqual(delivered, 1)
        XCTAssertEqual(bob.approvals.unlockCount, 1)
        // The command is the first document the phone presents.
        let docs = bob.approvals.unlockDocuments(now: f.clock.now())
        XCTAssertEqual(docs.count, 1)

        // Biometrics not recognised and device credentials not allowed: nothing sent.
        alice.approvals.biometrics = .noMatch
        guard case .success = await bob.requestUnlock(ApprovalRequest(approver: "alice", lock: f.group, pushType: .biometric, allowDeviceCredentials: false)) else { return XCTFail("request") }
        _ = await alice.fetchApprovals()
        if case .refused(let code, _) = await alice.approve() { XCTAssertEqual(code, "biometric_failed") } else { XCTFail("approved without biometrics") }
        let stillPending = try await f.service.pendingApprovals(device: "alice-phone")
        XCTAssertEqual(stillPending.count, 1, "the service never heard an answer")
        alice.approvals.biometrics = .match
        guard case .answered(let b) = await alice.approve() else { return XCTFail("biometric match") }
        XCTAssertEqual(b.status, .approved)

        // Offline: a network failure, not a crash; the unlock commands outlive the retention only an hour.
        bob.setOnline(false)
        if case .failure(let e) = await bob.requestUnlock(ApprovalRequest(approver: "alice", lock: f.group)) { XCTAssertEqual(e, .network("offline")) } else { XCTFail("offline request") }
        XCTAssertEqual(bob.approvals.unlockDocuments(now: f.clock.now().addingTimeInterval(3600 + 61)).count, 0)
    }
}
