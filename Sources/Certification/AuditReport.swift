// The audit's reports: a table for people, JSON, CSV for spreadsheets, JUnit XML for CI.

public enum AuditFormat: String, Sendable, CaseIterable {
    case table, json, csv, junit
}

/// Writes an audit report in chunks to `sink`, so a million-row report never sits whole in memory.
public struct AuditReportWriter {
    public let result: AuditResult
    /// The inventory bytes the result's row ranges point into.
    public let bytes: UnsafeBufferPointer<UInt8>
    /// Where the tables came from (named in the JSON and JUnit reports).
    public let tablesOrigin: String
    private let sink: ([UInt8]) -> Void
    private var out: [UInt8] = []

    public init(result: AuditResult, bytes: UnsafeBufferPointer<UInt8>, tablesOrigin: String, sink: @escaping ([UInt8]) -> Void) {
        self.result = result
        self.bytes = bytes
        self.tablesOrigin = tablesOrigin
        self.sink = sink
        out.reserveCapacity(1 << 17)
    }

    public mutating func write(_ format: AuditFormat) {
        switch format {
        case .table: writeTable()
        case .json: writeJSON()
        case .csv: writeCSV()
        case .junit: writeJUnit()
        }
        flush()
    }

    // MARK: Output buffer

    private mutating func emit(_ text: String) {
        out.append(contentsOf: text.utf8)
        if out.count >= 1 << 16 { flush() }
    }

    private mutating func flushIfFull() {
        if out.count >= 1 << 16 { flush() }
    }

    private mutating func flush() {
        guard !out.isEmpty else { return }
        sink(out)
        out.removeAll(keepingCapacity: true)
    }

    private mutating func appendDecimal(_ value: Int) {
        if value == 0 { out.append(0x30); return }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var v = value, n = 0
        withUnsafeMutableBytes(of: &digits) { d in
            while v > 0 { d[n] = UInt8(v % 10) + 0x30; v /= 10; n += 1 }
            for i in stride(from: n - 1, through: 0, by: -1) { out.append(d[i]) }
        }
    }

    // MARK: Fields of a row

    /// The row's fields (empty strings when the row could not be split as the header says).
    private func fields(of row: AuditRow) -> [String] {
        guard row.framed else { return Array(repeating: "", count: result.header.count) }
        let slice = UnsafeBufferPointer(rebasing: bytes[row.start..<row.end])
        var scanner = CSVScanner(slice)
        var fields: [CSVField] = []
        _ = scanner.next(fields: &fields)
        return fields.map { scanner.trimmedString($0) }
    }

    private func outcome(_ row: AuditRow) -> AuditOutcome { result.outcomes[Int(row.outcome)] }

    // MARK: CSV

    /// The columns the audit adds after the inventory's own; a name the inventory already uses
    /// gets the prefix `audit_`.
    public static func addedColumns(header: [String]) -> [String] {
        let taken = Set(header.map(InventoryAudit.normalizedColumn))
        return ["line", "verdict", "matched_model", "required_firmware", "detail"].map {
            taken.contains($0) ? "audit_" + $0 : $0
        }
    }

