import Conformance
import Foundation
import XCTest

/// `conformance … --html`: the counts as the report has them, one row per check, and nothing a
/// device under test sent is ever markup.
final class ReportHTMLTests: XCTestCase {
    func testCountsRowsAndEscaping() {
        let hostile = "<script>alert(1)</script> & \"quoted\""
        let report = ConformanceReport(direction: "credential", transport: "socket <127.0.0.1>", results: [
            CheckResult(id: "a.pass", officialCase: "NFC_UD_STANDARD_NO_CERT", section: "§3", title: "t", verdict: .pass("fine"), seconds: 0.1),
            CheckResult(id: "b.fail", officialCase: nil, section: "§4", title: hostile,
                        verdict: .fail(hostile, expected: [0x90, 0x00], actual: [0x6A, 0x80]), seconds: 0.2),
            CheckResult(id: "c.warn", officialCase: nil, section: "§5", title: "t", verdict: .fail("ours"), seconds: 0, advisory: true),
            CheckResult(id: "d.na", officialCase: nil, section: "§6", title: "t", verdict: .notApplicable("no"), seconds: 0),
        ])
        let html = report.html()
        XCTAssertTrue(html.contains(#"<dd id="count-passed">1</dd>"#))
        XCTAssertTrue(html.contains(#"<dd id="count-failed">1</dd>"#))
        XCTAssertTrue(html.contains(#"<dd id="count-advisories-failed">1</dd>"#))
        XCTAssertTrue(html.contains(#"<dd id="count-not-applicable">1</dd>"#))
        XCTAssertEqual(html.components(separatedBy: "<tr class=").count - 1, 4)
        XCTAssertTrue(html.contains("Run failed"))
        XCTAssertFalse(html.contains("<script>"), "a device's text is escaped")
        XCTAssertTrue(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot;"))
        XCTAssertTrue(html.contains("expected <code>9000</code><br>actual <code>6a80</code>") || html.contains("expected <code>9000</code><br>actual <code>6A80</code>"), html)
        XCTAssertFalse(html.contains("http://") || html.contains("https://"), "nothing fetched from elsewhere")
    }
}
