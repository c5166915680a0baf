import AccessProtocol
import ByteCore
import Foundation
import Synchronization
import Lock
import LockRuntime
import OfflineUnlock
import TrustModel
import TrustCore
import TrustPhone

/// What `lockbench fleet` runs: one trust service, `locks` locks and `phones` phones in one
/// process on one clock, then a load of taps. Phone i holds a grant (its own user, grant `g<i>`)
/// on lock i mod `locks`.
public struct FleetPlan: Sendable, Equatable {
    public var locks = 10
    public var phones = 10
    /// Stop after this many taps (when `duration` is nil too: 1,000).
    public var taps: Int?
    /// Stop after this many seconds of wall time.
    public var duration: TimeInterval?
    /// Taps started per second over all workers; 0 = as fast as the workers go.
    public var rate: Double = 0
    /// Threads tapping at once (each tap blocks on its lock's fsync).
    public var workers = 8
    /// Percent of taps a phone makes at a lock it holds no grant for (denied).
    public var foreignPercent: Double = 0
    /// Revocation fan-out: this many grants revoked at once, every affected phone told to poll.
    public var revoke = 0
    /// The fan-out runs when this many taps have started (default: half the taps, or 1 s in).
    public var revokeAfterTaps: Int?
    public var seed: UInt64 = 1
    public var clock: ScenarioRunner.ClockMode = .virtual
    /// Background poll interval of every phone (runs with `--clock system`); 0 = never.
    public var pollEvery: TimeInterval = 0
    /// Every lock's journal fsync shares one flush with the others waiting (`GroupCommit`).
    public var groupCommit = true
    /// Where the site and the locks' state live: a fresh temporary directory if nil, removed
    /// after the run; a given directory (it must not exist) is kept, for inspection.
    public var directory: String?
    public init() {}

    /// Refuses a plan that cannot run: every count bounded, so no flag can exhaust the machine by accident.
    public func validate() throws(ScenarioError) {
        func check(_ ok: Bool, _ m: String) throws(ScenarioError) { if !ok { throw ScenarioError(line: 0, m) } }
        try check((1...100_000).contains(locks), "--locks must be 1…100000 (got \(locks))")
        try check((1...100_000).contains(phones), "--phones must be 1…100000 (got \(phones))")
        try check((1...1024).contains(workers), "--workers must be 1…1024 (got \(workers))")
        try check(taps.map { (1...100_000_000).contains($0) } ?? true, "--taps must be 1…100000000")
        try check(duration.map { $0.isFinite && $0 > 0 && $0 <= 86_400 } ?? true, "--duration must be more than 0 and at most 24h")
        try check(rate.isFinite && rate >= 0 && rate <= 1_000_000, "--rate must be 0 (unlimited) … 1000000 taps/s")
        try check(foreignPercent.isFinite && (0...100).contains(foreignPercent), "--foreign must be 0…100 (percent)")
        try check((0...phones).contains(revoke), "--revoke must be 0…\(phones) (the number of phones; each holds one grant)")
        try check(foreignPercent == 0 || locks > 1, "--foreign needs at least 2 locks (a lock the phone holds no grant for)")
        if let a = revokeAfterTaps, let t = taps { try check(a < t, "--revoke-after must be less than --taps (\(t))") }
        try check(pollEvery.isFinite && pollEvery >= 0, "--poll-every must be a duration or 0")
    }
}

