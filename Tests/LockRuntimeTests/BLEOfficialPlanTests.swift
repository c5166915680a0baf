import Conformance
import ConformanceRadios
import XCTest

/// The official plan's BLE rows and the BLE catalogues agree: every ble_reader row naming a check
/// names one of BLEReaderCatalogue (`conformance reader --ble`), every ble_user_device row one of
/// BLECredentialCatalogue (`conformance credential --ble`), and every check there names a row
/// mapped back to it.
final class BLEOfficialPlanTests: XCTestCase {
    private func assertAgree<S, P>(_ collection: OfficialCase.Collection, rows count: Int, covered: Int, _ checks: [ConformanceCheck<S, P>],
                                   _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        let ids = Set(checks.map(\.id))
        let rows = OfficialTestPlan.cases.filter { $0.collection == collection }
        XCTAssertEqual(rows.count, count, file: file, line: line)
        XCTAssertEqual(rows.compactMap(\.checkID).count, covered, file: file, line: line)
        XCTAssertEqual(ids.count, checks.count, "\(name) repeats an id", file: file, line: line)
        for k in rows { if let id = k.checkID { XCTAssertTrue(ids.contains(id), "\(k.id) names \(id), not in \(name)", file: file, line: line) } }
        for c in checks {
            guard let official = c.officialCase else { XCTAssertTrue(c.advisory, "\(c.id) names no official case", file: file, line: line); continue }
            XCTAssertEqual(OfficialTestPlan.case(named: official)?.collection, collection, "\(c.id): \(official) is not a \(collection.rawValue) case", file: file, line: line)
            XCTAssertEqual(OfficialTestPlan.case(named: official)?.checkID, c.id, "the plan does not map \(official) to \(c.id)", file: file, line: line)
        }
    }

    func testTheBLEReaderRowsAndTheCatalogueAgree() {
        assertAgree(.bleReader, rows: 31, covered: 17, BLEReaderCatalogue.all, "BLEReaderCatalogue")
    }

    func testTheBLEUserDeviceRowsAndTheCatalogueAgree() {
        assertAgree(.bleUserDevice, rows: 45, covered: 31, BLECredentialCatalogue.all + BLECredentialCatalogue.remoteKeylessEntry, "BLECredentialCatalogue")
    }
}
