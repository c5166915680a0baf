import AccessProtocol
import ByteCore
import Codecs
import Crypto
import Foundation
import Lock
import LockRuntime
import OfflineUnlock
import VirtualPN532
import XCTest

/// Whole transactions through the real libnfc: `LockRunner`'s NFC loop → libnfc's pn532_uart
/// driver → pty → the virtual PN532 → a software phone (`CredentialSession`). Each decision is
/// checked twice: in the outcome the loop reports and in the lock's audit log on disk.
final class NFCTransactionTests: XCTestCase {
    // MARK: Grant

    func testAValidPhoneIsGrantedAndAudited() throws {
        let lock = try RunningLock(self).start()
        let phone = try lock.provisioning.phone(id: "alice")
        let outcome = try lock.tap(phone.session)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertEqual(outcome.interface, .nfc)
        XCTAssertEqual(outcome.credentialID, Array("alice".utf8).hex)
        XCTAssertTrue(outcome.stepUp, "first tap: the lock fetches the documents")
        let audit = try lock.audit()
        XCTAssertEqual(audit.count, 1)
        XCTAssertEqual(audit.last?.decision, "grant")
        XCTAssertEqual(audit.last?.credential, Array("alice".utf8).hex)
        XCTAssertEqual(audit.last?.transport, "nfc")
        XCTAssertEqual(audit.last?.transaction, outcome.transactionID)
        // A certified NDE polls with the ECP access frame through InCommunicateThru.
        XCTAssertTrue(lock.reader.rawFrames.contains { $0.first == 0x6A }, "no ECP frame among \(lock.reader.rawFrames.map(\.hex))")

        // Second tap: documents cached, FAST with the Kpersistent learnt at the first grant.
        let again = try lock.tap(phone.session)
        XCTAssertTrue(again.granted)
        XCTAssertTrue(again.fast)
        XCTAssertFalse(again.stepUp)
        XCTAssertEqual(try lock.audit().map(\.decision), ["grant", "grant"])
    }

    // MARK: Deny reasons

    /// Taps `phone` on a fresh lock; asserts the outcome and the audit entry say `reason`.
    private func assertDenied(_ reason: Refusal.Reason, _ makePhone: (LockProvisioning) throws -> CredentialSession,
                              file: StaticString = #filePath, line: UInt = #line) throws {
        let lock = try RunningLock(self).start()
        let outcome = try lock.tap(try makePhone(lock.provisioning))
        XCTAssertFalse(outcome.granted, file: file, line: line)
        XCTAssertEqual(outcome.reason, reason, "\(outcome.decision)", file: file, line: line)
        let audit = try lock.audit()
        XCTAssertEqual(audit.count, 1, "one entry per tap", file: file, line: line)
        XCTAssertEqual(audit.last?.decision, "deny", file: file, line: line)
        XCTAssertEqual(audit.last?.reason, reason.code, file: file, line: line)
        XCTAssertEqual(audit.last?.transport, "nfc", file: file, line: line)
        XCTAssertEqual(audit.last?.transaction, outcome.transactionID, file: file, line: line)
        XCTAssertEqual(lock.service.lock.boltName, "secured", file: file, line: line)
    }

    func testExpiredDocumentIsDenied() throws {
        try assertDenied(.engine(.expired)) { p in
            try p.phone(id: "bob", validFrom: Date().addingTimeInterval(-10 * 3600), validFor: 8 * 3600).session
        }
    }

    func testNotYetValidDocumentIsDenied() throws {
        try assertDenied(.engine(.notYetValid)) { p in
            try p.phone(id: "early", validFrom: Date().addingTimeInterval(3 * 3600), validFor: 8 * 3600).session
        }
    }

    func testDocumentForAnotherReaderGroupIsDenied() throws {
        try assertDenied(.engine(.wrongReader)) { p in
            try p.phone(id: "elsewhere", readers: [try ReaderRule(groupID: [UInt8](repeating: 0xEE, count: 16))]).session
        }
    }

    func testDocumentFromAnUntrustedIssuerIsDenied() throws {
        try assertDenied(.engine(.untrustedIssuer)) { p in
            try p.phone(id: "forged", issuer: P256.Signing.PrivateKey()).session
        }
    }

