// Auditing a site inventory: one verdict per device, read straight from the CSV bytes.
//
// The inventory is a CSV file whose header names at least `device_id`, `model` and `firmware`,
// optionally `reader_model` and `site`, in any order, with any other columns (kept in the
// reports). Header names are matched ignoring case, surrounding spaces, and spaces or hyphens
// for underscores (`Device ID` = `device_id`). A row that cannot be read — bad quoting, the wrong
// number of fields, an empty device_id, model or firmware, a firmware that is not a version — is
// reported with its line and the audit goes on.
//
// Speed: the file is scanned once as bytes; the verdict of each distinct (model, firmware,
// reader) triple is computed once and looked up by its raw bytes afterwards.

/// Where the columns the audit reads are.
public struct InventoryColumns: Sendable, Equatable {
    public var deviceID: Int
    public var model: Int
    public var firmware: Int
    public var reader: Int?
    public var site: Int?
}

/// What became of one distinct (model, firmware, reader), or of a row that could not be read.
public enum AuditOutcome: Sendable {
    case verdict(Verdict)
    case malformed(String)

    public var verdictName: String {
        switch self {
        case .verdict(let v): return v.kind.rawValue
        case .malformed: return "malformed"
        }
    }
}

/// One record of the inventory (the header excluded).
public struct AuditRow: Sendable {
    /// 1-based line where the record starts.
    public var line: Int
    /// The record's bytes in the inventory buffer, without the line terminator.
    public var start: Int
    public var end: Int
    /// Index into `AuditResult.outcomes`.
    public var outcome: Int32
    /// False when the record's fields could not be split as the header says (quoting, count).
    public var framed: Bool
}

/// Counts over the whole inventory.
public struct AuditSummary: Sendable, Equatable {
    /// Devices with a verdict (malformed rows excluded).
    public var devices = 0
    public var counts: [VerdictKind: Int] = [:]
    public var malformed = 0

    public func count(_ kind: VerdictKind) -> Int { counts[kind] ?? 0 }
    public var certified: Int { count(.certified) }
    /// True only when every row is a certified device — and there is one: an inventory with no
    /// device (a header alone) certifies nothing.
    public var allCertified: Bool { devices > 0 && malformed == 0 && devices == certified }
}

public struct AuditResult: Sendable {
    /// The inventory's name as given (for messages and reports).
    public let file: String
    /// The header's column names as written.
    public let header: [String]
    public let columns: InventoryColumns
    public let rows: [AuditRow]
    public let outcomes: [AuditOutcome]
    public let summary: AuditSummary

    /// `file:line: reason` for every malformed row, in file order.
    public var malformedMessages: [String] {
        rows.compactMap { row in
            if case .malformed(let reason) = outcomes[Int(row.outcome)] { return "\(file):\(row.line): \(reason)" }
            return nil
        }
    }
}

public enum InventoryAudit {
    public static let requiredColumns = ["device_id", "model", "firmware"]
    public static let optionalColumns = ["reader_model", "site"]

    /// `Device ID` → `device_id`.
    static func normalizedColumn(_ name: String) -> String {
        String(name.lowercased().map { $0 == " " || $0 == "-" ? "_" : $0 })
    }

    /// Audits the inventory in `bytes` against `tables`. Throws only when the file cannot be
    /// audited at all (no header, a required column missing or repeated).
    public static func run(_ bytes: UnsafeBufferPointer<UInt8>, file: String,
                           tables: CertificationTables) throws(CertificationError) -> AuditResult {
        var scanner = CSVScanner(bytes)
        var fields: [CSVField] = []
        guard let headerRecord = scanner.next(fields: &fields) else {
            throw CertificationError(.missingHeader, "empty inventory; the first line must be a header naming \(requiredColumns.joined(separator: ", "))", file: file, line: 1)
        }
        if let error = headerRecord.error {
            throw CertificationError(error.code, "header: \(error.reason)", file: file, line: headerRecord.line)
        }
        let header = fields.map { scanner.trimmedString($0) }
        var position: [String: Int] = [:]
        for (i, name) in header.enumerated() {
            let key = normalizedColumn(name)
            guard requiredColumns.contains(key) || optionalColumns.contains(key) else { continue }
            if position[key] != nil {
                throw CertificationError(.duplicateColumn, "column '\(key)' appears twice in the header", file: file, line: headerRecord.line)
            }
            position[key] = i
        }
        let missing = requiredColumns.filter { position[$0] == nil }
        guard missing.isEmpty else {
            throw CertificationError(.missingColumn, "the header lacks \(missing.joined(separator: ", ")); it must name device_id, model and firmware (optionally reader_model, site), in any order", file: file, line: headerRecord.line)
        }
        let columns = InventoryColumns(deviceID: position["device_id"]!, model: position["model"]!,
                                       firmware: position["firmware"]!, reader: position["reader_model"],
                                       site: position["site"])
        let width = header.count

        var rows: [AuditRow] = []
        rows.reserveCapacity(bytes.count / 40)
        var outcomes: [AuditOutcome] = []
        var perOutcome: [Int] = []
        var cache = TripleCache()

        func add(_ outcome: AuditOutcome) -> Int32 {
            outcomes.append(outcome)
            perOutcome.append(0)
            return Int32(outcomes.count - 1)
        }

        while let record = scanner.next(fields: &fields) {
            var outcome: Int32
            var framed = true
            if let error = record.error {
                outcome = add(.malformed(error.reason))
                framed = false
            } else if fields.count != width {
                outcome = add(.malformed("\(fields.count) field\(fields.count == 1 ? "" : "s"); the header has \(width)"))
                framed = false
            } else {
                let device = scanner.trimmedRange(fields[columns.deviceID])
                let model = scanner.trimmedRange(fields[columns.model])
                let firmware = scanner.trimmedRange(fields[columns.firmware])
                let reader = columns.reader.map { scanner.trimmedRange(fields[$0]) } ?? 0..<0
                if device.isEmpty || model.isEmpty || firmware.isEmpty {
                    let empty = [(device, "device_id"), (model, "model"), (firmware, "firmware")].filter { $0.0.isEmpty }.map(\.1)
                    outcome = add(.malformed("empty \(empty.joined(separator: ", "))"))
                } else if let cached = cache.find(bytes, model, firmware, reader) {
                    outcome = cached
                } else {
                    func text(_ range: Range<Int>, _ field: Int?) -> String {
                        let slice = UnsafeBufferPointer(rebasing: bytes[range])
                        if let field, fields[field].hasEscapedQuotes { return String(decoding: CSVScanner.unescaped(slice), as: UTF8.self) }
                        return String(decoding: slice, as: UTF8.self)
                    }
                    let modelText = text(model, columns.model)
                    let firmwareText = text(firmware, columns.firmware)
                    let readerText = reader.isEmpty ? nil : text(reader, columns.reader)
                    do {
                        let version = try FirmwareVersion(device: firmwareText)
                        outcome = add(.verdict(tables.check(model: modelText, firmware: version, reader: readerText)))
                    } catch {
                        outcome = add(.malformed("firmware: \(error.reason)"))
                    }
                    cache.insert(bytes, model, firmware, reader, value: outcome)
                }
            }
            perOutcome[Int(outcome)] += 1
            rows.append(AuditRow(line: record.line, start: record.start, end: record.end, outcome: outcome, framed: framed))
        }

        var summary = AuditSummary()
        for (i, outcome) in outcomes.enumerated() {
            switch outcome {
            case .verdict(let v):
                summary.devices += perOutcome[i]
                summary.counts[v.kind, default: 0] += perOutcome[i]
            case .malformed:
                summary.malformed += perOutcome[i]
            }
        }
        return AuditResult(file: file, header: header, columns: columns, rows: rows, outcomes: outcomes, summary: summary)
    }
}