/// The summary of one fleet run: what the workers counted as they tapped, what the phones
/// recorded, and what the locks' audit logs hold afterwards (counted independently).
public struct FleetSummary: Codable, Sendable, Equatable {
    public struct Latency: Codable, Sendable, Equatable {
        /// Milliseconds, wall time of one whole tap (protocol, decision, durable record).
        public var p50: Double, p95: Double, p99: Double, max: Double
    }
    public struct Revocation: Codable, Sendable, Equatable {
        /// Grants revoked (one phone each) and the revocation list serial that carries them.
        public var grants: Int
        public var serial: UInt64?
        /// From the first revocation until every phone has polled (the revoked ones delete their
        /// key, every one fetches the new list to carry to the locks), seconds.
        public var fanOutSeconds: Double
        /// Revoked phones whose poll deleted the key.
        public var phonesUpdated: Int
        /// Phones that hold the new revocation list after the fan-out.
        public var phonesCarrying: Int
        /// Taps by a revoked phone at a lock that already held the list, and how many of them were
        /// granted (must be 0).
        public var tapsAfter: Int
        public var grantedAfter: Int
        /// Taps by a revoked phone at a lock the list had not reached yet: an offline lock still
        /// honours the document it cached until a list reaches it (docs/trust.md), so these may open.
        public var tapsBeforeListReached: Int
        public var grantedBeforeListReached: Int
        /// Locks holding the list at the end of the run.
        public var locksHolding: Int
    }
    public var locks: Int
    public var phones: Int
    public var workers: Int
    public var clock: String
    public var taps: Int
    public var granted: Int
    public var denied: Int
    /// Denials by refusal code (`unknown_credential`, `storage_failure`, …).
    public var deniedBy: [String: Int]
    /// Phone polls (successful, unchanged or failed), logins and silent token refreshes.
    public var polls: Int
    public var pollFailures: Int
    public var logins: Int
    public var refreshes: Int
    public var latency: Latency
    /// The load phase (wall) and the set-up before it.
    public var seconds: Double
    public var setupSeconds: Double
    public var tapsPerSecond: Double
    /// Decisions (grant + deny entries) in every lock's verified audit log after the run.
    public var auditDecisions: Int
    /// fsync requests of the locks' journals and the flushes that served them (group commit).
    public var fsyncRequests: Int?
    public var flushes: Int?
    public var revocation: Revocation?
    /// Peak resident memory of the process (VmHWM), MiB.
    public var peakRSSMiB: Double?
    /// The run was stopped early (Ctrl-C): the counts are those of the taps made until then.
    public var interrupted: Bool? = nil

    /// Every decision durable and counted, no storage failure, no revoked phone let in.
    public var consistent: Bool {
        auditDecisions == taps && granted + denied == taps && deniedBy["storage_failure", default: 0] == 0
            && (revocation?.grantedAfter ?? 0) == 0
    }
}

/// Progress while the load runs.
public struct FleetProgress: Sendable {
    public var taps: Int
    public var target: Int?
    public var granted: Int
    public var denied: Int
    public var seconds: Double
}

/// Runs a `FleetPlan`: builds the world (site, service over HTTP, locks, phones logged in), taps,
/// optionally revokes, then counts.
public final class FleetRunner: Sendable {
    public let plan: FleetPlan
    /// Called about twice a second during the load (from a background thread).
    public let progress: (@Sendable (FleetProgress) -> Void)?
    /// Called with a line at each set-up stage.
    public let stage: (@Sendable (String) -> Void)?

    public init(plan: FleetPlan, stage: (@Sendable (String) -> Void)? = nil, progress: (@Sendable (FleetProgress) -> Void)? = nil) {
        self.plan = plan; self.stage = stage; self.progress = progress
    }

    /// Set by `interrupt()`: no tap starts after it; the taps in flight finish and are counted.
    let interruption = Load.Flag()

    /// Ends the load early (Ctrl-C): `run()` returns the summary of the taps made so far, then
    /// removes its temporary directory as at the end of any run.
    public func interrupt() { interruption.value = true }
    public var isInterrupted: Bool { interruption.value }

    struct Actor { let phone: VirtualPhone; let lock: Int }

    public func run() async throws -> FleetSummary {
        try plan.validate()
        let setupStart = Date()
        let commit = plan.groupCommit ? GroupCommit() : nil
        let world = try World(clockMode: plan.clock, transport: MemoryTap(), directory: plan.directory, io: commit?.io ?? .system)
        do {
            let summary = try await run(in: world, commit: commit, setupStart: setupStart)
            await world.shutdown()
            return summary
        } catch {
            await world.shutdown()
            throw error
        }
    }

