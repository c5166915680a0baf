import ArgumentParser
import Dispatch
import Foundation
import Synchronization
import Push
import Scenario
import TrustModel

/// `lockbench-bench push`: the trust service's push path, each figure against a baseline measured
/// in the same run:
///
/// - revocation to denial, all online: revoke → push → poll → revocation carried (another phone
///   steps up with the new list) → tap → deny, over the socket transport and the virtual PN532, vs
///   the same two taps without the revocation;
/// - fan-out: one revocation affecting N devices (10,000) queues every push through the relay's
///   rules within 1 s, none over 4096 bytes, vs building the same N payloads without the relay.
enum PushBenchmark {
    /// The measured segment runs from the `grant revoke` line to the end of alice's denied tap.
    static func script(revoke: Bool) throws -> ScenarioScript {
        try ScenarioScript(parsing: """
            clock set 2026-03-02T08:00:00Z
            lock front
            phone alice user alice
            phone bob user bob
            grant add ga alice front
            grant add gb bob front
            phone alice login
            phone bob login
            tap alice front expect granted
            \(revoke ? "grant revoke ga reason bench" : "expect alice keys 1")
            tap bob front expect granted
            tap alice front expect \(revoke ? "denied" : "granted")
            expect alice keys \(revoke ? 0 : 1)
            """, name: revoke ? "revocation-to-denial" : "two-taps")
    }

    final class Marks: Sendable {
        private let marks = Mutex<(start: UInt64, end: UInt64)>((0, 0))
        func mark(_ line: String) {
            let now = DispatchTime.now().uptimeNanoseconds
            marks.withLock { m in
                if line.contains(":10: ") { m.start = now }
                if line.contains(":13: ") { m.end = now }
            }
        }
        var ms: Double { marks.withLock { Double($0.end &- $0.start) / 1e6 } }
    }

    /// p95 (ms) of the measured segment over `runs` fresh scenarios on `transport`.
    static func segment(revoke: Bool, runs: Int, transport: TapTransport, clock: ScenarioRunner.ClockMode) async throws -> (p50: Double, p95: Double) {
        var samples = [Double]()
        let s = try script(revoke: revoke)
        for _ in 0..<runs {
            let marks = Marks()
            let runner = ScenarioRunner(transport: transport, clockMode: clock, trace: { marks.mark($0) })
            let r = await runner.run(s)
            guard r.status == .passed else { throw PushRefusal.invalidArgument("\(s.name) \(r.status.rawValue) at line \(r.line ?? 0): \(r.message ?? "")") }
            samples.append(marks.ms)
        }
        samples.sort()
        return (samples[samples.count / 2], samples[min(samples.count - 1, Int(Double(samples.count) * 0.95))])
    }

    static func fanOut(devices: Int) async throws -> (seconds: Double, baseline: Double, largest: Int, queued: Int) {
        let relay = PushRelay(clock: ManualClock(Date(timeIntervalSince1970: 1_772_438_400)))
        let notifier = TrustPushNotifier(relay: relay)
        let counter = Counter()
        for d in 0..<devices {
            let token = "fleet-\(d)-token"
            try relay.register(token: token, device: PushDevice { _, _ in counter.add(); return true })
            notifier.register(device: "fleet-\(d)", token: token)
        }
        let affected: [(device: String, trigger: PollTrigger)] = (0..<devices).map { ("fleet-\($0)", .grantRevoked) }
        // Baseline: the same payloads built and measured, no relay.
        let b0 = DispatchTime.now().uptimeNanoseconds
        var largest = 0
        for a in affected { largest = max(largest, PushRules.compactJSON(TrustPushNotifier.data(device: a.device, trigger: a.trigger)).utf8.count) }
        let baseline = Double(DispatchTime.now().uptimeNanoseconds - b0) / 1e9
        let t0 = DispatchTime.now().uptimeNanoseconds
        let queued = await notifier.notify(affected)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
        let delivered = relay.log.filter { $0.fate == .delivered }
        let relayLargest = delivered.map { PushRules.compactJSON($0.data).utf8.count }.max() ?? 0
        guard counter.value == devices, delivered.count == devices else {
            throw PushRefusal.invalidArgument("fan-out reached \(counter.value) of \(devices) devices")
        }
        return (seconds, baseline, max(largest, relayLargest), queued)
    }

    final class Counter: Sendable {
        private let n = Atomic(0)
        func add() { n.add(1, ordering: .relaxed) }
        var value: Int { n.load(ordering: .relaxed) }
    }

