import XCTest
@testable import Certification

final class ModelMatchingTests: XCTestCase {
    let tables = Fixtures.shipped

    func testNamesPeopleTypeSelectTheRow() {
        let cases: [(String, String)] = [
            ("nde", "NDE"), ("NDE", "NDE"), ("Schlage NDE", "NDE"), ("schlage nde locks", "NDE"), ("NDE Lock", "NDE"),
            ("Schlage NDE Locks", "NDE"), ("  NDE  ", "NDE"), ("ndeb si", "NDEB Si"), ("NDEB-Si", "NDEB Si"), ("NDEBSi", "NDEB Si"),
            ("control b", "Control B"), ("Schlage Control", "Control"), ("CONTROL BM LOCKS", "Control BM"),
            ("AD-300", "AD300"), ("ad 400", "AD400"), ("Schlage AD400", "AD400"),
            ("MTK15", "MT15"), ("mt11", "MT15"), ("MTMSK15 reader", "MT15"), ("Schlage MTMS15 Readers", "MT15"),
            ("RC15", "RC"), ("rck15", "RC"), ("RC Reader Controller", "RC"), ("Schlage RC Reader Controller (RC11, RC15, RCK15)", "RC"),
            ("MTB15", "MTB"), ("mtbk15", "MTB"), ("Schlage MTB Readers", "MTB"),
            ("OEM200 module", "OEM200"), ("Schlage OEM200 Modules", "OEM200"),
            ("MT20", "MT20"), ("MT20 Enrollment Readers", "MT20"),
        ]
        for (typed, model) in cases {
            XCTAssertEqual(tables.row(named: typed)?.model, model, "'\(typed)'")
        }
    }

    func testNamesThatSelectNothing() {
        for typed in ["", "Schlage", "Reader", "NDX", "MT", "MT2", "MTK2", "AD", "Allegion NDE", "NDE 80", "LEBSI2"] {
            XCTAssertNil(tables.row(named: typed), "'\(typed)'")
        }
    }

    func testDidYouMean() {
        XCTAssertEqual(tables.suggestions(for: "NDX"), ["NDE"])
        XCTAssertEqual(tables.suggestions(for: "ad"), ["AD300", "AD400"])
        XCTAssertEqual(tables.suggestions(for: "Schlage AD3000"), ["AD300"])
        XCTAssertEqual(tables.suggestions(for: "MTK51"), ["MTK15", "MTBK15"], "closest first")
        XCTAssertEqual(tables.suggestions(for: "OEM-2000"), ["OEM200"])
        XCTAssertEqual(tables.suggestions(for: "control bn"), ["Control B", "Control BM", "Control"])
        XCTAssertEqual(tables.suggestions(for: "zzzzzz"), [])
        XCTAssertLessThanOrEqual(tables.suggestions(for: "mt").count, 5)
        XCTAssertTrue(tables.suggestions(for: "mt").allSatisfy { $0.hasPrefix("MT") })
    }

    func testEditDistance() {
        XCTAssertEqual(ModelNames.distance("nde", "nde"), 0)
        XCTAssertEqual(ModelNames.distance("ndx", "nde"), 1)
        XCTAssertEqual(ModelNames.distance("", "abc"), 3)
        XCTAssertEqual(ModelNames.distance("kitten", "sitting"), 3)
        XCTAssertEqual(ModelNames.distance("mtk51", "mtk15"), 1, "a swap of neighbours is one edit")
    }

    /// MT2 and MTK2 are the names the requirement gives; they are matched as names, and no row of
    /// the reader table (MTK15, MT15, …) stands in for them.
    func testRequirementMatching() {
        let ad300 = tables.row(named: "AD300")!.requirement!
        for reader in ["MT2", "mt2", "MTK2", "Schlage MTK2", "MTK2 Reader", "mtk-2", "Schlage MT2 readers"] {
            XCTAssertTrue(tables.satisfies(ad300, reader: reader), reader)
        }
        for reader in [nil, "", "MT15", "MTK15", "MT20", "MTB15", "RC15", "MT", "MT22", "Schlage"] as [String?] {
            XCTAssertFalse(tables.satisfies(ad300, reader: reader), reader ?? "nil")
        }
    }
}