    private func run(in world: World, commit: GroupCommit?, setupStart: Date) async throws -> FleetSummary {
        let service = try await world.trust()
        guard let site = await world.site, let client = await world.client else { throw ScenarioError(line: 0, "no site") }
        // Locks, opened in parallel (each creates its state directory, key and first snapshot).
        stage?("opening \(plan.locks) lock(s)")
        let locks = try await Self.parallel(plan.locks, width: 16) { i in try world.makeLock("L\(i)", site: site) }
        for (i, l) in locks.enumerated() { await world.add("L\(i)", l) }
        // Phones: device, grant on lock i mod N, login (which polls: the key arrives).
        stage?("enrolling \(plan.phones) phone(s)")
        var options = VirtualPhone.Options()
        options.pollEvery = plan.pollEvery
        let phones: [VirtualPhone] = try await Self.parallel(plan.phones, width: 16) { [plan, options] i in
            let id = "P\(i)"
            let phone = VirtualPhone(id: id, client: client, clock: world.clock, options: options)
            phone.reauthorize = { device in try? await service.enroll(device: device) }
            _ = try await service.addDevice(id: id, user: "u\(i)", credentialKey: phone.publicKey)
            _ = try await service.addGrant(id: "g\(i)", user: "u\(i)", readers: [Hex.encode(locks[i % plan.locks].group)])
            let code = try await service.enroll(device: id)
            if case .failed(let why) = await phone.login(code: code) { throw ScenarioError(line: 0, "phone \(id) could not log in: \(why)") }
            guard phone.keys.count == 1 else { throw ScenarioError(line: 0, "phone \(id) holds \(phone.keys.count) keys after login, expected 1") }
            return phone
        }
        for p in phones { await world.add(p) }
        let setupSeconds = Date().timeIntervalSince(setupStart)
        stage?("tapping")

        let load = Load(plan: plan, phones: phones, locks: locks, world: world, service: service,
                        interruption: interruption, progress: progress)
        var result = await load.run()
        if result.revocation != nil, let signed = load.revocationListSigned {
            result.revocation!.locksHolding = locks.filter { Load.listSigned(of: $0.service) >= signed }.count
        }

        // Independent counts: every lock's audit log, verified (the MAC chain), decisions counted.
        var auditDecisions = 0
        for l in locks { l.service.flush() }
        for i in 0..<plan.locks {
            let dir = world.directory + "/lock-L\(i)/state"
            let (entries, damage) = try AuditLog.verify(directory: dir)
            if let damage { throw ScenarioError(line: 0, "lock L\(i)'s audit log is damaged: \(damage)") }
            auditDecisions += entries.filter { $0.decision == "grant" || $0.decision == "deny" }.count
        }
        var polls = 0, failures = 0, logins = 0, refreshes = 0
        for p in phones {
            for e in p.events {
                switch e.kind {
                case .polled, .unchanged: polls += 1
                case .pollFailed: polls += 1; failures += 1
                case .loggedIn: logins += 1
                case .refreshed: refreshes += 1
                default: break
                }
            }
        }
        let counts = commit?.counts
        return FleetSummary(
            locks: plan.locks, phones: plan.phones, workers: plan.workers, clock: plan.clock.rawValue,
            taps: result.taps, granted: result.granted, denied: result.taps - result.granted, deniedBy: result.deniedBy,
            polls: polls, pollFailures: failures, logins: logins, refreshes: refreshes,
            latency: result.latency, seconds: result.seconds, setupSeconds: setupSeconds,
            tapsPerSecond: result.seconds > 0 ? Double(result.taps) / result.seconds : 0,
            auditDecisions: auditDecisions, fsyncRequests: counts?.requests, flushes: counts?.flushes,
            revocation: result.revocation, peakRSSMiB: Self.peakRSSMiB(), interrupted: interruption.value ? true : nil)
    }