    private mutating func writeCSV() {
        var headerLine: [UInt8] = []
        for (i, name) in (result.header + Self.addedColumns(header: result.header)).enumerated() {
            if i > 0 { headerLine.append(0x2C) }
            CSVWriter.append(name, to: &headerLine)
        }
        headerLine.append(0x0A)
        out.append(contentsOf: headerLine)
        // Each distinct outcome's columns are encoded once.
        let suffixes: [[UInt8]] = result.outcomes.map { outcome in
            var s: [UInt8] = []
            let values: [String]
            switch outcome {
            case .verdict(let v):
                values = [v.kind.rawValue, v.row?.displayName ?? "", v.minimumFirmware ?? "", v.detail]
            case .malformed(let reason):
                values = ["malformed", "", "", reason]
            }
            for value in values {
                s.append(0x2C)
                CSVWriter.append(value, to: &s)
            }
            s.append(0x0A)
            return s
        }
        let emptyFields = [UInt8](repeating: 0x2C, count: max(0, result.header.count - 1))
        for row in result.rows {
            if row.framed {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[row.start..<row.end]))
            } else {
                out.append(contentsOf: emptyFields)
            }
            out.append(0x2C)
            appendDecimal(row.line)
            out.append(contentsOf: suffixes[Int(row.outcome)])
            flushIfFull()
        }
    }

    // MARK: JSON

    private func summaryJSON() -> String {
        let s = result.summary
        var pairs: [(String, String)] = [("devices", String(s.devices))]
        for kind in VerdictKind.allCases { pairs.append((kind.rawValue, String(s.count(kind)))) }
        pairs.append(("malformed", String(s.malformed)))
        pairs.append(("all_certified", s.allCertified ? "true" : "false"))
        return JSONText.object(pairs)
    }

    /// A verdict as JSON members (shared with `firmware check --json`).
    public static func verdictPairs(_ v: Verdict) -> [(String, String)] {
        [
            ("verdict", JSONText.string(v.kind.rawValue)),
            ("certified", v.isCertified ? "true" : "false"),
            ("summary", JSONText.string(v.summary)),
            ("matched_model", JSONText.optional(v.row?.displayName)),
            ("kind", JSONText.optional(v.row?.kind.rawValue)),
            ("status", JSONText.optional(v.row?.status.rawValue)),
            ("first_certified", JSONText.optional(v.row?.firstCertifiedText)),
            ("required_firmware", JSONText.optional(v.minimumFirmware)),
            ("requires", JSONText.optional(v.row?.requirement?.text)),
            ("detail", JSONText.string(v.detail)),
            ("suggestions", JSONText.array(v.suggestions.map(JSONText.string))),
        ]
    }

    private mutating func writeJSON() {
        let c = result.columns
        emit("{\n  \"inventory\": \(JSONText.string(result.file)),\n  \"tables\": \(JSONText.string(tablesOrigin)),\n")
        emit("  \"summary\": \(summaryJSON()),\n  \"devices\": [")
        var first = true
        var malformed: [String] = []
        for row in result.rows {
            let values = fields(of: row)
            switch outcome(row) {
            case .malformed(let reason):
                malformed.append(JSONText.object([("line", String(row.line)), ("error", JSONText.string(reason))]))
            case .verdict(let v):
                var pairs: [(String, String)] = [
                    ("line", String(row.line)),
                    ("device_id", JSONText.string(values[c.deviceID])),
                    ("site", JSONText.optional(c.site.map { values[$0] })),
                    ("model", JSONText.string(values[c.model])),
                    ("firmware", JSONText.string(values[c.firmware])),
                    ("reader_model", JSONText.optional(c.reader.map { values[$0] }.flatMap { $0.isEmpty ? nil : $0 })),
                ]
                pairs += Self.verdictPairs(v)
                pairs.append(("columns", JSONText.object(zip(result.header, values).map { ($0, JSONText.string($1)) })))
                emit((first ? "\n    " : ",\n    ") + JSONText.object(pairs))
                first = false
            }
        }
        emit(first ? "],\n" : "\n  ],\n")
        emit("  \"malformed\": [" + (malformed.isEmpty ? "" : "\n    " + malformed.joined(separator: ",\n    ") + "\n  ") + "]\n}\n")
    }

    // MARK: JUnit

    private mutating func writeJUnit() {
        let s = result.summary
        let failures = s.devices - s.certified
        let name = XMLText.escaped(result.file)
        let counts = "tests=\"\(result.rows.count)\" failures=\"\(failures)\" errors=\"\(s.malformed)\" skipped=\"0\""
        emit("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        emit("<testsuites name=\"lockbench firmware audit\" \(counts)>\n")
        emit("  <testsuite name=\"\(name)\" \(counts)>\n")
        emit("    <properties><property name=\"tables\" value=\"\(XMLText.escaped(tablesOrigin))\"/></properties>\n")
        let c = result.columns
        for row in result.rows {
            let values = fields(of: row)
            let site = c.site.map { values[$0] } ?? ""
            let classname = "firmware." + (site.isEmpty ? "inventory" : site)
            switch outcome(row) {
            case .malformed(let reason):
                emit("    <testcase classname=\"\(XMLText.escaped(classname))\" name=\"line \(row.line)\" file=\"\(name)\" line=\"\(row.line)\">\n")
                emit("      <error type=\"malformed\" message=\"\(XMLText.escaped(reason))\">\(XMLText.escaped("\(result.file):\(row.line): \(reason)"))</error>\n    </testcase>\n")
            case .verdict(let v):
                let reader = c.reader.map { values[$0] }.flatMap { $0.isEmpty ? nil : " with reader \($0)" } ?? ""
                let title = "\(values[c.deviceID]) (\(values[c.model]) \(values[c.firmware])\(reader))"
                let open = "    <testcase classname=\"\(XMLText.escaped(classname))\" name=\"\(XMLText.escaped(title))\" file=\"\(name)\" line=\"\(row.line)\""
                if v.isCertified {
                    emit(open + "/>\n")
                } else {
                    emit(open + ">\n      <failure type=\"\(v.kind.rawValue)\" message=\"\(XMLText.escaped(v.summary))\">\(XMLText.escaped(v.detail))</failure>\n    </testcase>\n")
                }
            }
        }
        emit("  </testsuite>\n</testsuites>\n")
    }

    // MARK: Table

    private mutating func writeTable() {
        let c = result.columns
        var titles = ["LINE", "DEVICE", "MODEL", "FIRMWARE"]
        if c.reader != nil { titles.append("READER") }
        if c.site != nil { titles.insert("SITE", at: 2) }
        titles.append("VERDICT")
        var lines: [[String]] = []
        var malformed: [String] = []
        for row in result.rows {
            let values = fields(of: row)
            switch outcome(row) {
            case .malformed(let reason):
                malformed.append("\(result.file):\(row.line): \(reason)")
            case .verdict(let v):
                var cells = [String(row.line), values[c.deviceID], values[c.model], values[c.firmware]]
                if let r = c.reader { cells.append(values[r]) }
                if let s = c.site { cells.insert(values[s], at: 2) }
                cells.append(v.summary)
                lines.append(cells)
            }
        }
        var widths = titles.map(\.count)
        for cells in lines { for (i, cell) in cells.enumerated() { widths[i] = max(widths[i], cell.count) } }
        func render(_ cells: [String]) -> String {
            var line = ""
            for (i, cell) in cells.enumerated() {
                line += cell
                if i < cells.count - 1 { line += String(repeating: " ", count: widths[i] - cell.count + 2) }
            }
            return line + "\n"
        }
        emit(render(titles))
        for cells in lines { emit(render(cells)) }
        if !malformed.isEmpty {
            emit("\nMalformed rows (not audited):\n")
            for m in malformed { emit("  " + m + "\n") }
        }
        emit("\n" + Self.summaryLine(result.summary) + "\n")
    }

    /// `15 devices: 5 certified, 2 upgrade required, …; 1 malformed row`.
    public static func summaryLine(_ s: AuditSummary) -> String {
        let names: [(VerdictKind, String)] = [
            (.certified, "certified"), (.upgradeRequired, "upgrade required"), (.inProcess, "certification in process"),
            (.notPursued, "not pursued"), (.requirementNotMet, "requirement not met"), (.unknownModel, "unknown model"),
        ]
        let parts = names.compactMap { s.count($0.0) > 0 ? "\(s.count($0.0)) \($0.1)" : nil }
        var line = "\(s.devices) device\(s.devices == 1 ? "" : "s")"
        if !parts.isEmpty { line += ": " + parts.joined(separator: ", ") }
        if s.malformed > 0 { line += "; \(s.malformed) malformed row\(s.malformed == 1 ? "" : "s")" }
        line += s.allCertified ? " — all certified" : " — not all certified"
        return line
    }
}