/// An open-addressing hash table from three byte ranges of one buffer (model, firmware, reader)
/// to an outcome index, so a repeated triple costs a hash and a compare, not an allocation.
struct TripleCache {
    private struct Entry {
        var hash: UInt64
        var start: Int
        var lengths: (Int32, Int32, Int32)
        var value: Int32
    }
    private var slots = [Int32](repeating: -1, count: 1024)
    private var entries: [Entry] = []
    private var arena: [UInt8] = []

    private static func hash(_ b: UnsafeBufferPointer<UInt8>, _ r: (Range<Int>, Range<Int>, Range<Int>)) -> UInt64 {
        @inline(__always) func mix(_ h: inout UInt64, _ range: Range<Int>) {
            for i in range { h = (h ^ UInt64(b[i])) &* 0x0000_0100_0000_01b3 }
            h = (h ^ 0xff) &* 0x0000_0100_0000_01b3
        }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        mix(&h, r.0)
        mix(&h, r.1)
        mix(&h, r.2)
        return h ^ (h >> 29)
    }

    private func matches(_ e: Entry, _ b: UnsafeBufferPointer<UInt8>, _ r: (Range<Int>, Range<Int>, Range<Int>)) -> Bool {
        guard e.lengths.0 == r.0.count, e.lengths.1 == r.1.count, e.lengths.2 == r.2.count else { return false }
        return arena.withUnsafeBufferPointer { a in
            @inline(__always) func same(_ k: Int, _ range: Range<Int>) -> Bool {
                var k = k
                for i in range {
                    if a[k] != b[i] { return false }
                    k += 1
                }
                return true
            }
            return same(e.start, r.0) && same(e.start + r.0.count, r.1) && same(e.start + r.0.count + r.1.count, r.2)
        }
    }

    func find(_ b: UnsafeBufferPointer<UInt8>, _ model: Range<Int>, _ firmware: Range<Int>, _ reader: Range<Int>) -> Int32? {
        let r = (model, firmware, reader)
        let h = Self.hash(b, r)
        let mask = slots.count - 1
        var s = Int(truncatingIfNeeded: h) & mask
        while true {
            let index = slots[s]
            if index < 0 { return nil }
            let e = entries[Int(index)]
            if e.hash == h, matches(e, b, r) { return e.value }
            s = (s + 1) & mask
        }
    }

    mutating func insert(_ b: UnsafeBufferPointer<UInt8>, _ model: Range<Int>, _ firmware: Range<Int>, _ reader: Range<Int>, value: Int32) {
        let r = (model, firmware, reader)
        let entry = Entry(hash: Self.hash(b, r), start: arena.count,
                          lengths: (Int32(model.count), Int32(firmware.count), Int32(reader.count)), value: value)
        arena.append(contentsOf: b[model])
        arena.append(contentsOf: b[firmware])
        arena.append(contentsOf: b[reader])
        entries.append(entry)
        if entries.count * 2 > slots.count { rehash() } else { place(entries.count - 1) }
    }

    private mutating func place(_ index: Int) {
        let mask = slots.count - 1
        var s = Int(truncatingIfNeeded: entries[index].hash) & mask
        while slots[s] >= 0 { s = (s + 1) & mask }
        slots[s] = Int32(index)
    }

    private mutating func rehash() {
        slots = [Int32](repeating: -1, count: slots.count * 2)
        for i in entries.indices { place(i) }
    }
}