    /// VmHWM from /proc/self/status, MiB (nil where there is no procfs).
    public static func peakRSSMiB() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kb = line.split(separator: " ").compactMap { Double($0) }.first
            return kb.map { $0 / 1024 }
        }
        return nil
    }

    /// Runs `body(0..<count)` with at most `width` at once; results in index order.
    static func parallel<T: Sendable>(_ count: Int, width: Int, _ body: @escaping @Sendable (Int) async throws -> T) async throws -> [T] {
        try await withThrowingTaskGroup(of: (Int, T).self) { group in
            var results = [T?](repeating: nil, count: count)
            var next = 0
            while next < min(width, count) { let i = next; group.addTask { (i, try await body(i)) }; next += 1 }
            while let (i, value) = try await group.next() {
                results[i] = value
                if next < count { let j = next; group.addTask { (j, try await body(j)) }; next += 1 }
            }
            return results.map { $0! }
        }
    }
}

/// The load phase: worker threads claim tap numbers, pace them to the rate, tap, and count.
final class Load: Sendable {
    struct Result {
        var taps = 0, granted = 0
        var deniedBy: [String: Int] = [:]
        var latency = FleetSummary.Latency(p50: 0, p95: 0, p99: 0, max: 0)
        var seconds = 0.0
        var revocation: FleetSummary.Revocation?
    }

    /// What the workers count, the monitor reads and the fan-out sets, under `state`.
    struct Counts: Sendable {
        var claimed = 0
        var finished = 0
        var granted = 0
        var deniedBy: [String: Int] = [:]
        var samples: [UInt64] = []
        var seen = 0
        var sampler: SplitMix64
        var revoked: Set<Int> = []
        var revocationStarted = false
        var revocationDone = false
        var revocation: FleetSummary.Revocation?
        /// The signed time of the list the fan-out published: a lock holding a list signed then
        /// or later has it (the document carries no serial).
        var revocationListSigned: Date?
    }

    let plan: FleetPlan
    var revocationListSigned: Date? { state.withLock { $0.revocationListSigned } }
    let interruption: Flag
    let phones: [VirtualPhone]
    let locks: [World.LockEntry]
    let world: World
    let service: TrustService
    let progress: (@Sendable (FleetProgress) -> Void)?
    private let state: Mutex<Counts>
    /// When the load began (the run starts right after the load is made), uptime nanoseconds.
    private let start = DispatchTime.now().uptimeNanoseconds
    /// Where a worker thread asks for the revocation fan-out; the run's task carries it out (the
    /// fan-out is async: the service and the phones' polls), the worker taps on.
    private let fanOutRequests: AsyncStream<Void>.Continuation
    private let fanOutRequested: AsyncStream<Void>
    static let sampleCap = 1 << 20

