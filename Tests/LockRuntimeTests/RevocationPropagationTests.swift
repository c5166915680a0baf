import AccessProtocol
import ByteCore
import Foundation
import Lock
import LockRuntime
import OfflineUnlock
import XCTest

/// Issue 11, through the real libnfc and the virtual PN532: a lock holding an unexpired cached
/// document for a phone never asked it to step up, so a newer revocation list that phone carried
/// waited until the cache expired — and a revoked phone was still granted. The phone's AUTH1 `92`
/// (revocation signed timestamp) newer than the lock's list now makes the lock ask for it.
final class RevocationPropagationTests: XCTestCase {
    /// A session of `phone` (same key and access document) now also carrying `revocation`,
    /// telling the lock its documents' signed times; `fast`: the FAST key it learnt before.
    func carrying(_ phone: LockProvisioning.Phone, _ revocation: RevocationDocument, lock: RunningLock,
                  fast: FastCache? = nil, timestamps: Bool = true) -> CredentialSession {
        let c = CredentialConfiguration(signingKey: phone.key, trustedReaders: [lock.provisioning.trustedReader],
                                        accessDocuments: [phone.document!.encoded()], revocationDocuments: [revocation.encoded()])
        return CredentialSession(configuration: timestamps ? c.withDocumentTimestamps() : c, fastCache: fast)
    }

    func testAKnownPhoneCarryingANewerListStepsUpAndTheRevokedPhoneIsDenied() throws {
        let lock = try RunningLock(self).start()
        let p = lock.provisioning
        let victim = try p.phone(id: "victim")
        let carrier = try p.phone(id: "carrier", timestamps: true)
        // Both known: their documents are cached and valid for hours.
        XCTAssertTrue(try lock.tap(victim.session).granted)
        XCTAssertTrue(try lock.tap(carrier.session).stepUp)
        XCTAssertFalse(try lock.tap(carrier.session).stepUp, "a known phone with nothing newer: no step-up")

        // The issuer revokes the victim; the carrier's app fetched the new list.
        let list = try p.revocation(of: [(victim.key, victim.document!)])
        let tap = try lock.tap(carrying(carrier, list, lock: lock))
        XCTAssertTrue(tap.granted, "\(tap.decision)")
        XCTAssertTrue(tap.stepUp, "the carrier's 92 is newer than any list the lock holds: it must step up")
        let denied = try lock.tap(victim.session)
        XCTAssertEqual(denied.refusal?.code, "revoked", "\(denied.decision)")
        XCTAssertTrue(try lock.audit().contains { $0.decision == AuditEntry.revocationListEvent }, "the list change is audited")

        // The list is held now: the carrier's next taps are not step-ups any more.
        XCTAssertFalse(try lock.tap(carrying(carrier, list, lock: lock)).stepUp)
    }

    func testTheFASTCryptogramsTimestampLeadsToTheStepUpToo() throws {
        let lock = try RunningLock(self).start()
        let p = lock.provisioning
        let victim = try p.phone(id: "victim")
        let carrier = try p.phone(id: "carrier", timestamps: true)
        XCTAssertTrue(try lock.tap(victim.session).granted)
        XCTAssertTrue(try lock.tap(carrier.session).granted)
        XCTAssertTrue(try lock.tap(carrier.session).fast, "both sides hold a FAST key now")
        let list = try p.revocation(of: [(victim.key, victim.document!)])
        let tap = try lock.tap(carrying(carrier, list, lock: lock, fast: carrier.session.fastCache))
        XCTAssertFalse(tap.fast, "the cryptogram's 92 is newer: FAST gives way to a standard transaction with step-up")
        XCTAssertTrue(tap.stepUp)
        XCTAssertEqual(try lock.tap(victim.session).refusal?.code, "revoked")
    }

    func testWithoutTimestampsTheCachedDocumentStillServes() throws {
        // A phone that sends no 91/92 (the public reference device) or zeros is not asked: the
        // lock stays tolerant of the optional tags, and the known phone keeps its fast path.
        let lock = try RunningLock(self).start()
        let p = lock.provisioning
        let victim = try p.phone(id: "victim")
        let carrier = try p.phone(id: "carrier")
        XCTAssertTrue(try lock.tap(victim.session).granted)
        XCTAssertTrue(try lock.tap(carrier.session).granted)
        let list = try p.revocation(of: [(victim.key, victim.document!)])
        XCTAssertFalse(try lock.tap(carrying(carrier, list, lock: lock, timestamps: false)).stepUp)
        XCTAssertTrue(try lock.tap(victim.session).granted, "nothing told the lock about the list")
    }
}
