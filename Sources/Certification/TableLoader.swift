// Loading and validating the certification tables: every problem is reported as `file:line: reason`,
// all of them at once.

import Foundation

extension CertificationTables {
    /// The columns of a table file, in the order the shipped tables write them. `note` is optional.
    public static let columns = ["kind", "vendor", "model", "variants", "published_name", "hardware",
                                 "first_certified", "status", "requires", "source", "note"]
    static let optionalColumns: Set<String> = ["note"]

    /// Loads every `*.csv` file of `directory`, in name order.
    public static func load(directory: String) throws(TableLoadError) -> CertificationTables {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw TableLoadError([CertificationError(.unreadableFile, "not a directory of certification tables", file: directory)])
        }
        let names: [String]
        do {
            names = try fm.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".csv") }.sorted()
        } catch {
            throw TableLoadError([CertificationError(.unreadableFile, "cannot list the directory: \(error.localizedDescription)", file: directory)])
        }
        guard !names.isEmpty else {
            throw TableLoadError([CertificationError(.noTables, "no *.csv table in this directory", file: directory)])
        }
        var files: [(name: String, bytes: [UInt8])] = []
        var errors: [CertificationError] = []
        for name in names {
            let path = (directory as NSString).appendingPathComponent(name)
            guard let data = fm.contents(atPath: path) else {
                errors.append(CertificationError(.unreadableFile, "cannot read the file", file: path))
                continue
            }
            files.append((path, Array(data)))
        }
        if !errors.isEmpty { throw TableLoadError(errors) }
        return try parse(files: files, origin: directory)
    }

    /// Parses and validates table files given as bytes; `name` is used in messages.
    public static func parse(files: [(name: String, bytes: [UInt8])], origin: String) throws(TableLoadError) -> CertificationTables {
        var rows: [CertificationRow] = []
        var errors: [CertificationError] = []
        for file in files {
            let (fileRows, fileErrors) = parseFile(name: file.name, bytes: file.bytes)
            rows += fileRows
            errors += fileErrors
        }
        // Every name that selects a row must select only that row.
        let vendorKeys = Array(Set(rows.map { ModelNames.words($0.vendor) })).sorted { $0.count > $1.count }
        var index: [String: Int] = [:]
        var names: [(key: String, display: String, row: Int)] = []
        for (i, row) in rows.enumerated() {
            var rowKeys = Set<String>()
            for (name, shown) in [(row.model, true)] + row.variants.map({ ($0, true) }) + [(row.publishedName, false)] {
                let key = ModelNames.key(name, vendors: vendorKeys)
                guard !key.isEmpty, rowKeys.insert(key).inserted else { continue }
                if let other = index[key] {
                    let o = rows[other]
                    errors.append(CertificationError(.duplicateName, "'\(name)' also names \(o.displayName) (\(o.file):\(o.line)); every model and variant name must select one row", file: row.file, line: row.line))
                    continue
                }
                index[key] = i
                if shown { names.append((key, name, i)) }
            }
        }
        if !errors.isEmpty { throw TableLoadError(errors) }
        return CertificationTables(rows: rows, origin: origin, index: index, names: names, vendorKeys: vendorKeys)
    }

    static func parseFile(name: String, bytes: [UInt8]) -> ([CertificationRow], [CertificationError]) {
        var errors: [CertificationError] = []
        func fail(_ code: CertificationError.Code, _ reason: String, _ line: Int?) {
            errors.append(CertificationError(code, reason, file: name, line: line))
        }
        if let bad = firstInvalidUTF8Line(bytes) {
            fail(.invalidUTF8, "not valid UTF-8", bad)
            return ([], errors)
        }
        return bytes.withUnsafeBufferPointer { buffer in
            var scanner = CSVScanner(buffer, commentByte: UInt8(ascii: "#"))
            var fields: [CSVField] = []
            guard let headerRecord = scanner.next(fields: &fields) else {
                fail(.missingHeader, "no header line; expected: \(columns.joined(separator: ","))", nil)
                return ([], errors)
            }
            if let error = headerRecord.error {
                fail(error.code, error.reason, headerRecord.line)
                return ([], errors)
            }
            // Header: known columns, each once, all required ones present.
            var position: [String: Int] = [:]
            for (i, field) in fields.enumerated() {
                let column = scanner.trimmedString(field)
                if !columns.contains(column) {
                    fail(.unknownColumn, "unknown column '\(column)'; the columns are \(columns.joined(separator: ","))", headerRecord.line)
                } else if position[column] != nil {
                    fail(.duplicateColumn, "column '\(column)' appears twice", headerRecord.line)
                } else {
                    position[column] = i
                }
            }
            for column in columns where position[column] == nil && !optionalColumns.contains(column) {
                fail(.missingColumn, "missing column '\(column)'", headerRecord.line)
            }
            if !errors.isEmpty { return ([], errors) }
            let width = fields.count

            var rows: [CertificationRow] = []
            while let record = scanner.next(fields: &fields) {
                let line = record.line
                if let error = record.error { fail(error.code, error.reason, line); continue }
                guard fields.count == width else {
                    fail(.fieldCount, "\(fields.count) fields; the header has \(width)", line)
                    continue
                }
                func value(_ column: String) -> String {
                    position[column].map { scanner.trimmedString(fields[$0]) } ?? ""
                }
                var rowOK = true
                func required(_ column: String) -> String {
                    let v = value(column)
                    if v.isEmpty { fail(.emptyField, "empty '\(column)'", line); rowOK = false }
                    return v
                }
                let kindText = required("kind"), vendor = required("vendor"), model = required("model")
                let publishedName = required("published_name"), hardware = required("hardware")
                let firmwareText = required("first_certified"), statusText = required("status")
                let source = required("source")
                guard rowOK else { continue }

                guard let kind = DeviceKind(rawValue: kindText) else {
                    fail(.unknownKind, "unknown kind '\(kindText)'; expected lock or reader", line)
                    continue
                }
                guard let status = CertificationStatus(rawValue: statusText) else {
                    fail(.unknownStatus, "unknown status '\(statusText)'; expected Complete, In process or n/a", line)
                    continue
                }
                for name in [vendor, model] where !isValidName(name) {
                    fail(.invalidName, "'\(name)' is not a name: use letters, digits, spaces and - only", line)
                    rowOK = false
                }
                let variantsText = value("variants")
                var variants: [String] = []
                if !variantsText.isEmpty {
                    for part in variantsText.split(separator: ",", omittingEmptySubsequences: false) {
                        let variant = part.trimmingCharacters(in: .whitespaces)
                        if !isValidName(variant) {
                            fail(.invalidName, "variant '\(variant)' is not a name: variants are separated by commas and use letters, digits, spaces and - only", line)
                            rowOK = false
                        } else {
                            variants.append(variant)
                        }
                    }
                }
                // First certified versions: n/a exactly when not pursued.
                var versions: [FirmwareVersion] = []
                if status == .notPursued {
                    if firmwareText != "n/a" {
                        fail(.statusVersionMismatch, "status n/a (not pursued) takes first_certified n/a, not '\(firmwareText)'", line)
                        rowOK = false
                    }
                } else if firmwareText == "n/a" {
                    fail(.statusVersionMismatch, "status \(status.rawValue) needs a first certified firmware version, not n/a", line)
                    rowOK = false
                } else {
                    for part in firmwareText.split(separator: ",", omittingEmptySubsequences: false) {
                        let text = part.trimmingCharacters(in: .whitespaces)
                        do throws(CertificationError) {
                            let version = try FirmwareVersion(text)
                            if versions.contains(where: { FirmwareVersion.compare($0, version) == .same }) {
                                fail(.duplicateVersion, "first_certified lists \(text) twice", line)
                                rowOK = false
                            }
                            versions.append(version)
                        } catch {
                            fail(.invalidVersion, "first_certified: \(error.reason)", line)
                            rowOK = false
                        }
                    }
                }
                var requirement: Requirement?
                let requiresText = value("requires")
                if !requiresText.isEmpty {
                    requirement = parseRequirement(requiresText)
                    if requirement == nil {
                        fail(.invalidRequirement, "requires '\(requiresText)' is not kind:NAME[/NAME…], e.g. reader:MT2/MTK2", line)
                        rowOK = false
                    }
                }
                guard rowOK else { continue }
                rows.append(CertificationRow(
                    kind: kind, vendor: vendor, model: model, variants: variants, publishedName: publishedName,
                    hardware: hardware, firstCertifiedText: firmwareText, firstCertified: versions, status: status,
                    requirement: requirement, source: source, note: value("note"), file: name, line: line))
            }
            if rows.isEmpty && errors.isEmpty { fail(.noRows, "a header but no rows", headerRecord.line) }
            return (rows, errors)
        }
    }

    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.unicodeScalars.allSatisfy {
            ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == " " || $0 == "-")
        } && name.first != " " && name.last != " "
    }

    static func parseRequirement(_ text: String) -> Requirement? {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let kind = DeviceKind(rawValue: parts[0].trimmingCharacters(in: .whitespaces)) else { return nil }
        let names = parts[1].split(separator: "/", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard !names.isEmpty, names.allSatisfy(isValidName) else { return nil }
        return Requirement(kind: kind, names: names)
    }

    /// The 1-based line of the first invalid UTF-8 sequence, or nil.
    static func firstInvalidUTF8Line(_ bytes: [UInt8]) -> Int? {
        if String(validating: bytes, as: UTF8.self) != nil { return nil }
        var line = 1, start = 0
        for (i, b) in bytes.enumerated() where b == 0x0A || i == bytes.count - 1 {
            if String(validating: bytes[start...i], as: UTF8.self) == nil { return line }
            line += 1
            start = i + 1
        }
        return line
    }
}

extension CertificationTables {
    /// The name `origin` carries for the compiled-in tables.
    public static let builtInOrigin = "built-in"

    /// The shipped tables as compiled into LockBench: firmware-tables/*.csv, embedded byte for byte
    /// at build time (the EmbedFirmwareTables plugin).
    public static func builtIn() -> CertificationTables {
        do {
            return try parse(files: builtInFiles, origin: builtInOrigin)
        } catch {
            fatalError("the built-in certification tables do not load: \(error)")
        }
    }

    /// The compiled-in table files, by file name.
    public static var builtInFiles: [(name: String, bytes: [UInt8])] {
        BuiltInTables.files.map { ($0.name, Array($0.text.utf8)) }
    }
}
