import Conformance
import Foundation
import XCTest

/// docs/conformance.md's generated sections equal what the code says: the catalogue of each
/// direction and the official test plan's coverage. `LOCKBENCH_WRITE_DOCS=1 swift test --filter
/// ConformanceDocsTests` rewrites them.
final class ConformanceDocsTests: XCTestCase {
    static let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/conformance.md")

    static var sections: [(name: String, text: String)] {
        [("credential-catalogue", CatalogueTable.markdown(CredentialCatalogue.all)),
         ("reader-catalogue", CatalogueTable.markdown(ReaderCatalogue.all)),
         ("official-plan", OfficialTestPlan.markdown())]
    }

    func testGeneratedSectionsMatchTheCode() throws {
        var text = try String(contentsOf: Self.document, encoding: .utf8)
        let write = ProcessInfo.processInfo.environment["LOCKBENCH_WRITE_DOCS"] == "1"
        for (name, generated) in Self.sections {
            let begin = "<!-- \(name):begin -->\n", end = "<!-- \(name):end -->"
            guard let b = text.range(of: begin), let e = text.range(of: end, range: b.upperBound..<text.endIndex) else {
                XCTFail("docs/conformance.md has no \(begin.trimmingCharacters(in: .newlines)) … \(end) section"); continue
            }
            if write { text.replaceSubrange(b.upperBound..<e.lowerBound, with: generated); continue }
            let current = String(text[b.upperBound..<e.lowerBound])
            XCTAssertEqual(current, generated, "docs/conformance.md section \(name) is stale: LOCKBENCH_WRITE_DOCS=1 swift test --filter ConformanceDocsTests")
        }
        if write { try text.write(to: Self.document, atomically: true, encoding: .utf8) }
    }

    /// Every check an official case names exists, and every check naming an official case is named
    /// back by the plan: the two lists cannot drift apart.
    func testThePlanAndTheCataloguesAgree() {
        let ids = Set(CredentialCatalogue.all.map(\.id) + ReaderCatalogue.all.map(\.id))
        // The BLE checks drive the GATT/L2CAP layer and live in ConformanceRadios (BLEReaderCatalogue,
        // BLECredentialCatalogue): LockRuntimeTests holds those rows to them.
        for k in OfficialTestPlan.cases where k.collection != .bleReader && k.collection != .bleUserDevice {
            if let id = k.checkID { XCTAssertTrue(ids.contains(id), "\(k.id) names check \(id), which does not exist") }
        }
        for c in CredentialCatalogue.all {
            guard let name = c.officialCase else { XCTAssertTrue(c.advisory, "\(c.id) names no official case: it must be an advisory"); continue }
            XCTAssertNotNil(OfficialTestPlan.case(named: name), "\(c.id): \(name) is not in the plan")
        }
        for c in ReaderCatalogue.all {
            guard let name = c.officialCase else { XCTAssertTrue(c.advisory, "\(c.id) names no official case: it must be an advisory"); continue }
            XCTAssertEqual(OfficialTestPlan.case(named: name)?.checkID, c.id, "the plan does not map \(name) to \(c.id)")
        }
        // No case is listed twice.
        let names = OfficialTestPlan.cases.map { "\($0.collection.rawValue)/\($0.id)" }
        XCTAssertEqual(names.count, Set(names).count, "duplicate rows in OfficialTestPlan")
    }
}