    init(plan: FleetPlan, phones: [VirtualPhone], locks: [World.LockEntry], world: World, service: TrustService,
         interruption: Flag = Flag(), progress: (@Sendable (FleetProgress) -> Void)? = nil) {
        self.plan = plan; self.phones = phones; self.locks = locks; self.world = world; self.service = service
        self.interruption = interruption; self.progress = progress
        state = Mutex(Counts(sampler: SplitMix64(seed: plan.seed ^ 0x5A17)))
        (fanOutRequested, fanOutRequests) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    var target: Int? { plan.taps ?? (plan.duration == nil ? 1000 : nil) }

    func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

    /// The next tap number, or nil when the run is over.
    func claim() -> Int? {
        if interruption.value { return nil }
        return state.withLock { c -> Int? in
            if let t = target, c.claimed >= t { return nil }
            if let d = plan.duration, elapsed() >= d { return nil }
            c.claimed += 1
            return c.claimed - 1
        }
    }

    func run() async -> Result {
        let done = DispatchGroup()
        let stop = Flag()
        let fanOuts = Task { [self] in
            for await _ in fanOutRequested { await fanOut(); break }
        }
        for w in 0..<plan.workers {
            done.enter()
            let thread = Thread { [self] in work(); done.leave() }
            thread.name = "fleet-\(w)"
            thread.start()
        }
        let monitor = Thread { [self] in
            while !stop.value {
                Thread.sleep(forTimeInterval: 0.5)
                if stop.value { break }
                let p = state.withLock { FleetProgress(taps: $0.finished, target: target, granted: $0.granted, denied: $0.finished - $0.granted, seconds: elapsed()) }
                progress?(p)
            }
        }
        if progress != nil { monitor.start() }
        let poller = plan.pollEvery > 0 ? Task { [self] in await pollDue(until: stop) } : nil
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in done.notify(queue: .global()) { c.resume() } }
        let seconds = elapsed()
        stop.value = true
        fanOutRequests.finish()
        await fanOuts.value
        await poller?.value
        return state.withLock { c in
            var r = Result()
            r.taps = c.finished; r.granted = c.granted; r.deniedBy = c.deniedBy; r.seconds = seconds; r.revocation = c.revocation
            let sorted = c.samples.sorted()
            func at(_ q: Double) -> Double {
                guard !sorted.isEmpty else { return 0 }
                let rank = max(0, Int((Double(sorted.count) * q).rounded(.up)) - 1)     // nearest rank
                return Double(sorted[min(sorted.count - 1, rank)]) / 1e6
            }
            r.latency = .init(p50: at(0.50), p95: at(0.95), p99: at(0.99), max: Double(sorted.last ?? 0) / 1e6)
            return r
        }
    }

    /// The tap `n` is: which phone, at which lock (its own, or with `foreignPercent` another).
    func choice(_ n: Int) -> (phone: Int, lock: Int) {
        var rng = SplitMix64(seed: plan.seed &+ UInt64(n) &* 0x9E37_79B9_7F4A_7C15)
        let phone = Int(rng.next() % UInt64(phones.count))
        let own = phone % locks.count
        if plan.foreignPercent > 0, Double(rng.next() % 10_000) < plan.foreignPercent * 100 {
            let other = Int(rng.next() % UInt64(locks.count - 1))
            return (phone, other >= own ? other + 1 : other)
        }
        return (phone, own)
    }

    var revokeAt: Int? {
        guard plan.revoke > 0 else { return nil }
        if let a = plan.revokeAfterTaps { return a }
        if let t = target { return t / 2 }
        return nil
    }

    func work() {
        while let n = claim() {
            if plan.rate > 0 {
                let due = start + UInt64(Double(n) / plan.rate * 1e9)
                let now = DispatchTime.now().uptimeNanoseconds
                if due > now { Thread.sleep(forTimeInterval: Double(due - now) / 1e9) }
            }
            if let at = revokeAt, n == at { fanOutRequests.yield() }
            else if revokeAt == nil, plan.revoke > 0, state.withLock({ $0.revocation == nil && !$0.revocationStarted }), elapsed() >= 1 {
                let mine = state.withLock { c -> Bool in if c.revocationStarted { return false }; c.revocationStarted = true; return true }
                if mine { fanOutRequests.yield() }
            }
            let (p, l) = choice(n)
            let phone = phones[p], lock = locks[l]
            let (revokedPhone, listSigned) = state.withLock { ($0.revocationDone && $0.revoked.contains(p), $0.revocationListSigned ?? .distantFuture) }
            let listReached = revokedPhone && Self.listSigned(of: lock.service) >= listSigned
            let responder = PhoneResponder(phone: phone, trusting: [lock.reader], interface: world.transport.interface)
            let t0 = DispatchTime.now().uptimeNanoseconds
            let outcome = (try? world.transport.tap(responder, on: lock.service))
            let ns = DispatchTime.now().uptimeNanoseconds - t0
            state.withLock { c in
                c.finished += 1
                var code = "tap_failed"
                if let outcome {
                    if outcome.decision.isGrant { c.granted += 1 } else { code = outcome.decision.refusal?.code ?? "deny" }
                }
                if outcome?.decision.isGrant != true { c.deniedBy[code, default: 0] += 1 }
                if revokedPhone, c.revocation != nil {
                    let opened = outcome?.decision.isGrant == true
                    if listReached {
                        c.revocation!.tapsAfter += 1
                        if opened { c.revocation!.grantedAfter += 1 }
                    } else {
                        c.revocation!.tapsBeforeListReached += 1
                        if opened { c.revocation!.grantedBeforeListReached += 1 }
                    }
                }
                // Reservoir sample of latencies (bounded memory over any duration).
                c.seen += 1
                if c.samples.count < Self.sampleCap { c.samples.append(ns) } else {
                    let j = Int(c.sampler.next() % UInt64(c.seen))
                    if j < Self.sampleCap { c.samples[j] = ns }
                }
            }
        }
    }

