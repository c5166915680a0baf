import Synchronization

/// A conformance run in progress: the checks in their order and the results so far. The run
/// itself goes on one thread; another (a Ctrl-C handler) may read the report so far at any time,
/// with the checks not yet finished as `not run`.
public final class ConformanceRun: Sendable {
    public let direction: String
    public let transport: String
    /// Every check as `not run`, in order: what the report holds before each one ends.
    private let planned: [CheckResult]
    private let finished: Mutex<[CheckResult?]>

    public init<S, P>(_ checks: [ConformanceCheck<S, P>], direction: String, transport: String) {
        self.direction = direction
        self.transport = transport
        planned = checks.map(\.notRun)
        finished = Mutex([CheckResult?](repeating: nil, count: checks.count))
    }

    public var total: Int { planned.count }
    public var done: Int { finished.withLock { $0.compactMap { $0 }.count } }
    /// The widest check id: lines printed one by one still align.
    public var idWidth: Int { planned.map(\.id.count).max() ?? 0 }

    /// Runs the checks in order: `starting` before each (index, check), `ended` after each with
    /// its result, which the report holds from then on.
    public func run<S, P>(_ checks: [ConformanceCheck<S, P>], _ subject: S, _ profile: P,
                          starting: (Int, ConformanceCheck<S, P>) -> Void = { _, _ in },
                          ended: (Int, CheckResult) -> Void = { _, _ in }) {
        for (i, check) in checks.enumerated() where i < planned.count {
            starting(i, check)
            let result = check.evaluate(subject, profile)
            finished.withLock { $0[i] = result }
            ended(i, result)
        }
    }

    /// The report so far: finished checks with their verdicts, the others `not run`.
    public var report: ConformanceReport {
        let done = finished.withLock { $0 }
        return ConformanceReport(direction: direction, transport: transport,
                                 results: planned.indices.map { done[$0] ?? planned[$0] })
    }
}
