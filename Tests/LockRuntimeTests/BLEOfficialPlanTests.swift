import Conformance
import LockRuntime
import XCTest

/// The official plan's ble_reader rows and `conformance reader --ble`'s catalogue agree: every row
/// naming a check names one of BLEReaderCatalogue, and every check there names a row mapped back to it.
final class BLEOfficialPlanTests: XCTestCase {
    func testTheBLEReaderRowsAndTheCatalogueAgree() {
        let ids = Set(BLEReaderCatalogue.all.map(\.id))
        let rows = OfficialTestPlan.cases.filter { $0.collection == .bleReader }
        XCTAssertEqual(rows.count, 31)
        for k in rows { if let id = k.checkID { XCTAssertTrue(ids.contains(id), "\(k.id) names \(id), not in BLEReaderCatalogue") } }
        for c in BLEReaderCatalogue.all {
            guard let name = c.officialCase else { XCTAssertTrue(c.advisory, "\(c.id) names no official case"); continue }
            XCTAssertEqual(OfficialTestPlan.case(named: name)?.checkID, c.id, "the plan does not map \(name) to \(c.id)")
        }
    }
}
