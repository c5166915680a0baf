import Foundation

/// JUnit XML for CI, the one writer behind `conformance --format junit` and `scenario run
/// --junit`: one testsuite, one testcase each, and a failure, error or skipped element carrying
/// the message. Counts that are zero and not failures are left out (the schema makes them optional).
public struct JUnitSuite: Sendable {
    public enum Outcome: Sendable, Equatable {
        case passed
        /// An assertion did not hold: `message` is the attribute, `body` the element's text.
        case failure(message: String, body: String)
        /// The test could not run to its end.
        case error(message: String, body: String)
        case skipped(message: String)
    }

    public struct TestCase: Sendable {
        public var classname: String
        public var name: String
        public var seconds: Double
        public var outcome: Outcome

        public init(classname: String, name: String, seconds: Double, outcome: Outcome) {
            self.classname = classname; self.name = name; self.seconds = seconds; self.outcome = outcome
        }
    }

    public var name: String
    public var cases: [TestCase]

    public init(name: String, cases: [TestCase]) {
        self.name = name
        self.cases = cases
    }

    public func xml() -> String {
        func count(_ kind: (Outcome) -> Bool) -> Int { cases.filter { kind($0.outcome) }.count }
        let failures = count { if case .failure = $0 { return true } else { return false } }
        let errors = count { if case .error = $0 { return true } else { return false } }
        let skipped = count { if case .skipped = $0 { return true } else { return false } }
        let total = cases.reduce(0) { $0 + $1.seconds }
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuite name=\"\(XMLText.escaped(name))\" tests=\"\(cases.count)\" failures=\"\(failures)\""
            + (errors > 0 ? " errors=\"\(errors)\"" : "") + (skipped > 0 ? " skipped=\"\(skipped)\"" : "")
            + " time=\"\(String(format: "%.3f", total))\">\n"
        for c in cases {
            out += "  <testcase classname=\"\(XMLText.escaped(c.classname))\" name=\"\(XMLText.escaped(c.name))\" time=\"\(String(format: "%.3f", c.seconds))\""
            switch c.outcome {
            case .passed:
                out += "/>\n"
            case .skipped(let message):
                out += ">\n    <skipped message=\"\(XMLText.escaped(message))\"/>\n  </testcase>\n"
            case .failure(let message, let body), .error(let message, let body):
                let tag = if case .failure = c.outcome { "failure" } else { "error" }
                out += ">\n    <\(tag) message=\"\(XMLText.escaped(message))\">\(XMLText.escaped(body))</\(tag)>\n  </testcase>\n"
            }
        }
        out += "</testsuite>\n"
        return out
    }
}