    func testCredentialTrustingAnotherReaderKeyRefusesTheReaderSignature() throws {
        try assertDenied(.protocol(.badReaderSignature)) { p in
            let impostor = TrustedReader(groupID: p.groupID, publicKey: Primitives.point(of: P256.Signing.PrivateKey()))
            return try p.phone(id: "wary", trustedReaders: [impostor]).session
        }
    }

    func testCredentialSigningTheWrongTranscriptIsDenied() throws {
        try assertDenied(.protocol(.badCredentialSignature)) { p in
            try p.phone(id: "broken", faults: .wrongSignature).session
        }
    }

    func testCredentialWithoutDocumentsIsUnknown() throws {
        try assertDenied(.engine(.unknownCredential)) { p in
            try p.phone(id: "blank", withDocument: false).session
        }
    }

    func testRevokedCredentialIsDeniedAfterAnotherPhoneDeliversTheRevocation() throws {
        let lock = try RunningLock(self).start()
        let p = lock.provisioning
        let alice = try p.phone(id: "alice")
        XCTAssertTrue(try lock.tap(alice.session).granted)
        let revocation = try p.revocation(of: [(alice.key, alice.document!)])
        let carol = try p.phone(id: "carol", revocations: [revocation])
        XCTAssertTrue(try lock.tap(carol.session).granted)
        let outcome = try lock.tap(alice.session)
        XCTAssertEqual(outcome.reason, .engine(.revoked), "\(outcome.decision)")
        let audit = try lock.audit()
        XCTAssertEqual(audit.map(\.decision), ["grant", "revocation_list", "grant", "deny"])
        XCTAssertEqual(audit.last?.reason, "revoked")
        XCTAssertEqual(audit.last?.transaction, outcome.transactionID)
    }

    // MARK: The card pulled mid-transaction

    func testCardPulledMidTransactionIsAuditedAndTheNextTapIsGranted() throws {
        let lock = try RunningLock(self).start()
        let phone = try lock.provisioning.phone(id: "hasty")
        let reader = lock.reader
        // Pulled while answering the 3rd APDU (AUTH1): the answer never reaches the lock.
        let hasty = PulledAfter(phone.session, apdus: 3) { reader.remove() }
        let before = lock.outcomes.count
        try reader.insert(hasty, uid: [0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66])
        try lock.wait("the aborted transaction") { _, outcomes in outcomes.count > before }
        let aborted = lock.outcomes[before]
        XCTAssertEqual(hasty.answered, 3)
        XCTAssertFalse(aborted.granted)
        XCTAssertEqual(aborted.reason, .transport(.linkLost))
        XCTAssertTrue("\(aborted.decision)".contains("transport"), "\(aborted.decision)")
        XCTAssertEqual(aborted.timings.commands, 3)
        try lock.waitForMessage("card removed")
        var audit = try lock.audit()
        XCTAssertEqual(audit.count, 1)
        XCTAssertEqual(audit.last?.reason, "link_lost")
        XCTAssertEqual(audit.last?.layer, "transport")
        XCTAssertTrue(audit.last?.detail?.hasPrefix("transport:") ?? false, audit.last?.detail ?? "no detail")
        XCTAssertEqual(lock.service.lock.boltName, "secured")

        let next = try lock.tap(phone.session)
        XCTAssertTrue(next.granted, "\(next.decision)")
        audit = try lock.audit()
        XCTAssertEqual(audit.map(\.decision), ["deny", "grant"])
    }

    // MARK: The reader going away

