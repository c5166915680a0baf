import XCTest
@testable import Certification

final class FirmwareVersionTests: XCTestCase {
    typealias O = FirmwareVersion.Ordering

    /// Every first certified version printed in the published tables.
    static let published = ["04.12.00", "05.11.39", "02.12.72", "01.07.67", "03.07.01", "03.09.07", "AD.A.125",
                            "01.08.02", "60.47.14", "60.47.27", "22.02", "2.01", "9.02"]

    func order(_ a: String, _ b: String) -> O? {
        FirmwareVersion.compare(Fixtures.version(a), Fixtures.version(b))
    }

    func testEveryPublishedVersionParsesAndEqualsItself() {
        for text in Self.published {
            let v = Fixtures.version(text)
            XCTAssertEqual(v.text, text)
            XCTAssertEqual(FirmwareVersion.compare(v, v), .same, text)
        }
    }

    func testEveryPublishedVersionAgainstItsNeighbours() {
        // (version, just below, just above, same value written differently)
        let cases: [(String, String, String, String)] = [
            ("04.12.00", "04.11.99", "04.12.01", "4.12.0"),
            ("05.11.39", "05.11.38", "05.11.40", "5.11.039"),
            ("02.12.72", "02.12.71", "02.12.100", "2.12.72"),
            ("01.07.67", "01.07.66", "01.08.00", "1.7.67"),
            ("03.07.01", "03.07.00", "03.07.02", "3.7.1"),
            ("03.09.07", "03.09.06", "03.10.00", "03.09.07.0"),
            ("AD.A.125", "AD.A.124", "AD.A.126", "AD.A.0125"),
            ("01.08.02", "01.08.01", "01.08.03", "1.8.2"),
            ("60.47.14", "60.47.13", "60.47.15", "60.47.014"),
            ("60.47.27", "60.47.26", "60.47.28", "60.047.27"),
            ("22.02", "22.01", "22.03", "22.2"),
            ("2.01", "2.00", "2.02", "02.1"),
            ("9.02", "9.01", "10.00", "9.2.0"),
        ]
        XCTAssertEqual(cases.map(\.0), Self.published)
        for (v, below, above, same) in cases {
            XCTAssertEqual(order(below, v), .ascending, "\(below) < \(v)")
            XCTAssertEqual(order(v, below), .descending, "\(v) > \(below)")
            XCTAssertEqual(order(above, v), .descending, "\(above) > \(v)")
            XCTAssertEqual(order(v, above), .ascending, "\(v) < \(above)")
            XCTAssertEqual(order(same, v), .same, "\(same) = \(v)")
        }
    }

    func testNumericPublishedVersionsSortNumerically() {
        let numeric = Self.published.filter { $0 != "AD.A.125" }
        let sorted = numeric.sorted { order($0, $1) == .ascending }
        XCTAssertEqual(sorted, ["01.07.67", "01.08.02", "2.01", "02.12.72", "03.07.01", "03.09.07", "04.12.00",
                                "05.11.39", "9.02", "22.02", "60.47.14", "60.47.27"])
    }

    func testAlphanumericVersionHasNoOrderAgainstNumericOnes() {
        for text in Self.published where text != "AD.A.125" {
            XCTAssertNil(order("AD.A.125", text), text)
            XCTAssertNil(order(text, "AD.A.125"), text)
        }
    }

    func testEdgeCases() {
        let cases: [(String, String, O?, String)] = [
            ("02.12.100", "02.12.72", .descending, "numbers compare numerically, not as text"),
            ("02.12.9", "02.12.72", .ascending, "a shorter number is smaller"),
            ("002.012.072", "2.12.72", .same, "leading zeros are insignificant"),
            ("0.0", "00.000", .same, "zero in any spelling"),
            ("02.12", "02.12.0", .same, "a missing segment is 0"),
            ("02.12", "02.12.72", .ascending, "a missing segment is 0, below 72"),
            ("02.12.72.1", "02.12.72", .descending, "an extra non-zero segment is above"),
            ("99999999999999999999999.1", "99999999999999999999998.9", .descending, "numbers of any length"),
            ("AD.A.125", "AD.A.125", .same, "names equal exactly"),
            ("AD.A.200", "AD.A.125", .descending, "numbers after equal names"),
            ("AD.B.1", "AD.A.125", nil, "names differ: different lines"),
            ("ad.a.125", "AD.A.125", nil, "names are case-sensitive"),
            ("AD.A", "AD.A.125", .ascending, "a missing segment is 0 after equal names"),
            ("AD.A.125b", "AD.A.125", nil, "a name against a number"),
            ("AD", "AD.A", nil, "a missing segment against a name"),
            ("03.A.1", "02.B.1", .descending, "the first differing segment decides before any name"),
        ]
        for (a, b, expected, why) in cases {
            XCTAssertEqual(order(a, b), expected, "\(a) vs \(b): \(why)")
            let reversed: O? = expected.map { $0 == .ascending ? .descending : $0 == .descending ? .ascending : .same }
            XCTAssertEqual(order(b, a), reversed, "\(b) vs \(a): \(why)")
        }
    }

