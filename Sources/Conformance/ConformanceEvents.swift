import Foundation

/// What `conformance … --events unix:PATH` publishes for a bench console, one JSON line each:
/// `conformance-started` (direction, transport, the checks planned), a `check` as each ends (its
/// result, with `index` and `total`), and `conformance-finished` with the counts the report gives.
public enum ConformanceEvents {
    struct Started: Encodable {
        var kind = "conformance-started"
        var time: String
        var direction: String
        var transport: String
        var total: Int
        var checks: [String]
    }
    struct Check: Encodable {
        var kind = "check"
        var index: Int
        var total: Int
        var result: CheckResult
    }
    struct Finished: Encodable {
        var kind = "conformance-finished"
        var summary: String
        var passed: Int, failed: Int, advisoriesFailed: Int, notApplicable: Int, notRun: Int
        var interrupted: Bool
    }

    public static func started(direction: String, transport: String, checks: [String], at time: Date) -> String {
        line(Started(time: ISO8601DateFormatter().string(from: time), direction: direction, transport: transport, total: checks.count, checks: checks))
    }

    /// Check `index` (from 0) of `total` has ended with `result`.
    public static func check(_ result: CheckResult, index: Int, total: Int) -> String {
        line(Check(index: index, total: total, result: result))
    }

    public static func finished(_ report: ConformanceReport, interrupted: Bool) -> String {
        line(Finished(summary: report.summary, passed: report.passed, failed: report.failed, advisoriesFailed: report.advisoriesFailed,
                      notApplicable: report.notApplicable, notRun: report.notRun, interrupted: interrupted))
    }

    private static func line<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self)
    }
}
