import ByteCore
import Foundation

/// The results of one conformance run and their three renderings: one line per check, JSON, JUnit.
public struct ConformanceReport: Codable, Equatable, Sendable {
    /// `credential` (LockBench played the reader) or `reader` (LockBench played the phone).
    public var direction: String
    /// The transport as given (`socket 127.0.0.1:5000`, `nfc pn532_uart:/dev/pts/3`, `ble tcp:…`).
    public var transport: String
    public var results: [CheckResult]

    public init(direction: String, transport: String, results: [CheckResult]) {
        self.direction = direction
        self.transport = transport
        self.results = results
    }

    public var passed: Int { results.filter { $0.status == .pass }.count }
    /// Failed checks that mirror an official case (advisories apart).
    public var failed: Int { results.filter { $0.status == .fail && !$0.advisory }.count }
    /// Failed advisories: rules of LockBench's own that no official case states.
    public var advisoriesFailed: Int { results.filter { $0.status == .fail && $0.advisory }.count }
    public var notApplicable: Int { results.filter { $0.status == .notApplicable }.count }
    public var notRun: Int { results.filter { $0.status == .notRun }.count }
    /// Every applicable check passed (advisories aside).
    public var allPassed: Bool { failed == 0 && notRun == 0 }
    /// Every applicable check passed, advisories included (`--strict`).
    public func allPassed(strict: Bool) -> Bool { allPassed && (!strict || advisoriesFailed == 0) }

    /// `pass  auth0.standard  [ud_nfc_auth0_10 §4]  reason` — one line per check, then a summary.
    public func lines() -> [String] {
        let width = results.map(\.id.count).max() ?? 0
        return results.map { Self.line($0, width: width) } + [summary]
    }

    /// One check's line; `width` pads the id so that a report's lines align.
    public static func line(_ r: CheckResult, width: Int) -> String {
        let tag: String
        switch r.status {
        case .pass: tag = "pass"
        case .fail: tag = r.advisory ? "warn" : "FAIL"
        case .notApplicable: tag = "n/a "
        case .notRun: tag = "----"
        }
        let ref = "[" + (r.officialCase.map { $0 + " " } ?? (r.advisory ? "advisory " : "")) + r.section + "]"
        var line = "\(tag)  \(r.id.padding(toLength: width, withPad: " ", startingAt: 0))  \(ref)  \(r.reason)"
        if r.status == .fail, let e = r.expected, let a = r.actual {
            let at = r.firstDifference ?? 0
            line += "; first difference at byte \(at): expected \(Self.window(e, at)) got \(Self.window(a, at))"
        }
        return line
    }

    /// `credential conformance over socket …: 27 passed, 0 failed, 1 not applicable[, 2 advisories failed][, 3 not run]`.
    public var summary: String {
        var s = "\(direction) conformance over \(transport): \(passed) passed, \(failed) failed, \(notApplicable) not applicable"
        if advisoriesFailed > 0 { s += ", \(advisoriesFailed) advisor\(advisoriesFailed == 1 ? "y" : "ies") failed (exit status unchanged without --strict)" }
        if notRun > 0 { s += ", \(notRun) not run" }
        return s
    }

    /// Up to 8 bytes of hex starting at byte `at`, with an ellipsis when more follow.
    static func window(_ hex: String, _ at: Int) -> String {
        let bytes = Hex.decode(hex) ?? []
        guard at < bytes.count else { return "(end)" }
        let slice = Array(bytes[at..<min(bytes.count, at + 8)])
        return slice.hex + (at + 8 < bytes.count ? "…" : "")
    }

    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        struct Out: Encodable {
            var direction: String, transport: String, passed: Int, failed: Int, advisoriesFailed: Int, notApplicable: Int, notRun: Int
            var results: [CheckResult]
        }
        let out = Out(direction: direction, transport: transport, passed: passed, failed: failed, advisoriesFailed: advisoriesFailed,
                      notApplicable: notApplicable, notRun: notRun, results: results)
        return String(decoding: (try? encoder.encode(out)) ?? Data(), as: UTF8.self)
    }

    /// JUnit XML: one testcase per check (classname = direction), skipped when not applicable.
    public func junit(strict: Bool = false) -> String {
        JUnitSuite(name: "lockbench conformance \(direction)", cases: results.map { r in
            let outcome: JUnitSuite.Outcome
            switch r.status {
            case .pass: outcome = .passed
            case .notApplicable: outcome = .skipped(message: r.reason)
            case .notRun: outcome = .skipped(message: "not run: the run ended first")
            case .fail where r.advisory && !strict:
                // JUnit has no warning: an advisory is reported (in the name), not failed.
                outcome = .passed
            case .fail:
                var body = r.reason
                if let e = r.expected, let a = r.actual {
                    body += "\nexpected \(e)\nactual   \(a)\nfirst difference at byte \(r.firstDifference ?? 0)"
                }
                outcome = .failure(message: r.reason, body: "\(body) (\(r.section))")
            }
            return JUnitSuite.TestCase(classname: "conformance.\(direction)", name: r.id + (r.officialCase.map { " (\($0))" } ?? "")
                                        + (r.advisory && r.status == .fail ? " [advisory failed: \(r.reason)]" : ""),
                                       seconds: r.seconds, outcome: outcome)
        }).xml()
    }
}
