import AccessProtocol
import ByteCore
import Codecs
import Crypto
import Foundation
import Lock
import LockRuntime
import OfflineUnlock
import Push
import TrustModel
import TrustCore
import TrustBackends
import TrustHTTP
import TrustPhone

/// The result of one scenario: passed, failed at a line (what was expected, what happened), or
/// could not run (environment: a port, a radio, a tool).
public struct ScenarioResult: Sendable, Codable, Equatable {
    public enum Status: String, Sendable, Codable { case passed, failed, error }
    public var name: String
    public var status: Status
    public var steps: Int
    public var line: Int?
    public var command: String?
    public var message: String?
    /// Wall time, seconds.
    public var seconds: Double
    /// Scenario time that passed (virtual or real), seconds.
    public var scenarioSeconds: Double
}

/// Runs scenarios: a trust service on SQLite behind its real HTTP API (Hummingbird on a loopback
/// port), phones that talk to it with async-http-client, real `LockService` locks, and taps over
/// a real transport — every actor on one `ScenarioClock`.
public final class ScenarioRunner: Sendable {
    public enum ClockMode: String, Sendable { case virtual, system }
    public let transport: TapTransport
    public let clockMode: ClockMode
    /// Prints each step as it runs (`--verbose`).
    public let trace: (@Sendable (String) -> Void)?

    public init(transport: TapTransport = SocketTap(), clockMode: ClockMode = .virtual, trace: (@Sendable (String) -> Void)? = nil) {
        self.transport = transport; self.clockMode = clockMode; self.trace = trace
    }

    public func run(_ script: ScenarioScript) async -> ScenarioResult {
        let started = Date()
        let world: World
        do { world = try World(clockMode: clockMode, transport: transport) } catch {
            return ScenarioResult(name: script.name, status: .error, steps: 0, message: "cannot set up: \(error)", seconds: 0, scenarioSeconds: 0)
        }
        let startTime = world.clock.now()
        var done = 0
        var failure: (ScenarioScript.Step, String, ScenarioResult.Status)?
        for step in script.steps {
            trace?("\(script.name):\(step.line): \(step.text)")
            do {
                try await world.run(step.command)
                done += 1
            } catch let e as StepFailure {
                failure = (step, e.message, .failed); break
            } catch let e as ScenarioError {
                failure = (step, e.message, .failed); break
            } catch let e as TrustError {
                failure = (step, "the trust service refused: \(e.description)", .failed); break
            } catch {
                failure = (step, "\(error)", .error); break
            }
        }
        let elapsed = world.clock.now().timeIntervalSince(startTime)
        await world.shutdown()
        let seconds = Date().timeIntervalSince(started)
        if let (step, message, status) = failure {
            return ScenarioResult(name: script.name, status: status, steps: done, line: step.line, command: step.text, message: message,
                                  seconds: seconds, scenarioSeconds: elapsed)
        }
        return ScenarioResult(name: script.name, status: .passed, steps: done, seconds: seconds, scenarioSeconds: elapsed)
    }
}

/// An expectation that did not hold.
struct StepFailure: Error { var message: String; init(_ m: String) { message = m } }

