import ByteCore
import Dispatch

/// What one check concluded.
public enum CheckStatus: String, Codable, Sendable {
    case pass
    case fail
    case notApplicable = "not_applicable"
    /// The run ended (Ctrl-C) before this check did.
    case notRun = "not_run"
}

/// A check's conclusion with its reason; on a byte mismatch, the bytes expected and seen.
public struct CheckVerdict: Equatable, Sendable {
    public var status: CheckStatus
    public var reason: String
    public var expected: [UInt8]?
    public var actual: [UInt8]?

    public static func pass(_ reason: String) -> CheckVerdict { CheckVerdict(status: .pass, reason: reason) }
    public static func notApplicable(_ reason: String) -> CheckVerdict { CheckVerdict(status: .notApplicable, reason: reason) }
    public static func fail(_ reason: String, expected: [UInt8]? = nil, actual: [UInt8]? = nil) -> CheckVerdict {
        CheckVerdict(status: .fail, reason: reason, expected: expected, actual: actual)
    }

    /// Index of the first byte where `expected` and `actual` differ (the shorter one's length
    /// when one is a prefix of the other); nil when they are equal or not both known.
    public var firstDifference: Int? {
        guard let e = expected, let a = actual, e != a else { return nil }
        return (0..<min(e.count, a.count)).first { e[$0] != a[$0] } ?? min(e.count, a.count)
    }
}

/// Thrown inside a check's run to end it with a verdict (a step that could not go on).
public struct CheckStop: Error {
    public var verdict: CheckVerdict
    public init(_ verdict: CheckVerdict) { self.verdict = verdict }
}

/// One behaviour of docs/protocol.md, run against a device LockBench did not build.
///
/// `Subject` is what the check drives: a link factory for a phone under test, or a phone harness
/// facing a reader under test. `applicable` answers nil when the check applies to what the
/// device announced, or the reason it does not.
public struct ConformanceCheck<Subject, Profile>: Sendable {
    /// Stable LockBench id, e.g. `auth1.bad-reader-signature`.
    public var id: String
    /// The Aliro Certification Tool case (test plan 0.7.5.1a) this check matches, when one does;
    /// its verdict rule is then that case's pass criteria, no stricter and no looser.
    public var officialCase: String?
    /// A rule of LockBench's own that no official case states: its failure is printed and counted
    /// but changes the exit status only under `--strict`.
    public var advisory: Bool
    /// How many transactions (connections, taps) the check needs from the device under test.
    public var transactions: Int
    /// The docs/protocol.md section it checks, e.g. `§6`.
    public var section: String
    public var title: String
    public var applicable: @Sendable (Profile) -> String?
    public var run: @Sendable (Subject, Profile) throws -> CheckVerdict

    public init(_ id: String, official: String? = nil, advisory: Bool = false, transactions: Int = 1, section: String, title: String,
                applicable: @escaping @Sendable (Profile) -> String? = { _ in nil },
                run: @escaping @Sendable (Subject, Profile) throws -> CheckVerdict) {
        self.id = id
        self.officialCase = official
        self.advisory = advisory
        self.transactions = transactions
        self.section = section
        self.title = title
        self.applicable = applicable
        self.run = run
    }

    /// Runs the check; any error a step throws becomes a failure naming it.
    public func evaluate(_ subject: Subject, _ profile: Profile) -> CheckResult {
        let clock = { DispatchTime.now().uptimeNanoseconds }
        let started = clock()
        let verdict: CheckVerdict
        if let why = applicable(profile) {
            verdict = .notApplicable(why)
        } else {
            do { verdict = try run(subject, profile) } catch let stop as CheckStop {
                verdict = stop.verdict
            } catch {
                verdict = .fail("\(error)")
            }
        }
        return CheckResult(id: id, officialCase: officialCase, section: section, title: title, verdict: verdict,
                           seconds: Double(clock() - started) / 1e9, advisory: advisory)
    }

    /// This check's line in a report before it ran (or when the run ended first).
    public var notRun: CheckResult {
        CheckResult(id: id, officialCase: officialCase, section: section, title: title,
                    verdict: CheckVerdict(status: .notRun, reason: "not run"), seconds: 0, advisory: advisory)
    }
}

/// A check's result as reported.
public struct CheckResult: Codable, Equatable, Sendable {
    public var id: String
    public var officialCase: String?
    public var section: String
    public var title: String
    public var status: CheckStatus
    public var reason: String
    public var expected: String?
    public var actual: String?
    /// Byte offset of the first difference between expected and actual.
    public var firstDifference: Int?
    public var seconds: Double
    /// A rule of LockBench's own, not an official case's (see `ConformanceCheck.advisory`).
    public var advisory: Bool

    public init(id: String, officialCase: String?, section: String, title: String, verdict: CheckVerdict, seconds: Double, advisory: Bool = false) {
        self.id = id
        self.advisory = advisory
        self.officialCase = officialCase
        self.section = section
        self.title = title
        self.status = verdict.status
        self.reason = verdict.reason
        self.expected = verdict.expected?.hex
        self.actual = verdict.actual?.hex
        self.firstDifference = verdict.firstDifference
        self.seconds = seconds
    }
}