final class VerdictTests: XCTestCase {
    let tables = Fixtures.shipped

    func verdict(_ model: String, _ firmware: String, reader: String? = nil) -> Verdict {
        tables.check(model: model, firmware: Fixtures.version(firmware), reader: reader)
    }

    /// Done means: every row of the published tables gives the right verdict just below and at its
    /// first certified version. (model, just below, at, verdict below, verdict at, reader)
    static let everyRow: [(String, String, String, VerdictKind, VerdictKind, String?)] = [
        ("Control B", "04.11.99", "04.12.00", .upgradeRequired, .certified, nil),
        ("Control BM", "05.11.38", "05.11.39", .upgradeRequired, .certified, nil),
        ("Control", "00.00.01", "99.99.99", .notPursued, .notPursued, nil),
        ("NDE", "02.12.71", "02.12.72", .upgradeRequired, .certified, nil),
        ("LE", "01.07.66", "01.07.67", .upgradeRequired, .certified, nil),
        ("NDEB", "03.07.00", "03.07.01", .upgradeRequired, .certified, nil),
        ("LEB", "03.07.00", "03.07.01", .upgradeRequired, .certified, nil),
        ("NDEB Si", "03.09.06", "03.09.07", .upgradeRequired, .certified, nil),
        ("LEB Si", "03.09.06", "03.09.07", .upgradeRequired, .certified, nil),
        ("AD300", "AD.A.124", "AD.A.125", .upgradeRequired, .certified, "MT2"),
        ("AD400", "AD.A.124", "AD.A.125", .upgradeRequired, .certified, "MTK2"),
        ("RC", "01.08.01", "01.08.02", .inProcess, .inProcess, nil),
        ("MTB", "60.47.13", "60.47.14", .inProcess, .inProcess, nil),
        ("MT15", "22.01", "22.02", .upgradeRequired, .certified, nil),
        ("OEM200", "2.00", "2.01", .upgradeRequired, .certified, nil),
        ("MT20", "9.01", "9.02", .upgradeRequired, .certified, nil),
    ]

    func testEveryPublishedRowJustBelowAndAtItsFirstCertifiedVersion() {
        XCTAssertEqual(Set(Self.everyRow.map(\.0)), Set(Fixtures.schlage.map(\.model)), "every row is covered")
        for (model, below, at, belowKind, atKind, reader) in Self.everyRow {
            let b = verdict(model, below, reader: reader), a = verdict(model, at, reader: reader)
            XCTAssertEqual(b.kind, belowKind, "\(model) \(below): \(b.detail)")
            XCTAssertEqual(a.kind, atKind, "\(model) \(at): \(a.detail)")
            XCTAssertEqual(a.isCertified, atKind == .certified)
            XCTAssertFalse(b.isCertified)
            if belowKind == .upgradeRequired {
                XCTAssertEqual(b.minimumFirmware, at, model)
                XCTAssertEqual(b.summary, "upgrade to ≥ \(at)")
            }
            XCTAssertEqual(b.row?.model, model)
            // A variant name gives the same verdict.
            for variant in b.row?.variants ?? [] {
                XCTAssertEqual(verdict(variant, at, reader: reader).kind, atKind, variant)
                XCTAssertEqual(verdict(variant, below, reader: reader).kind, belowKind, variant)
            }
        }
    }

    func testCertified() {
        let v = verdict("Schlage NDE", "02.12.100")
        XCTAssertEqual(v.kind, .certified)
        XCTAssertEqual(v.summary, "certified")
        XCTAssertEqual(v.standing, .atOrAbove)
        XCTAssertEqual(v.detail, "Schlage NDE Locks: firmware 02.12.100 is at or above 02.12.72, the first certified version")
    }

    func testUpgradeRequired() {
        let v = verdict("nde", "02.12.70")
        XCTAssertEqual(v.kind, .upgradeRequired)
        XCTAssertEqual(v.summary, "upgrade to ≥ 02.12.72")
        XCTAssertEqual(v.minimumFirmware, "02.12.72")
        XCTAssertEqual(v.detail, "Schlage NDE Locks: firmware 02.12.70 is below 02.12.72, the first certified version")
    }

