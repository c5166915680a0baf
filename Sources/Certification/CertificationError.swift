// The one error type of the Certification layer: a stable code, a human reason, and the place
// (file and line) in the table or inventory that is wrong.

import ByteCore

/// An error found while loading certification tables, reading an inventory, or parsing a version.
/// Tests match on `code`; users read `description` (`file:line: reason`).
public struct CertificationError: CodedError, Equatable, CustomStringConvertible, Sendable {
    /// Stable identifiers, one per kind of mistake.
    public enum Code: String, Sendable, CaseIterable {
        // Files and CSV framing.
        case unreadableFile = "unreadable-file"
        case noTables = "no-tables"
        case invalidUTF8 = "invalid-utf8"
        case missingHeader = "missing-header"
        case unknownColumn = "unknown-column"
        case missingColumn = "missing-column"
        case duplicateColumn = "duplicate-column"
        case fieldCount = "field-count"
        case unterminatedQuote = "unterminated-quote"
        case strayQuote = "stray-quote"
        // Table rows.
        case emptyField = "empty-field"
        case unknownKind = "unknown-kind"
        case unknownStatus = "unknown-status"
        case invalidVersion = "invalid-version"
        case duplicateVersion = "duplicate-version"
        case statusVersionMismatch = "status-version-mismatch"
        case invalidName = "invalid-name"
        case duplicateName = "duplicate-name"
        case invalidRequirement = "invalid-requirement"
        case noRows = "no-rows"
    }

    public var code: Code
    public var reason: String
    /// The file (as given to the loader) or nil for a value typed on the command line.
    public var file: String?
    /// 1-based line in `file`, or nil when the error concerns the whole file.
    public var line: Int?

    public init(_ code: Code, _ reason: String, file: String? = nil, line: Int? = nil) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    public var description: String {
        switch (file, line) {
        case let (file?, line?): return "\(file):\(line): \(reason)"
        case let (file?, nil): return "\(file): \(reason)"
        default: return reason
        }
    }
}

/// Every problem found in a set of tables (loading reports them all, not just the first).
public struct TableLoadError: Error, CustomStringConvertible, Sendable {
    public var errors: [CertificationError]
    public init(_ errors: [CertificationError]) { self.errors = errors }
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