    func testInvalidVersionsAreRejectedWithAReason() {
        let cases: [(String, String)] = [
            ("", "empty"), (".", "empty segment"), ("1..2", "empty segment 2"), ("1.2.", "empty segment 3"),
            (".1", "empty segment 1"), ("1.2-beta", "contains '-'"), ("1 .2", "contains ' '"), ("v1,2", "contains ','"),
        ]
        for (text, reason) in cases {
            XCTAssertThrowsError(try FirmwareVersion(text), text) { error in
                let e = error as? CertificationError
                XCTAssertEqual(e?.code, .invalidVersion, text)
                XCTAssertTrue(e?.reason.contains(reason) == true, "\(text): \(e?.reason ?? "")")
            }
        }
    }

    // MARK: Standing against a row's first certified versions

    func standing(_ firmware: String, _ listed: [String]) -> VersionStanding {
        Fixtures.version(firmware).standing(against: listed.map { Fixtures.version($0) })
    }

    func testSingleVersionRowIsPlainAtOrAbove() {
        XCTAssertEqual(standing("02.12.72", ["02.12.72"]), .atOrAbove)
        XCTAssertEqual(standing("02.12.100", ["02.12.72"]), .atOrAbove)
        XCTAssertEqual(standing("03.00.00", ["02.12.72"]), .atOrAbove, "a later branch inherits the certification")
        XCTAssertEqual(standing("02.12.71", ["02.12.72"]), .below(upgradeTo: "02.12.72"))
        XCTAssertEqual(standing("02.11.99", ["02.12.72"]), .below(upgradeTo: "02.12.72"))
        XCTAssertEqual(standing("02", ["02.12.72"]), .below(upgradeTo: "02.12.72"))
        XCTAssertEqual(standing("AD.A.125", ["AD.A.125"]), .atOrAbove)
        XCTAssertEqual(standing("AD.A.124", ["AD.A.125"]), .below(upgradeTo: "AD.A.125"))
        XCTAssertEqual(standing("AD.B.126", ["AD.A.125"]), .notComparable(upgradeTo: "AD.A.125"))
        XCTAssertEqual(standing("02.12.72", ["AD.A.125"]), .notComparable(upgradeTo: "AD.A.125"))
    }

    /// The published MTB row: two versions on the one branch 60.47, so the lower one starts it.
    func testPublishedTwoVersionRowOnOneBranch() {
        let mtb = ["60.47.14", "60.47.27"]
        XCTAssertEqual(standing("60.47.13", mtb), .below(upgradeTo: "60.47.14"))
        XCTAssertEqual(standing("60.47.14", mtb), .atOrAbove)
        XCTAssertEqual(standing("60.47.20", mtb), .atOrAbove)
        XCTAssertEqual(standing("60.47.27", mtb), .atOrAbove)
        XCTAssertEqual(standing("60.48.00", mtb), .atOrAbove, "a later branch")
        XCTAssertEqual(standing("60.46.99", mtb), .below(upgradeTo: "60.47.14"))
        XCTAssertEqual(standing("60.47.14", ["60.47.27", "60.47.14"]), .atOrAbove, "listing order does not matter")
    }

    /// Two versions on two branches: each branch from its own first certified version.
    func testTwoBranchRow() {
        let row = ["1.5.20", "2.1.3"]
        XCTAssertEqual(standing("1.5.19", row), .below(upgradeTo: "1.5.20"))
        XCTAssertEqual(standing("1.5.20", row), .atOrAbove)
        XCTAssertEqual(standing("1.5.99", row), .atOrAbove)
        XCTAssertEqual(standing("2.1.2", row), .below(upgradeTo: "2.1.3"), "on branch 2.1, below its start even though above 1.5.20")
        XCTAssertEqual(standing("2.1.3", row), .atOrAbove)
        XCTAssertEqual(standing("1.9.0", row), .below(upgradeTo: "2.1.3"), "an unlisted in-between branch is not certified")
        XCTAssertEqual(standing("2.0.5", row), .below(upgradeTo: "2.1.3"))
        XCTAssertEqual(standing("1.4.99", row), .below(upgradeTo: "1.5.20"), "an older branch upgrades to the nearest listed above")
        XCTAssertEqual(standing("3.0.0", row), .atOrAbove, "a branch newer than all listed")
        XCTAssertEqual(standing("2.2.0", row), .atOrAbove)
    }
}