    func testUpgradeRequiredWhenOnAnotherLine() {
        let v = verdict("AD300", "AD.B.200", reader: "MT2")
        XCTAssertEqual(v.kind, .upgradeRequired)
        XCTAssertEqual(v.standing, .notComparable(upgradeTo: "AD.A.125"))
        XCTAssertEqual(v.summary, "upgrade to ≥ AD.A.125")
        XCTAssertTrue(v.detail.contains("not on the line of AD.A.125"), v.detail)
    }

    func testInProcessWhateverTheFirmware() {
        for firmware in ["00.01", "01.08.02", "99.0"] {
            let v = verdict("RC15", firmware)
            XCTAssertEqual(v.kind, .inProcess, firmware)
            XCTAssertEqual(v.summary, "certification in process")
        }
        XCTAssertEqual(verdict("MTBK15", "60.47.27").standing, .atOrAbove)
        XCTAssertEqual(verdict("MTBK15", "60.47.13").standing, .below(upgradeTo: "60.47.14"))
        XCTAssertTrue(verdict("MTBK15", "60.47.27").detail.contains("no firmware is certified yet"))
    }

    func testNotPursued() {
        let v = verdict("Schlage Control Locks", "04.12.00")
        XCTAssertEqual(v.kind, .notPursued)
        XCTAssertEqual(v.summary, "not pursued")
        XCTAssertNil(v.minimumFirmware)
        XCTAssertTrue(v.detail.contains("Not pursuing Apple NFC Certification"), v.detail)
    }

    func testRequirementNotMet() {
        let missing = verdict("AD300", "AD.A.125")
        XCTAssertEqual(missing.kind, .requirementNotMet)
        XCTAssertEqual(missing.summary, "requirement not met: needs an MT2/MTK2 reader")
        XCTAssertEqual(missing.unmetRequirement, Requirement(kind: .reader, names: ["MT2", "MTK2"]))
        XCTAssertTrue(missing.detail.contains("no reader is given"), missing.detail)
        let wrong = verdict("AD400", "AD.A.130", reader: "MTK15")
        XCTAssertEqual(wrong.kind, .requirementNotMet)
        XCTAssertTrue(wrong.detail.contains("'MTK15' is not one"), wrong.detail)
        XCTAssertEqual(verdict("AD400", "AD.A.130", reader: "Schlage MTK2 Reader").kind, .certified)
    }

    func testFirmwareBelowAndRequirementUnmetSaysBoth() {
        let v = verdict("AD300", "AD.A.100", reader: "MT15")
        XCTAssertEqual(v.kind, .upgradeRequired)
        XCTAssertNotNil(v.unmetRequirement)
        XCTAssertTrue(v.detail.contains("it also must have an MT2/MTK2 reader ('MT15' is not one)"), v.detail)
    }

    func testReaderIsIgnoredWhereNothingIsRequired() {
        XCTAssertEqual(verdict("NDE", "02.12.72", reader: "anything").kind, .certified)
    }

    func testUnknownModel() {
        let v = verdict("NDX", "02.12.72")
        XCTAssertEqual(v.kind, .unknownModel)
        XCTAssertNil(v.row)
        XCTAssertEqual(v.suggestions, ["NDE"])
        XCTAssertEqual(v.summary, "unknown model; did you mean NDE?")
        let far = verdict("Yale Assure", "1.0")
        XCTAssertEqual(far.kind, .unknownModel)
        XCTAssertEqual(far.suggestions, [])
        XCTAssertEqual(far.summary, "unknown model")
    }

    func testEveryVerdictKindIsReachable() {
        let kinds: Set<VerdictKind> = [
            verdict("NDE", "02.12.72").kind, verdict("NDE", "02.12.71").kind, verdict("RC", "1.0").kind,
            verdict("Control", "1.0").kind, verdict("AD300", "AD.A.125").kind, verdict("X", "1").kind,
        ]
        XCTAssertEqual(kinds, Set(VerdictKind.allCases))
    }
}
