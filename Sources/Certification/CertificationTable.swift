// The certification tables: one row per lock or reader model, as published by its vendor.
// Schema and rules: firmware-tables/README.md.

/// Locks and readers are listed in separate published tables.
public enum DeviceKind: String, Sendable, CaseIterable {
    case lock, reader
}

/// The published certification status.
public enum CertificationStatus: String, Sendable, CaseIterable {
    /// Certified at or above the first certified firmware.
    case complete = "Complete"
    /// Not certified yet, whatever the firmware.
    case inProcess = "In process"
    /// The vendor does not pursue certification for this model.
    case notPursued = "n/a"
}

/// "AD300 must have an MT2/MTK2 reader": a device of `kind` named one of `names` must be paired.
///
/// Written `reader:MT2/MTK2` in the `requires` column. The names are product names matched after
/// the same normalization as model names (case, vendor prefix, "Reader" suffix), and they need not
/// be rows of a table: MT2 and MTK2 are the reader options of the AD-Series locks, not the MT15
/// family's wall readers, so an MTK15 does not satisfy `reader:MT2/MTK2`.
public struct Requirement: Sendable, Equatable {
    public var kind: DeviceKind
    public var names: [String]

    /// `MT2/MTK2 reader`
    public var phrase: String { names.joined(separator: "/") + " " + kind.rawValue }
    /// `reader:MT2/MTK2`, as written in the table.
    public var text: String { kind.rawValue + ":" + names.joined(separator: "/") }
}

/// One published row.
public struct CertificationRow: Sendable {
    public var kind: DeviceKind
    public var vendor: String
    /// The short model name LockBench shows and matches (`NDE`, `AD300`, `MT15`).
    public var model: String
    /// Variant names that select this row too (`RC11`, `RC15`, `RCK15`).
    public var variants: [String]
    /// The model cell exactly as published (`Schlage NDE Locks`).
    public var publishedName: String
    /// The hardware cell exactly as published.
    public var hardware: String
    /// The firmware cell exactly as published (`04.12.00`, `60.47.14, 60.47.27`, `n/a`).
    public var firstCertifiedText: String
    /// The parsed first certified versions, one per branch; empty when not pursued.
    public var firstCertified: [FirmwareVersion]
    public var status: CertificationStatus
    public var requirement: Requirement?
    public var source: String
    public var note: String
    /// Where the row is written.
    public var file: String
    public var line: Int

    /// `Schlage NDE` — vendor and model, for messages.
    public var displayName: String { vendor + " " + model }
}

/// All loaded tables, with the model-name index used by `check` and `audit`.
public struct CertificationTables: Sendable {
    public let rows: [CertificationRow]
    /// Where the tables came from: a directory, or "built-in".
    public let origin: String
    /// Normalized name → row index.
    let index: [String: Int]
    /// Every name a user may type, for "did you mean": (normalized, as written, row).
    let names: [(key: String, display: String, row: Int)]
    let vendorKeys: [[String]]

    init(rows: [CertificationRow], origin: String, index: [String: Int],
         names: [(key: String, display: String, row: Int)], vendorKeys: [[String]]) {
        self.rows = rows
        self.origin = origin
        self.index = index
        self.names = names
        self.vendorKeys = vendorKeys
    }

    public func rows(of kind: DeviceKind?) -> [CertificationRow] {
        guard let kind else { return rows }
        return rows.filter { $0.kind == kind }
    }
}