    /// Revokes `plan.revoke` grants (phones chosen by the seed), tells every affected phone to
    /// poll, all at once, and waits until they have.
    func fanOut() async {
        state.withLock { $0.revocationStarted = true }
        var rng = SplitMix64(seed: plan.seed ^ 0xFA_2011)
        var order = Array(0..<phones.count)
        for i in stride(from: order.count - 1, to: 0, by: -1) { order.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
        let chosen = Array(order.prefix(plan.revoke))
        let began = DispatchTime.now().uptimeNanoseconds
        let (service, phones) = (self.service, self.phones)
        // The revocations, then every phone polls at once (the revoked ones on the change's
        // trigger, the others as a wake-up would make them), 32 at a time.
        var serial: UInt64?
        var triggers: [Int: PollTrigger] = [:]
        for p in chosen {
            guard let change = try? await service.revokeGrant(id: "g\(p)", reason: "fleet fan-out") else { continue }
            serial = max(serial ?? 0, change.revocationSerial ?? 0)
            for a in change.affected where a.device == phones[p].id { triggers[p] = a.trigger }
        }
        let triggered = triggers
        _ = try? await FleetRunner.parallel(phones.count, width: 32) { i in
            await phones[i].poll(trigger: triggered[i] ?? .manual)
        }
        let outcome = (updated: chosen.filter { phones[$0].keys.isEmpty }.count, serial: serial)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
        let carrying = phones.filter { ($0.revocationSerial ?? 0) >= (outcome.serial ?? .max) }.count
        let listSigned = (try? await service.revocationList()).flatMap { $0 }.flatMap { try? RevocationDocument(parsing: $0.document) }?.issued
        state.withLock { c in
            c.revocationListSigned = listSigned
            c.revoked = Set(chosen)
            c.revocation = .init(grants: chosen.count, serial: outcome.serial, fanOutSeconds: seconds, phonesUpdated: outcome.updated,
                               phonesCarrying: carrying, tapsAfter: 0, grantedAfter: 0, tapsBeforeListReached: 0,
                               grantedBeforeListReached: 0, locksHolding: 0)
            c.revocationDone = true
        }
    }

    /// The signed time of the newest revocation list a lock holds (distant past: none).
    static func listSigned(of lock: LockService) -> Date {
        lock.lock.engine.state.revocationLists.values.map(\.issued).max() ?? .distantPast
    }

    /// Scheduled polls (system clock): every second, the phones whose poll is due.
    func pollDue(until stop: Flag) async {
        while !stop.value {
            try? await Task.sleep(nanoseconds: 1_000_000_000)
            let now = world.clock.now()
            for p in phones where !stop.value {
                if let due = p.nextScheduledPoll, due <= now { await p.poll(trigger: .schedule) }
            }
        }
    }

    final class Flag: Sendable {
        private let state = Mutex(false)
        var value: Bool { get { state.withLock { $0 } } set { state.withLock { $0 = newValue } } }
    }
}