    static func run(runs: Int, devices: Int, pn532: Bool, report: BenchReport) async throws -> Int32 {
        func f(_ x: Double, _ d: Int = 1) -> String { String(format: "%.\(d)f", x) }
        report.say("push benchmark: \(runs) scenario runs per figure, fan-out to \(devices) devices")
        let socket = try await segment(revoke: true, runs: runs, transport: SocketTap(), clock: .virtual)
        let socketBase = try await segment(revoke: false, runs: runs, transport: SocketTap(), clock: .virtual)
        var rows = [String]()
        var ok = true
        let socketOK = socket.p95 <= 100
        ok = ok && socketOK
        report.figure("socket: the two taps alone, p95", socketBase.p95, "ms")
        report.figure("socket: revocation → denial, p95", socket.p95, "ms", baseline: "socket: the two taps alone, p95", goal: "≤ 100 ms", met: socketOK)
        rows.append("| revocation → denial, all online, socket (revoke → push → poll → carried → tap → deny) | p50 \(f(socket.p50)) ms, p95 \(f(socket.p95)) ms | the two taps alone: p95 \(f(socketBase.p95)) ms | \(f(socket.p95 / max(socketBase.p95, 0.001), 2)) | p95 ≤ 100 ms | \(socketOK ? "yes" : "no") |")
        if pn532 {
            let tap = RadioTap(.pn532)
            defer { tap.close() }
            let nfc = try await segment(revoke: true, runs: runs, transport: tap, clock: .system)
            let nfcBase = try await segment(revoke: false, runs: runs, transport: tap, clock: .system)
            let nfcOK = nfc.p95 <= 150
            ok = ok && nfcOK
            report.figure("virtual PN532: the two taps alone, p95", nfcBase.p95, "ms")
            report.figure("virtual PN532: revocation → denial, p95", nfc.p95, "ms", baseline: "virtual PN532: the two taps alone, p95", goal: "≤ 150 ms", met: nfcOK)
            rows.append("| revocation → denial, all online, virtual PN532 | p50 \(f(nfc.p50)) ms, p95 \(f(nfc.p95)) ms | the two taps alone: p95 \(f(nfcBase.p95)) ms | \(f(nfc.p95 / max(nfcBase.p95, 0.001), 2)) | p95 ≤ 150 ms | \(nfcOK ? "yes" : "no") |")
        }
        let fan = try await fanOut(devices: devices)
        let fanOK = fan.seconds <= 1 && fan.largest <= PushRules.maxPayloadBytes && fan.queued == devices
        ok = ok && fanOK
        report.figure("fan-out: building the payloads alone", fan.baseline * 1000, "ms")
        report.figure("fan-out: one revocation to \(devices) devices through the relay", fan.seconds * 1000, "ms",
                      baseline: "fan-out: building the payloads alone", goal: "≤ 1 s, none > 4096 bytes, all queued", met: fanOK)
        rows.append("| fan-out: one revocation, \(devices) devices, every push through the relay's rules | \(fan.queued) queued in \(f(fan.seconds * 1000)) ms, largest \(fan.largest) bytes | building the payloads alone: \(f(fan.baseline * 1000)) ms | \(f(fan.seconds / max(fan.baseline, 1e-6), 1)) | ≤ 1 s, none > 4096 bytes | \(fanOK ? "yes" : "no") |")
        report.say("| figure | measured | baseline (same run) | ratio | target | met |")
        report.say("|---|---|---|---|---|---|")
        rows.forEach { report.say($0) }
        return ok ? 0 : 1
    }
}

extension LockBenchBench {
    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "push",
            abstract: "Revocation to denial through push (socket and virtual PN532) and a 10,000-device push fan-out, each against a baseline.")
        @Option(help: "Scenario runs per figure (p95 over them).") var runs = 20
        @Option(help: "Devices a revocation fans out to.") var devices = 10_000
        @Flag(help: "Skip the virtual PN532 figure (it needs libnfc).") var noPn532 = false
        @Flag(help: "Print the results as one JSON document (the text goes to standard error).") var json = false

        func validate() throws {
            guard (1...10_000).contains(runs) else { throw ValidationError("--runs is 1…10000") }
            guard (1...1_000_000).contains(devices) else { throw ValidationError("--devices is 1…1000000") }
        }

        func run() async throws {
            let report = BenchReport("push", parameters: ["runs": "\(runs)", "devices": "\(devices)", "pn532": "\(!noPn532)"], json: json)
            let code: Int32
            do { code = report.finish(try await PushBenchmark.run(runs: runs, devices: devices, pn532: !noPn532, report: report)) } catch {
                code = report.finish(3, error: "push benchmark failed: \(error)")
            }
            if code != 0 { throw ExitCode(code) }
        }
    }
}