/// Everything one scenario runs: site, service, server, locks, phones. An actor: the steps run
/// one after another from async code; what a tap thread or a fleet worker reads is a
/// `nonisolated let`.
actor World {
    typealias LockEntry = (service: LockService, reader: TrustedReader, group: [UInt8])
    nonisolated let clock: ScenarioClock
    nonisolated let transport: TapTransport
    nonisolated let directory: String
    var settings = TrustSettings()
    var service: TrustService?
    var server: TrustServer?
    var client: TrustClient?
    var site: TrustSite?
    var locks: [String: LockEntry] = [:]
    var lockOrder: [String] = []
    var phones: [String: VirtualPhone] = [:]
    var users: [String: String] = [:]   // phone → user
    /// The locks' write/fsync seam (a fleet's locks share one `GroupCommit`).
    let io: FileIO

    /// Kept after `shutdown` (a directory the user named).
    let keepDirectory: Bool

    // Push: the relay, the trust service's notifier, the wake-up service (app "lockbench"), each phone's push side.
    let relay: PushRelay
    let notifier: TrustPushNotifier
    let wakeUp: WakeUpService
    var pushes: [String: PhonePush] = [:]

    init(clockMode: ScenarioRunner.ClockMode, transport: TapTransport, directory: String? = nil, io: FileIO = .system) throws {
        let clock = ScenarioClock(clockMode == .virtual ? .frozen(Date(timeIntervalSince1970: 1_772_438_400)) : .running(offset: 0))
        self.clock = clock
        self.transport = transport
        self.io = io
        keepDirectory = directory != nil
        if let directory, FileManager.default.fileExists(atPath: directory) {
            throw ScenarioError(line: 0, "\(directory) exists; name a new directory (it is created and kept)")
        }
        let relay = PushRelay(clock: clock)
        self.relay = relay
        notifier = TrustPushNotifier(relay: relay)
        let wakeUp = WakeUpService(relay: relay, lifetime: 7 * 86400, maxNodeBytes: 64 * 1024)
        try? wakeUp.createApplication(World.wakeUpApp)
        self.wakeUp = wakeUp
        self.directory = directory ?? NSTemporaryDirectory() + "lockbench-scenario-" + Hex.encode(Primitives.randomBytes(6))
        try FileManager.default.createDirectory(atPath: self.directory, withIntermediateDirectories: true)
    }

    func shutdown() async {
        transport.close()
        for (_, l) in locks { l.service.flush() }
        await client?.shutdown()
        await server?.stop()
        try? await service?.storage.close()
        locks.removeAll()
        if !keepDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// The site, service and HTTP server, created at the first actor (after any `site` lines).
    func trust() async throws -> TrustService {
        if let service { return service }
        let site = try TrustSite.create(at: directory + "/site", settings: settings)
        let service = try await site.service(clock: clock)
        let server = try await TrustServer.start(service: service)
        self.site = site; self.service = service; self.server = server
        client = TrustClient(baseURL: server.baseURL)
        return service
    }

    func phone(_ name: String) throws -> VirtualPhone {
        guard let p = phones[name] else { throw ScenarioError(line: 0, "no phone \"\(name)\"; declare it with: phone \(name) user USER") }
        return p
    }

    func lock(_ name: String) throws -> LockEntry {
        guard let l = locks[name] else { throw ScenarioError(line: 0, "no lock \"\(name)\"; declare it with: lock \(name)") }
        return l
    }

    /// `phone` at a tap: it trusts every lock's reader, in the order they were declared.
    func responder(_ phone: VirtualPhone) -> PhoneResponder {
        PhoneResponder(phone: phone, trusting: lockOrder.compactMap { locks[$0]?.reader }, interface: transport.interface)
    }

    /// After an administrative change the trust service pushes to the affected phones (Tapkey:
    /// "notify clients when Mobile Keys have been created, changed, or revoked"); a phone that gets
    /// the push polls (if configured to). A lost push leaves the phone to its next poll.
    func notify(_ change: TrustChange) async {
        await notifier.notify(change)
    }

    func run(_ command: ScenarioScript.Command) async throws {
        switch command {
        case .clockSet(let t):
            try clock.set(t)
        case .clockAdvance(let d):
            try await advance(by: d)
        case .site(let name, let value):
            guard service == nil else { throw ScenarioError(line: 0, "site settings come before the first lock, phone or grant") }
            do { try settings.set(name, value) } catch { throw ScenarioError(line: 0, error.message) }
        case .lock(let name):
            guard locks[name] == nil else { throw ScenarioError(line: 0, "lock \(name) exists") }
            _ = try await trust()
            try addLock(name)
        case .phone(let name, let user, let o):
            guard phones[name] == nil else { throw ScenarioError(line: 0, "phone \(name) exists") }
            let service = try await trust()
            var options = VirtualPhone.Options()
            options.pollEvery = o.pollEvery; options.autoRecover = o.autoRecover; options.pollOnTriggers = o.pollOnTriggers
            let phone = VirtualPhone(id: name, client: client!, clock: clock, options: options)
            phone.reauthorize = { device in try? await service.enroll(device: device) }
            _ = try await service.addDevice(id: name, user: user, credentialKey: phone.publicKey)
            phones[name] = phone
            users[name] = user
            try addPush(phone)
        case .phoneLogin(let name):
            let p = try phone(name)
            let code = try await trust().enroll(device: name)
            if case .failed(let why) = await p.login(code: code) { throw StepFailure("login failed: \(why)") }
        case .phonePoll(let name):
            let p = try phone(name)
            _ = await p.poll(trigger: .manual)
        case .phoneOffline(let name): try phone(name).setOnline(false)
        case .phoneOnline(let name):
            try phone(name).setOnline(true)
            await relay.deliverDue()   // what the relay stored for it arrives now
        case .grantAdd(let id, let user, let lockNames, let schedules):
            let readers = try lockNames.map { Hex.encode(try lock($0).group) }
            await notify(try await trust().addGrant(id: id, user: user, readers: readers, schedules: schedules))
        case .grantModify(let id, let lockNames, let schedules):
            let readers = try lockNames.map { try $0.map { Hex.encode(try lock($0).group) } }
            await notify(try await trust().modifyGrant(id: id, readers: readers, schedules: schedules))
        case .grantRevoke(let id, let reason):
            await notify(try await trust().revokeGrant(id: id, reason: reason))
        case .credential(let device, let state, let reason):
            await notify(try await trust().setCredential(device: device, to: state, reason: reason))
        case .tap(let phoneName, let lockName, let expected):
            let p = try phone(phoneName), l = try lock(lockName)
            let responder = responder(p)
            let outcome = try await Task.detached { [transport] in try transport.tap(responder, on: l.service) }.value
            try check(outcome.decision, expected)
        case .expectKeys(let name, let n):
            let have = try phone(name).keys.count
            if have != n { throw StepFailure("expected \(n) key(s), the phone holds \(have)") }
        case .expectIteration(let name, let grant, let n):
            guard let k = try phone(name).keys.first(where: { $0.grant == grant }) else { throw StepFailure("the phone holds no key for grant \(grant)") }
            // The poll's re-issue count; the document itself carries no validity iteration (see
            // TrustService.issue: Aliro §7.2.3 compares iterations across the whole issuer).
            if k.iteration != n { throw StepFailure("expected iteration \(n), the poll said \(k.iteration)") }
            let doc = try AccessDocument(parsing: k.document)
            if let carried = doc.validity.validityIteration { throw StepFailure("the document carries validityIteration \(carried); trust documents carry none") }
        case .expectRevocation(let name, let serial):
            let have = try phone(name).revocationSerial
            if have != serial { throw StepFailure("expected revocation serial \(serial.map(String.init) ?? "none"), the phone holds \(have.map(String.init) ?? "none")") }
        case .expectError(let name, let code):
            let have = try phone(name).lastError
            if have != code { throw StepFailure("expected error \(code ?? "none"), the phone's last error is \(have ?? "none")") }
        case .expectEvent(let name, let kind, let trigger):
            let events = try phone(name).events
            guard events.contains(where: { $0.kind.rawValue == kind && (trigger == nil || $0.trigger?.rawValue == trigger) }) else {
                throw StepFailure("expected a \(kind)\(trigger.map { " (\($0))" } ?? "") event; the phone has: \(events.suffix(6).map(\.description).joined(separator: "; "))")
            }
        case .expectNoEvent(let name, let kind, let trigger):
            let events = try phone(name).events
            if let e = events.first(where: { $0.kind.rawValue == kind && (trigger == nil || $0.trigger?.rawValue == trigger) }) {
                throw StepFailure("expected no \(kind)\(trigger.map { " (\($0))" } ?? "") event; the phone has: \(e)")
            }
        case .expectRefused(let code, let box):
            do {
                try await run(box.command)
            } catch let e as TrustError {
                if e.code.rawValue != code { throw StepFailure("refused with \(e.code.rawValue) (\(e.message)), expected \(code)") }
                return
            } catch let e as WakeUpError {
                if e.code.rawValue != code { throw StepFailure("refused with \(e.code.httpStatus) \(e.code.rawValue) (\(e.message)), expected \(code)") }
                return
            }
            throw StepFailure("the command was accepted; expected it refused with \(code)")
        case .approval(let line):
            try await run(line)
        case .push(let line):
            try await run(line)
        case .runUntil(let name, let event, let within):
            let p = try phone(name)
            let kinds: Set<VirtualPhone.Event.Kind> = event == "polls" ? [.polled, .unchanged, .pollFailed]
                : event == "refreshes" ? [.refreshed] : [.reauthorize]
            let before = p.events.count
            let deadline = clock.now().addingTimeInterval(within)
            while true {
                if p.events.dropFirst(before).contains(where: { kinds.contains($0.kind) }) { return }
                guard let next = nextScheduled(), next <= deadline else {
                    try await advance(to: deadline)
                    if p.events.dropFirst(before).contains(where: { kinds.contains($0.kind) }) { return }
                    throw StepFailure("\(name) did not \(event) within \(Int(within))s of scenario time")
                }
                try await advance(to: next)
            }
        }
    }

    func check(_ decision: TransactionDecision, _ expected: ScenarioScript.Expectation) throws {
        switch (decision, expected) {
        case (.grant, .granted): return
        case (.deny(let r), .denied(let want)) where want == nil || want?.rawValue == r.code: return
        case (.grant, .denied(let want)): throw StepFailure("expected denied\(want.map { " " + $0.rawValue } ?? ""), the lock granted")
        case (.deny(let r), _): throw StepFailure("expected \(expected.text), the lock denied \(r.code): \(r.detail)")
        }
    }

    // MARK: time

    /// The earliest scheduled poll of an online, logged-in phone.
    func nextScheduled() -> Date? {
        ([relay.nextDue, wakeUp.nextExpiry] + phones.values.filter { $0.isLoggedIn }.map(\.nextScheduledPoll)).compactMap { $0 }.min()
    }

    func advance(by d: TimeInterval) async throws { try await advance(to: clock.now().addingTimeInterval(d)) }

    /// Moves every clock to `target`, stopping at each scheduled poll on the way (a phone offline
    /// at that moment fails it, as a background fetch without network does, and tries again one
    /// interval later).
    func advance(to target: Date) async throws {
        var guardCount = 0
        while let next = nextScheduled(), next <= target, guardCount < 100_000 {
            guardCount += 1
            if next > clock.now() { try clock.advance(next.timeIntervalSince(clock.now())) }
            await relay.deliverDue()
            await wakeUp.expire()
            for p in phones.values.sorted(by: { $0.id < $1.id }) where p.isLoggedIn {
                if let due = p.nextScheduledPoll, due <= clock.now() {
                    await p.poll(trigger: .schedule)
                }
            }
        }
        if target > clock.now() { try clock.advance(target.timeIntervalSince(clock.now())) }
        await relay.deliverDue()
        await wakeUp.expire()
    }

    // MARK: locks

    func addLock(_ name: String) throws {
        guard let site else { throw ScenarioError(line: 0, "no site") }
        add(name, try makeLock(name, site: site))
    }

    /// A lock made (`makeLock`) joins the world.
    func add(_ name: String, _ lock: LockEntry) {
        locks[name] = lock
        lockOrder.append(name)
    }

    /// A phone made elsewhere (the fleet enrols its phones in parallel) joins the world.
    func add(_ phone: VirtualPhone) { phones[phone.id] = phone }

    /// A lock with its own directory, reader key and state, on the world's clock, trusting
    /// `site`'s issuer; nonisolated (it reads only `let`s) so the fleet opens its locks in parallel.
    nonisolated func makeLock(_ name: String, site: TrustSite) throws -> LockEntry {
        let dir = directory + "/lock-" + name
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let readerKey = P256.Signing.PrivateKey()
        var running = false
        if case .running = clock.master.mode { running = true }
        let group = Array(Primitives.sha256(Array("lockbench-scenario-lock:\(name)".utf8)).prefix(16))
        let sub = Primitives.randomBytes(16)
        try Data(readerKey.pemRepresentation.utf8).write(to: URL(fileURLWithPath: dir + "/reader.key.pem"))
        // The lock refuses a private key others can read.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: dir + "/reader.key.pem")
        let config = LockConfiguration(model: "Schlage NDE", firmware: "02.12.72",
                                       reader: .init(signingKey: "reader.key.pem", groupID: Hex.encode(group), subID: Hex.encode(sub)),
                                       trustedIssuers: [site.issuerPublicPath], stateDirectory: "state",
                                       clock: running ? "system" : RFC3339.format(clock.now()), baseDirectory: dir)
        let service = try LockService(configuration: config, io: io)
        try clock.attach(service.lock)
        return (service, TrustedReader(groupID: group, publicKey: Primitives.point(of: readerKey)), group)
    }
}
