import ByteCore

extension ConformanceReport {
    /// The report as one self-contained HTML file (`conformance … --html FILE`): the counts, then
    /// one row per check with its verdict in words, its official case or "advisory", and, for a
    /// failure, the first difference. Every text from the device under test is escaped; no
    /// script, no stylesheet or font from elsewhere, so the file can be mailed and archived.
    public func html(strict: Bool = false) -> String {
        func e(_ s: String) -> String { XMLText.escaped(s) }
        let verdict = allPassed(strict: strict) ? "passed" : "failed"
        var out = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>LockBench conformance: \(e(direction)) over \(e(transport))</title>
        <style>
          body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #1b1b1b; }
          dl { display: grid; grid-template-columns: 12rem 4rem; gap: 0.2rem 1rem; }
          table { border-collapse: collapse; width: 100%; font-size: 0.9rem; table-layout: fixed; }
          th, td { text-align: left; padding: 0.3rem 0.5rem; border-bottom: 1px solid #e4e4e0; vertical-align: top; overflow-wrap: anywhere; }
          th:nth-child(1) { width: 7rem; } th:nth-child(2) { width: 17rem; } th:nth-child(3) { width: 15rem; }
          th:nth-child(4) { width: 5rem; } th:nth-child(6) { width: 3rem; }
          .pass .status { color: #0b6b2f; } .fail .status { color: #a3161b; font-weight: 700; } .warn .status { color: #8a5a00; }
          code { font-size: 0.85rem; word-break: break-all; }
        </style>
        </head>
        <body>
        <header><h1>LockBench conformance: \(e(direction)) over \(e(transport))</h1>
        <p id="verdict">Run \(verdict): \(e(summary))</p></header>
        <main>
        <section aria-labelledby="counts-heading"><h2 id="counts-heading">Counts</h2>
        <dl id="counts">
        <dt>passed</dt><dd id="count-passed">\(passed)</dd>
        <dt>failed</dt><dd id="count-failed">\(failed)</dd>
        <dt>advisories failed</dt><dd id="count-advisories-failed">\(advisoriesFailed)</dd>
        <dt>not applicable</dt><dd id="count-not-applicable">\(notApplicable)</dd>
        <dt>not run</dt><dd id="count-not-run">\(notRun)</dd>
        </dl></section>
        <section aria-labelledby="checks-heading"><h2 id="checks-heading">Checks</h2>
        <table>
        <thead><tr><th scope="col">Verdict</th><th scope="col">Check</th><th scope="col">Official case</th><th scope="col">Section</th><th scope="col">Why</th><th scope="col">s</th></tr></thead>
        <tbody>

        """
        for r in results {
            let (word, cls): (String, String)
            switch r.status {
            case .pass: (word, cls) = ("pass", "pass")
            case .fail: (word, cls) = r.advisory ? ("advisory failed", "warn") : ("FAIL", "fail")
            case .notApplicable: (word, cls) = ("not applicable", "na")
            case .notRun: (word, cls) = ("not run", "notrun")
            }
            var why = e(r.reason)
            if r.status == .fail, let x = r.expected, let a = r.actual {
                why += "<br>expected <code>\(e(x))</code><br>actual <code>\(e(a))</code><br>first difference at byte \(r.firstDifference ?? 0)"
            }
            out += "<tr class=\"\(cls)\"><td class=\"status\">\(word)</td><td><code>\(e(r.id))</code><br>\(e(r.title))</td>"
                + "<td>\(e(r.officialCase ?? (r.advisory ? "advisory" : "")))</td><td>\(e(r.section))</td><td>\(why)</td>"
                + "<td>\(String(format: "%.2f", r.seconds))</td></tr>\n"
        }
        out += "</tbody>\n</table></section>\n</main>\n</body>\n</html>\n"
        return out
    }
}
