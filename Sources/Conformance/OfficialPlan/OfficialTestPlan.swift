/// One case of the public Aliro Certification Tool (`aliro-access-control/aliro-certification-tool`,
/// `test_collections/aliro/<collection>/<folder>/<folder>.py`), and how LockBench covers it.
public struct OfficialCase: Sendable, Equatable {
    public enum Collection: String, Sendable, CaseIterable {
        /// The tool plays the phone against a reader or lock (`conformance reader`).
        case nfcReader = "nfc_reader"
        /// The tool plays the reader against a phone (`conformance credential`).
        case nfcUserDevice = "nfc_user_device"
        case bleReader = "ble_reader"
        case bleUserDevice = "ble_user_device"
    }

    public enum Coverage: Sendable, Equatable {
        /// A LockBench check mirrors it (its id).
        case check(String)
        /// Why no check can mirror it here: UWB or hardware, an operator action with no software
        /// equivalent, a feature LockBench lacks, or a case that cannot run as stored in the tool.
        case notRunnable(String)
    }

    /// The id as the tool names it (`NFC_UD_NEG_AUTH0_WRONG_P1P2`, `RD-BLE-AUTH0-1.0`).
    public var id: String
    public var collection: Collection
    /// The case file, relative to `test_collections/aliro/`.
    public var file: String
    /// The commit of the file version read (the tool's history holds several).
    public var commit: String
    /// The older generation of names (`ud_nfc_*`, `rd_nfc_*`), superseded by the descriptive one.
    public var superseded: Bool
    public var coverage: Coverage

    public init(_ id: String, _ collection: Collection, file: String, commit: String, superseded: Bool = false, _ coverage: Coverage) {
        self.id = id
        self.collection = collection
        self.file = file
        self.commit = commit
        self.superseded = superseded
        self.coverage = coverage
    }

    public var checkID: String? { if case .check(let id) = coverage { return id } else { return nil } }
}

/// The official test plan as LockBench follows it: every case of the four no-UWB-relevant
/// collections, each either mirrored by a check or listed with the reason it cannot run.
/// docs/conformance.md's coverage table is `OfficialTestPlan.markdown()` (a test keeps them equal).
public enum OfficialTestPlan {
    public static let repository = "aliro-access-control/aliro-certification-tool"

    public static let cases: [OfficialCase] = nfcUserDevice + nfcReader + bleReader + bleUserDevice

    public static func `case`(named id: String) -> OfficialCase? { cases.first { $0.id == id } }

    /// Cases of the current generation in `collection`, and how many a check mirrors.
    public static func coverage(_ collection: OfficialCase.Collection) -> (covered: Int, total: Int) {
        let current = cases.filter { $0.collection == collection && !$0.superseded }
        return (current.filter { $0.checkID != nil }.count, current.count)
    }

    /// The coverage table of docs/conformance.md: counts per collection, then one row per case.
    public static func markdown() -> String {
        var out = "| collection | covered | total (current generation) |\n|---|---|---|\n"
        for c in OfficialCase.Collection.allCases {
            let (covered, total) = coverage(c)
            out += "| `\(c.rawValue)` | \(covered) | \(total) |\n"
        }
        out += "\n| case | collection | file @ commit | LockBench |\n|---|---|---|---|\n"
        for k in cases {
            let covered: String
            switch k.coverage {
            case .check(let id): covered = "`\(id)`"
            case .notRunnable(let why): covered = "not run: \(why)"
            }
            out += "| \(k.id)\(k.superseded ? " (older generation)" : "") | `\(k.collection.rawValue)` | `\(k.file)` @ `\(k.commit.prefix(10))` | \(covered) |\n"
        }
        return out
    }
}
