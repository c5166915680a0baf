import AccessProtocol
import ByteCore
import Codecs
import Crypto
import Foundation
import Lock
import OfflineUnlock
import VirtualPN532

/// `lockbench demo`: the whole offline unlock on a machine with no hardware. An issuer, a lock (an
/// NDE on certified firmware) and phones are created in `directory`; the lock runs on a virtual
/// PN532 that the real libnfc drives over a pty; phones are tapped on it.
public struct DemoScenario {
    public struct Step {
        public var title: String
        public var expected: Refusal.Reason?
        public var outcome: TransactionOutcome?
        public var passed: Bool { outcome.map { $0.reason == expected } ?? false }
    }

    public let directory: URL
    public let say: (String) -> Void
    public let event: @Sendable (LockEvent) -> Void

    public init(directory: URL, say: @escaping (String) -> Void, event: @escaping @Sendable (LockEvent) -> Void) {
        self.directory = directory
        self.say = say
        self.event = event
    }

    /// Runs the scenario; returns each tap with what was expected and what the lock decided.
    public func run() throws -> (steps: [Step], auditLog: String) {
        let files = DemoFiles(directory: directory)
        let now = Date()
        let provisioned = try LockProvisioning(directory: directory)
        let config = provisioned.configuration
        say("issuer, reader identity and lock configuration written to \(directory.path)")

        let service = try LockService(configuration: config)
        let runner = LockRunner(service: service, nfc: .virtual(link: nil), ble: nil, emit: event)
        /// Outcomes seen so far and the last one; each tap waits for one more.
        let outcomes = Monitor<(seen: Int, last: TransactionOutcome?)>((0, nil))
        var awaited = 0
        runner.onOutcome = { outcome in outcomes.withLock { $0 = ($0.seen + 1, outcome) } }
        try runner.start()
        defer { runner.stop() }
        guard let reader = runner.virtualReader else { throw LockServiceError("virtual reader did not start") }

        func phone(_ name: String, validFrom: Date, validUntil: Date, revocations: [RevocationDocument] = []) throws -> (CredentialSession, P256.Signing.PrivateKey, AccessDocument) {
            let p = try provisioned.phone(id: name, validFrom: validFrom, validFor: validUntil.timeIntervalSince(validFrom),
                                          revocations: revocations)
            try provisioned.writePrivateKey("\(name).key.pem", p.key)
            try files.write("\(name).access.cbor", Data(p.document!.encoded()))
            return (p.session, p.key, p.document!)
        }

        var steps = [Step]()
        var uidCounter: UInt8 = 0
        func tap(_ title: String, _ card: CredentialSession, expect: Refusal.Reason?) throws {
            say("tap: \(title)")
            uidCounter += 1
            try reader.insert(card, uid: [0x04, 0x4C, 0x42, 0x00, 0x00, 0x00, uidCounter])
            let (finished, last) = outcomes.wait(until: Date().addingTimeInterval(10), for: { $0.seen > awaited }) { s, ready in (ready, s.last) }
            if finished { awaited += 1 }
            reader.remove()
            steps.append(Step(title: title, expected: expect, outcome: finished ? last : nil))
            Thread.sleep(forTimeInterval: 0.15)  // let the loop see the card leave before the next tap
        }

        let alice = try phone("alice", validFrom: now.addingTimeInterval(-600), validUntil: now.addingTimeInterval(8 * 3600))
        try tap("alice's phone, access document valid for 8 h", alice.0, expect: nil)
        let bob = try phone("bob", validFrom: now.addingTimeInterval(-10 * 3600), validUntil: now.addingTimeInterval(-2 * 3600))
        try tap("bob's phone, access document expired 2 h ago", bob.0, expect: .engine(.expired))

        // Alice reports her phone lost; the issuer revokes it. Carol's phone carries the
        // revocation list to the offline lock with her own documents.
        let revocation = try provisioned.revocation(of: [(alice.1, alice.2)], issued: now)
        try files.write("revocation.cbor", Data(revocation.encoded()))
        let carol = try phone("carol", validFrom: now.addingTimeInterval(-600), validUntil: now.addingTimeInterval(8 * 3600),
                              revocations: [revocation])
        try tap("carol's phone, carrying the issuer's revocation of alice's phone", carol.0, expect: nil)
        try tap("alice's (lost) phone again", alice.0, expect: .engine(.revoked))

        let log = (try? String(contentsOfFile: service.lock.audit.path, encoding: .utf8)) ?? "(audit log unreadable)"
        return (steps, log)
    }

}

/// The demo's files, written so a user can inspect them and reuse them with the CLI.
struct DemoFiles {
    let directory: URL
    func write(_ name: String, _ text: String) throws { try write(name, Data(text.utf8)) }
    func write(_ name: String, _ data: Data) throws {
        try data.write(to: directory.appendingPathComponent(name), options: .atomic)
    }
}
