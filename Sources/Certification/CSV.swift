// RFC 4180 records read straight from bytes: the one CSV reader behind the tables and the
// inventories. It never builds a String per line; fields are byte ranges into the buffer, and
// values are decoded only when asked for.
//
//   file        = [BOM] *(record | blank-line | comment) ; records end in LF or CRLF (or EOF)
//   record      = field *("," field)
//   field       = escaped / non-escaped
//   escaped     = DQUOTE *(any byte except DQUOTE / 2DQUOTE) DQUOTE   ; may span lines
//   non-escaped = *(any byte except "," CR LF DQUOTE)

/// One field of a record: a byte range of the buffer (the inside of the quotes when quoted).
public struct CSVField: Sendable {
    public var start: Int
    public var end: Int
    /// Quoted and containing `""`, which stands for one `"`.
    public var hasEscapedQuotes: Bool
}

/// One record: where it starts, the bytes it spans, and the framing error that cut it short.
public struct CSVRecord: Sendable {
    /// 1-based line on which the record starts.
    public var line: Int
    /// The record's bytes, without its line terminator.
    public var start: Int
    public var end: Int
    /// Set when the record is malformed; its fields are then incomplete.
    public var error: (code: CertificationError.Code, reason: String)?
}

/// Reads records one after another from a byte buffer the caller keeps alive.
public struct CSVScanner {
    private static let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","),
                       lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")

    public let bytes: UnsafeBufferPointer<UInt8>
    private var position: Int
    private var line = 1
    /// Lines whose first byte is this one are skipped (the tables use `#` comments).
    private let commentByte: UInt8?

    public init(_ bytes: UnsafeBufferPointer<UInt8>, commentByte: UInt8? = nil) {
        self.bytes = bytes
        self.commentByte = commentByte
        // A UTF-8 byte-order mark, as spreadsheet programs write, is not part of the first field.
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { position = 3 } else { position = 0 }
    }

    /// The next record, its fields written into `fields`; nil at the end of the buffer.
    /// Empty lines and comment lines are skipped.
    public mutating func next(fields: inout [CSVField]) -> CSVRecord? {
        fields.removeAll(keepingCapacity: true)
        let b = bytes, n = bytes.count
        var i = position
        // Skip empty lines and comments.
        while i < n {
            let c = b[i]
            if c == Self.lf { i += 1; line += 1; continue }
            if c == Self.cr, i + 1 < n, b[i + 1] == Self.lf { i += 2; line += 1; continue }
            if let commentByte, c == commentByte {
                while i < n, b[i] != Self.lf { i += 1 }
                if i < n { i += 1; line += 1 }
                continue
            }
            break
        }
        if i >= n { position = n; return nil }

        let startLine = line
        var record = CSVRecord(line: startLine, start: i, end: i, error: nil)
        while true {
            if i < n, b[i] == Self.quote {
                // Escaped field: runs to the next lone quote, across line breaks.
                i += 1
                let contentStart = i
                var escaped = false
                var linesInside = 0
                while true {
                    if i >= n {
                        // Never closed: report it and resume on the line after the record's first,
                        // so one bad quote does not swallow the rest of the file.
                        record.error = (.unterminatedQuote, "a quoted field opened on this line is never closed")
                        return resumeAfterFirstLine(record)
                    }
                    let c = b[i]
                    if c == Self.quote {
                        if i + 1 < n, b[i + 1] == Self.quote { escaped = true; i += 2; continue }
                        break
                    }
                    if c == Self.lf { linesInside += 1 }
                    i += 1
                }
                fields.append(CSVField(start: contentStart, end: i, hasEscapedQuotes: escaped))
                line += linesInside
                i += 1  // past the closing quote
                if i >= n { record.end = n; position = n; return record }
                let c = b[i]
                if c == Self.comma { i += 1; continue }
                if c == Self.lf { record.end = i; position = i + 1; line += 1; return record }
                if c == Self.cr, i + 1 < n, b[i + 1] == Self.lf { record.end = i; position = i + 2; line += 1; return record }
                if c == Self.cr, i + 1 == n { record.end = i; position = n; return record }
                if line > startLine {
                    // The quote spanned lines and then went wrong: most likely it was never meant
                    // to span them, so resume on the record's second line.
                    record.error = (.strayQuote, "a quoted field opened on this line closes on line \(line) and is followed by more text")
                    return resumeAfterFirstLine(record)
                }
                record.error = (.strayQuote, "unexpected character after the closing quote of field \(fields.count)")
                return skipRestOfLine(from: i, record: record)
            } else {
                let fieldStart = i
                while i < n {
                    let c = b[i]
                    if c == Self.comma || c == Self.lf { break }
                    if c == Self.cr, i + 1 == n || b[i + 1] == Self.lf { break }
                    if c == Self.quote {
                        record.error = (.strayQuote, "a quote inside unquoted field \(fields.count + 1); quote the whole field and double the quote (\"\")")
                        return skipRestOfLine(from: i, record: record)
                    }
                    i += 1
                }
                fields.append(CSVField(start: fieldStart, end: i, hasEscapedQuotes: false))
                if i >= n { record.end = n; position = n; return record }
                let c = b[i]
                if c == Self.comma { i += 1; continue }
                // A line terminator: LF, CRLF, or a CR that ends the buffer.
                record.end = i
                position = c == Self.lf ? i + 1 : min(i + 2, n)
                line += 1
                return record
            }
        }
    }

    /// Ends a malformed record at the end of its first line and resumes on the next one.
    private mutating func resumeAfterFirstLine(_ record: CSVRecord) -> CSVRecord {
        var record = record
        var j = record.start
        while j < bytes.count, bytes[j] != Self.lf { j += 1 }
        record.end = j > record.start && bytes[j - 1] == Self.cr ? j - 1 : j
        position = j < bytes.count ? j + 1 : bytes.count
        line = record.line + 1
        return record
    }

    private mutating func skipRestOfLine(from index: Int, record: CSVRecord) -> CSVRecord {
        var record = record
        var i = index
        while i < bytes.count, bytes[i] != Self.lf { i += 1 }
        record.end = i > record.start && bytes[i - 1] == Self.cr ? i - 1 : i
        position = i < bytes.count ? i + 1 : bytes.count
        line += 1
        return record
    }

    /// The field's value, quotes undone.
    public func string(_ field: CSVField) -> String {
        let slice = UnsafeBufferPointer(rebasing: bytes[field.start..<field.end])
        guard field.hasEscapedQuotes else { return String(decoding: slice, as: UTF8.self) }
        return String(decoding: Self.unescaped(slice), as: UTF8.self)
    }

    /// The field's value, quotes undone and surrounding spaces and tabs removed.
    public func trimmedString(_ field: CSVField) -> String {
        let trimmed = trimmedRange(field)
        let slice = UnsafeBufferPointer(rebasing: bytes[trimmed])
        guard field.hasEscapedQuotes else { return String(decoding: slice, as: UTF8.self) }
        return String(decoding: Self.unescaped(slice), as: UTF8.self)
    }

    /// The field's byte range without surrounding spaces and tabs.
    public func trimmedRange(_ field: CSVField) -> Range<Int> {
        var s = field.start, e = field.end
        while s < e, bytes[s] == 0x20 || bytes[s] == 0x09 { s += 1 }
        while e > s, bytes[e - 1] == 0x20 || bytes[e - 1] == 0x09 { e -= 1 }
        return s..<e
    }

    static func unescaped(_ slice: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(slice.count)
        var i = 0
        while i < slice.count {
            out.append(slice[i])
            i += slice[i] == quote && i + 1 < slice.count && slice[i + 1] == quote ? 2 : 1
        }
        return out
    }
}

/// Writing CSV: quote a field only when it needs it.
public enum CSVWriter {
    public static func needsQuotes(_ bytes: some Sequence<UInt8>) -> Bool {
        bytes.contains { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }
    }

    public static func append(_ value: String, to out: inout [UInt8]) {
        let utf8 = value.utf8
        guard needsQuotes(utf8) else { out.append(contentsOf: utf8); return }
        out.append(0x22)
        for c in utf8 {
            if c == 0x22 { out.append(0x22) }
            out.append(c)
        }
        out.append(0x22)
    }
}