    func testPtyClosedUnderTheLockIsReopenedWithoutLosingAuditEntries() throws {
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("lockruntime-pn532-\(UUID().uuidString.prefix(8))").path
        let lock = try RunningLock(self, link: link).start()
        let phone = try lock.provisioning.phone(id: "steady")
        XCTAssertTrue(try lock.tap(phone.session).granted)
        // A second tap stays in the field (the loop is presence-checking it) when the pty goes away.
        try lock.reader.insert(phone.session, uid: [0x04, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06])
        try lock.wait("the resting card's decision") { _, outcomes in outcomes.count == 2 }
        XCTAssertTrue(lock.outcomes[1].granted)
        Thread.sleep(forTimeInterval: 0.1)
        lock.reader.stop()
        try lock.waitForMessage("reader lost", count: 2)   // keeps trying while nothing is there
        let lost = lock.events.filter { $0.message.contains("reader lost") }
        XCTAssertTrue(lost.allSatisfy { $0.kind == .warning }, lost.map(\.line).joined(separator: "\n"))
        XCTAssertTrue(lost[1].message.contains("reopen attempt 2"), lost[1].message)

        let replacement = try VirtualReader(link: link)
        defer { replacement.stop() }
        try lock.waitForMessage("opened", count: 2, timeout: 15)   // backoff ≤ 5 s
        let outcome = try lock.tap(phone.session, on: replacement)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        let audit = try lock.audit()
        XCTAssertEqual(audit.map(\.seq), [1, 2, 3])
        XCTAssertEqual(audit.map(\.decision), ["grant", "grant", "grant"])
        XCTAssertEqual(audit.map(\.transaction), lock.outcomes.map(\.transactionID))
        XCTAssertEqual(audit.last?.transaction, outcome.transactionID)
    }

    // MARK: Chaining

    func testLargeDocumentsAreChainedThroughLibnfc() throws {
        let lock = try RunningLock(self).start()
        let p = lock.provisioning
        var readers = [p.readerRule]
        for i in 0..<24 {
            readers.append(try ReaderRule(groupID: [UInt8](repeating: UInt8(i), count: 16), subID: [UInt8](repeating: 0xA0 | UInt8(i & 0xF), count: 16)))
        }
        let schedules = try (0..<7).map { d in try WeeklySchedule(days: 1 << UInt8(d), start: 0, end: 1440) }
        let phone = try p.phone(id: "many-readers", readers: readers, schedules: schedules)
        XCTAssertGreaterThan(phone.document!.encoded().count, 1000)
        let outcome = try lock.tap(phone.session)
        XCTAssertTrue(outcome.granted, "\(outcome.decision)")
        XCTAssertTrue(outcome.stepUp)
        let responses = outcome.transcript.filter { $0.direction == .response }
        let chained = responses.filter { $0.bytes.count >= 2 && $0.bytes[$0.bytes.count - 2] == 0x61 }
        XCTAssertFalse(chained.isEmpty, "no 61xx among \(responses.map { $0.bytes.suffix(2).hex })")
        let getResponses = outcome.transcript.filter { $0.direction == .command && $0.bytes.count >= 2 && $0.bytes[1] == 0xC0 }
        XCTAssertGreaterThanOrEqual(getResponses.count, 3, "a >1000-byte DeviceResponse takes several GET RESPONSEs")
        XCTAssertTrue(getResponses.allSatisfy { $0.label == "GET RESPONSE" }, getResponses.map(\.label).joined(separator: ","))
        // Every R-APDU fitted libnfc's 263 bytes; together they carried the whole document.
        XCTAssertTrue(responses.allSatisfy { $0.bytes.count <= 263 })
        XCTAssertGreaterThan(responses.reduce(0) { $0 + $1.bytes.count }, phone.document!.encoded().count)
        XCTAssertEqual(try lock.audit().last?.credential, Array("many-readers".utf8).hex)
    }
}

/// A phone pulled out of the field while it answers its `apdus`-th command APDU: `pull` runs
/// before that answer is produced, so the answer never reaches the reader.
final class PulledAfter: APDUResponder, @unchecked Sendable {
    let inner: APDUResponder
    let apdus: Int
    let pull: () -> Void
    private(set) var answered = 0

    init(_ inner: APDUResponder, apdus: Int, pull: @escaping () -> Void) {
        self.inner = inner
        self.apdus = apdus
        self.pull = pull
    }

    func respond(to command: [UInt8]) -> [UInt8] {
        answered += 1
        if answered == apdus { pull() }
        return inner.respond(to: command)
    }

    func reset() { inner.reset() }
}
