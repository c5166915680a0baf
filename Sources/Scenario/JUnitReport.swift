import ByteCore
import Foundation

/// JUnit XML for CI: one testsuite, one testcase per scenario, a <failure> naming the line.
public enum JUnitReport {
    public static func xml(_ results: [ScenarioResult], suite: String = "lockbench-scenarios") -> String {
        let failures = results.filter { $0.status == .failed }.count
        let errors = results.filter { $0.status == .error }.count
        let total = results.reduce(0) { $0 + $1.seconds }
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuite name=\"\(XMLText.escaped(suite))\" tests=\"\(results.count)\" failures=\"\(failures)\" errors=\"\(errors)\" time=\"\(String(format: "%.3f", total))\">\n"
        for r in results {
            out += "  <testcase classname=\"scenario\" name=\"\(XMLText.escaped(r.name))\" time=\"\(String(format: "%.3f", r.seconds))\""
            switch r.status {
            case .passed: out += "/>\n"
            case .failed, .error:
                let tag = r.status == .failed ? "failure" : "error"
                let message = "line \(r.line ?? 0): \(r.command ?? ""): \(r.message ?? "")"
                out += ">\n    <\(tag) message=\"\(XMLText.escaped(message))\">\(XMLText.escaped(message))</\(tag)>\n  </testcase>\n"
            }
        }
        out += "</testsuite>\n"
        return out
    }
}
