import ByteCore
import Foundation

/// JUnit XML for CI: one testsuite, one testcase per scenario, a <failure> naming the line.
public enum JUnitReport {
    public static func xml(_ results: [ScenarioResult], suite: String = "lockbench-scenarios") -> String {
        JUnitSuite(name: suite, cases: results.map { r in
            let message = "line \(r.line ?? 0): \(r.command ?? ""): \(r.message ?? "")"
            let outcome: JUnitSuite.Outcome = switch r.status {
            case .passed: .passed
            case .failed: .failure(message: message, body: message)
            case .error: .error(message: message, body: message)
            }
            return JUnitSuite.TestCase(classname: "scenario", name: r.name, seconds: r.seconds, outcome: outcome)
        }).xml()
    }
}
