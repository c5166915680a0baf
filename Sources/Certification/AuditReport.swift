import ByteCore
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

    /// The row's fields as byte ranges of `bytes` (framed rows only), without building Strings.
    private func splitFields(_ row: AuditRow, into fields: inout [CSVField]) {
        let slice = UnsafeBufferPointer(rebasing: bytes[row.start..<row.end])
        var scanner = CSVScanner(slice)
        _ = scanner.next(fields: &fields)
        for i in fields.indices {
            let trimmed = scanner.trimmedRange(fields[i])
            fields[i].start = trimmed.lowerBound + row.start
            fields[i].end = trimmed.upperBound + row.start
        }
    }

    /// The field's bytes when they can be written as they are (no `""`, all ASCII), else nil.
    private func plainValue(_ field: CSVField) -> UnsafeBufferPointer<UInt8>? {
        let slice = UnsafeBufferPointer(rebasing: bytes[field.start..<field.end])
        if field.hasEscapedQuotes { return nil }
        for c in slice where c >= 0x80 { return nil }
        return slice
    }

    /// The field's value as valid UTF-8 (quotes undone, invalid bytes replaced).
    private func repairedValue(_ field: CSVField) -> [UInt8] {
        let slice = UnsafeBufferPointer(rebasing: bytes[field.start..<field.end])
        let value = field.hasEscapedQuotes ? CSVScanner.unescaped(slice) : Array(slice)
        return Array(String(decoding: value, as: UTF8.self).utf8)
    }

    private mutating func appendJSON(_ field: CSVField) {
        if let plain = plainValue(field) {
            JSONText.append(bytes: plain, to: &out)
        } else {
            let value = repairedValue(field)
            value.withUnsafeBufferPointer { JSONText.append(bytes: $0, to: &out) }
        }
    }

    private mutating func appendXML(_ field: CSVField) {
        if let plain = plainValue(field) {
            XMLText.append(bytes: plain, to: &out)
        } else {
            let value = repairedValue(field)
            value.withUnsafeBufferPointer { XMLText.append(bytes: $0, to: &out) }
        }
    }

    private func isEmpty(_ field: CSVField) -> Bool { field.start == field.end }

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
        for kind in VerdictKind.allCases { pairs.append((kind.jsonKey, String(s.count(kind)))) }
        pairs.append(("malformed", String(s.malformed)))
        pairs.append(("allCertified", s.allCertified ? "true" : "false"))
        return JSONText.object(pairs)
    }

    /// A verdict as JSON members (shared with `firmware check --json`).
    public static func verdictPairs(_ v: Verdict) -> [(String, String)] {
        [
            ("verdict", JSONText.string(v.kind.rawValue)),
            ("certified", v.isCertified ? "true" : "false"),
            ("summary", JSONText.string(v.summary)),
            ("matchedModel", JSONText.optional(v.row?.displayName)),
            ("kind", JSONText.optional(v.row?.kind.rawValue)),
            ("status", JSONText.optional(v.row?.status.rawValue)),
            ("firstCertified", JSONText.optional(v.row?.firstCertifiedText)),
            ("requiredFirmware", JSONText.optional(v.minimumFirmware)),
            ("requires", JSONText.optional(v.row?.requirement?.text)),
            ("detail", JSONText.string(v.detail)),
            ("suggestions", JSONText.array(v.suggestions.map(JSONText.string))),
        ]
    }

    private mutating func writeJSON() {
        let c = result.columns
        emit("{\n  \"inventory\": \(JSONText.string(result.file)),\n  \"tables\": \(JSONText.string(tablesOrigin)),\n")
        emit("  \"summary\": \(summaryJSON()),\n  \"devices\": [")
        // Encoded once: each outcome's verdict members, each header name as a key.
        let verdicts: [[UInt8]] = result.outcomes.map { outcome in
            guard case .verdict(let v) = outcome else { return [] }
            return Array(Self.verdictPairs(v).map { ", " + JSONText.string($0.0) + ": " + $0.1 }.joined().utf8)
        }
        let keys: [[UInt8]] = result.header.enumerated().map { i, name in
            Array(((i == 0 ? "" : ", ") + JSONText.string(name) + ": ").utf8)
        }
        var first = true
        var malformed: [String] = []
        var fields: [CSVField] = []
        for row in result.rows {
            guard case .verdict = outcome(row) else {
                if case .malformed(let reason) = outcome(row) {
                    malformed.append(JSONText.object([("line", String(row.line)), ("error", JSONText.string(reason))]))
                }
                continue
            }
            splitFields(row, into: &fields)
            out.append(contentsOf: (first ? "\n    {\"line\": " : ",\n    {\"line\": ").utf8)
            first = false
            appendDecimal(row.line)
            out.append(contentsOf: ", \"deviceID\": ".utf8)
            appendJSON(fields[c.deviceID])
            out.append(contentsOf: ", \"site\": ".utf8)
            if let site = c.site { appendJSON(fields[site]) } else { out.append(contentsOf: "null".utf8) }
            out.append(contentsOf: ", \"model\": ".utf8)
            appendJSON(fields[c.model])
            out.append(contentsOf: ", \"firmware\": ".utf8)
            appendJSON(fields[c.firmware])
            out.append(contentsOf: ", \"readerModel\": ".utf8)
            if let reader = c.reader, !isEmpty(fields[reader]) { appendJSON(fields[reader]) } else { out.append(contentsOf: "null".utf8) }
            out.append(contentsOf: verdicts[Int(row.outcome)])
            out.append(contentsOf: ", \"columns\": {".utf8)
            for (i, field) in fields.enumerated() {
                out.append(contentsOf: keys[i])
                appendJSON(field)
            }
            out.append(contentsOf: "}}".utf8)
            flushIfFull()
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
        // Encoded once: each outcome's end of a test case.
        let endings: [[UInt8]] = result.outcomes.map { outcome in
            switch outcome {
            case .verdict(let v) where v.isCertified:
                return Array("/>\n".utf8)
            case .verdict(let v):
                return Array(">\n      <failure type=\"\(v.kind.rawValue)\" message=\"\(XMLText.escaped(v.summary))\">\(XMLText.escaped(v.detail))</failure>\n    </testcase>\n".utf8)
            case .malformed:
                return []
            }
        }
        let fileAttribute = Array("\" file=\"\(name)\" line=\"".utf8)
        let c = result.columns
        var fields: [CSVField] = []
        for row in result.rows {
            if case .malformed(let reason) = outcome(row) {
                emit("    <testcase classname=\"firmware.inventory\" name=\"line \(row.line)\" file=\"\(name)\" line=\"\(row.line)\">\n")
                emit("      <error type=\"malformed\" message=\"\(XMLText.escaped(reason))\">\(XMLText.escaped("\(result.file):\(row.line): \(reason)"))</error>\n    </testcase>\n")
                continue
            }
            splitFields(row, into: &fields)
            out.append(contentsOf: "    <testcase classname=\"firmware.".utf8)
            if let site = c.site, !isEmpty(fields[site]) { appendXML(fields[site]) } else { out.append(contentsOf: "inventory".utf8) }
            out.append(contentsOf: "\" name=\"".utf8)
            appendXML(fields[c.deviceID])
            out.append(contentsOf: " (".utf8)
            appendXML(fields[c.model])
            out.append(0x20)
            appendXML(fields[c.firmware])
            if let reader = c.reader, !isEmpty(fields[reader]) {
                out.append(contentsOf: " with reader ".utf8)
                appendXML(fields[reader])
            }
            out.append(0x29)
            out.append(contentsOf: fileAttribute)
            appendDecimal(row.line)
            out.append(0x22)
            out.append(contentsOf: endings[Int(row.outcome)])
            flushIfFull()
        }
        emit("  </testsuite>\n</testsuites>\n")
    }

    // MARK: Table

    /// The inventory columns the table shows, in order (then the verdict).
    private var tableColumns: [(title: String, column: Int)] {
        let c = result.columns
        var columns = [("DEVICE", c.deviceID)]
        if let site = c.site { columns.append(("SITE", site)) }
        columns += [("MODEL", c.model), ("FIRMWARE", c.firmware)]
        if let reader = c.reader { columns.append(("READER", reader)) }
        return columns
    }

    /// Characters a field takes on screen (its bytes when ASCII).
    private func displayWidth(_ field: CSVField) -> Int {
        if let plain = plainValue(field) { return plain.count }
        return String(decoding: repairedValue(field), as: UTF8.self).count
    }

    /// Two passes over the rows (widths, then lines), so a large inventory is never held as Strings.
    private mutating func writeTable() {
        let columns = tableColumns
        let summaries: [String] = result.outcomes.map { if case .verdict(let v) = $0 { return v.summary } else { return "" } }
        var widths = [4] + columns.map(\.title.count)  // LINE, then the columns
        var fields: [CSVField] = []
        var malformed: [String] = []
        for row in result.rows {
            guard case .verdict = outcome(row) else {
                if case .malformed(let reason) = outcome(row) { malformed.append("\(result.file):\(row.line): \(reason)") }
                continue
            }
            splitFields(row, into: &fields)
            widths[0] = max(widths[0], String(row.line).count)
            for (i, column) in columns.enumerated() { widths[i + 1] = max(widths[i + 1], displayWidth(fields[column.column])) }
        }
        func pad(_ used: Int, _ width: Int, _ out: inout [UInt8]) {
            out.append(contentsOf: repeatElement(0x20, count: width - used + 2))
        }
        out.append(contentsOf: "LINE".utf8)
        pad(4, widths[0], &out)
        for (i, column) in columns.enumerated() {
            out.append(contentsOf: column.title.utf8)
            pad(column.title.count, widths[i + 1], &out)
        }
        out.append(contentsOf: "VERDICT\n".utf8)
        for row in result.rows {
            guard case .verdict = outcome(row) else { continue }
            splitFields(row, into: &fields)
            let lineStart = out.count
            appendDecimal(row.line)
            pad(out.count - lineStart, widths[0], &out)
            for (i, column) in columns.enumerated() {
                let field = fields[column.column]
                if let plain = plainValue(field) {
                    out.append(contentsOf: plain)
                } else {
                    out.append(contentsOf: String(decoding: repairedValue(field), as: UTF8.self).utf8)
                }
                pad(displayWidth(field), widths[i + 1], &out)
            }
            out.append(contentsOf: summaries[Int(row.outcome)].utf8)
            out.append(0x0A)
            flushIfFull()
        }
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
