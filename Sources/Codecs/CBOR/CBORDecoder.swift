/// Decodes one CBOR item from bytes.
///
/// Always rejected: trailing bytes after the item, indefinite lengths (LockBench's documents and
/// messages never use them, and RFC 8949 §4.2.1 forbids them in deterministic encoding), reserved
/// additional information, invalid UTF-8, duplicate map keys, two-byte simple values below 32,
/// tags 0/1/24 on the wrong content, nesting deeper than `maxDepth`.
///
/// With `requireDeterministic` (strict mode) also rejected: non-shortest integers, lengths, tags
/// and floats, and map keys out of bytewise order. The default is lenient on those two points so
/// documents from other encoders (e.g. maps in insertion order) are read; signatures and digests
/// are always computed over the bytes as received, never over a re-encoding.
public struct CBORDecoder {
    public struct Options: Sendable {
        public var maxDepth: Int
        public var requireDeterministic: Bool
        public init(maxDepth: Int = 32, requireDeterministic: Bool = false) {
            self.maxDepth = maxDepth
            self.requireDeterministic = requireDeterministic
        }
        public static let strict = Options(requireDeterministic: true)
    }

    private let bytes: [UInt8]
    private var index: Int
    private let options: Options

    init(_ bytes: [UInt8], options: Options) {
        self.bytes = bytes
        self.index = 0
        self.options = options
    }

    mutating func decodeOne() throws(CBORError) -> CBOR {
        let item = try decodeItem(depth: 0)
        guard index == bytes.count else {
            throw CBORError(.trailingBytes, "\(bytes.count - index) byte(s) after the item", offset: index)
        }
        return item
    }

    private mutating func byte() throws(CBORError) -> UInt8 {
        guard index < bytes.count else { throw CBORError(.truncated, "input ended inside an item", offset: index) }
        defer { index += 1 }
        return bytes[index]
    }

    private mutating func take(_ n: UInt64) throws(CBORError) -> ArraySlice<UInt8> {
        guard n <= UInt64(Int32.max) else {
            throw CBORError(.lengthTooLarge, "length \(n) is beyond any input LockBench reads", offset: index)
        }
        guard n <= UInt64(bytes.count - index) else {
            throw CBORError(.truncated, "needs \(n) byte(s), \(bytes.count - index) left", offset: index)
        }
        let start = index
        index += Int(n)
        return bytes[start..<index]
    }

    /// Reads the argument of a head; `ai` is the 5-bit additional information.
    private mutating func argument(_ ai: UInt8, headAt: Int) throws(CBORError) -> UInt64 {
        let value: UInt64
        let minimum: UInt64
        switch ai {
        case 0..<24: return UInt64(ai)
        case 24: value = UInt64(try byte()); minimum = 24
        case 25:
            var v: UInt64 = 0
            for b in try take(2) { v = v << 8 | UInt64(b) }
            value = v; minimum = 0x100
        case 26:
            var v: UInt64 = 0
            for b in try take(4) { v = v << 8 | UInt64(b) }
            value = v; minimum = 0x1_0000
        case 27:
            var v: UInt64 = 0
            for b in try take(8) { v = v << 8 | UInt64(b) }
            value = v; minimum = 0x1_0000_0000
        case 31: throw CBORError(.indefiniteLength, "indefinite-length items are not accepted", offset: headAt)
        default: throw CBORError(.reservedAdditionalInfo, "additional information \(ai) is reserved", offset: headAt)
        }
        if options.requireDeterministic && value < minimum {
            throw CBORError(.nonShortestEncoding, "argument \(value) not in its shortest form", offset: headAt)
        }
        return value
    }

    private mutating func decodeItem(depth: Int) throws(CBORError) -> CBOR {
        guard depth <= options.maxDepth else {
            throw CBORError(.depthExceeded, "nesting deeper than \(options.maxDepth)", offset: index)
        }
        let headAt = index
        let initial = try byte()
        let major = initial >> 5
        let ai = initial & 0x1F
        if major == 7 { return try decodeSimple(ai, headAt: headAt) }
        let arg = try argument(ai, headAt: headAt)
        switch major {
        case 0: return .unsigned(arg)
        case 1: return .negative(arg)
        case 2: return .bytes(Array(try take(arg)))
        case 3:
            let raw = try take(arg)
            guard let s = String(validatingUTF8Bytes: raw) else {
                throw CBORError(.invalidUTF8, "text string is not valid UTF-8", offset: headAt)
            }
            return .text(s)
        case 4:
            // Every element takes at least one byte: a count above the remaining input is a lie.
            guard arg <= UInt64(bytes.count - index) else {
                throw CBORError(.truncated, "array of \(arg) items in \(bytes.count - index) byte(s)", offset: headAt)
            }
            var items = [CBOR]()
            items.reserveCapacity(Int(arg))
            for _ in 0..<arg { items.append(try decodeItem(depth: depth + 1)) }
            return .array(items)
        case 5:
            guard arg <= UInt64(bytes.count - index) / 2 else {
                throw CBORError(.truncated, "map of \(arg) entries in \(bytes.count - index) byte(s)", offset: headAt)
            }
            var map = [CBOR: CBOR](minimumCapacity: Int(arg))
            var previousKey: ArraySlice<UInt8>? = nil
            for _ in 0..<arg {
                let keyAt = index
                let key = try decodeItem(depth: depth + 1)
                let keyBytes = bytes[keyAt..<index]
                if options.requireDeterministic, let p = previousKey, !p.lexicographicallyPrecedes(keyBytes) {
                    if p.elementsEqual(keyBytes) {
                        throw CBORError(.duplicateMapKey, "map key repeated", offset: keyAt)
                    }
                    throw CBORError(.unsortedMapKeys, "map keys not in bytewise order", offset: keyAt)
                }
                previousKey = keyBytes
                let value = try decodeItem(depth: depth + 1)
                if map.updateValue(value, forKey: key) != nil {
                    throw CBORError(.duplicateMapKey, "map key \(key) repeated", offset: keyAt)
                }
            }
            return .map(map)
        case 6:
            let content = try decodeItem(depth: depth + 1)
            switch (arg, content) {
            case (CBOR.Tag.dateTimeString, .text), (CBOR.Tag.epochDateTime, .unsigned),
                 (CBOR.Tag.epochDateTime, .negative), (CBOR.Tag.epochDateTime, .float),
                 (CBOR.Tag.encodedCBOR, .bytes):
                break
            case (CBOR.Tag.dateTimeString, _), (CBOR.Tag.epochDateTime, _), (CBOR.Tag.encodedCBOR, _):
                throw CBORError(.invalidTagContent, "tag \(arg) cannot hold a \(content.kindName)", offset: headAt)
            default: break
            }
            if arg == CBOR.Tag.dateTimeString, case .text(let s) = content, RFC3339.parse(s) == nil {
                throw CBORError(.invalidTagContent, "tag 0 holds \"\(s)\", not an RFC 3339 date-time", offset: headAt)
            }
            if arg == CBOR.Tag.epochDateTime, let seconds = content.doubleValue, !RFC3339.isRepresentable(seconds: seconds) {
                throw CBORError(.invalidTagContent, "tag 1 holds \(seconds), not a time between years 0000 and 9999", offset: headAt)
            }
            return .tagged(arg, content)
        default:
            fatalError("unreachable: major type \(major)")
        }
    }

    private mutating func decodeSimple(_ ai: UInt8, headAt: Int) throws(CBORError) -> CBOR {
        switch ai {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 23: return .undefined
        case 0..<20: return .simple(ai)
        case 24:
            let v = try byte()
            guard v >= 32 else {
                throw CBORError(.invalidSimpleValue, "simple value \(v) in the two-byte form", offset: headAt)
            }
            return .simple(v)
        case 25, 26, 27:
            let raw = try take(ai == 25 ? 2 : ai == 26 ? 4 : 8)
            var v: UInt64 = 0
            for b in raw { v = v << 8 | UInt64(b) }
            let d: Double
            switch ai {
            case 25: d = Half.toDouble(UInt16(v))
            case 26: d = Double(Float(bitPattern: UInt32(v)))
            default: d = Double(bitPattern: v)
            }
            if options.requireDeterministic {
                var shortest = [UInt8]()
                CBOR.writeFloat(d, &shortest)
                if shortest.count != raw.count + 1 {
                    throw CBORError(.nonShortestEncoding, "float \(d) not in its shortest form", offset: headAt)
                }
            }
            return .float(d)
        case 31: throw CBORError(.unexpectedBreak, "break outside an indefinite-length item", offset: headAt)
        default: throw CBORError(.reservedAdditionalInfo, "additional information \(ai) is reserved", offset: headAt)
        }
    }
}

extension CBORDecoder {
    /// Reads the head of a definite-length array (major 4) or map (major 5) at the start and
    /// returns its count; anything else is `unexpectedType`.
    fileprivate mutating func containerHead(major expected: UInt8, _ what: String) throws(CBORError) -> Int {
        let headAt = index
        let initial = try byte()
        guard initial >> 5 == expected else {
            throw CBORError(.unexpectedType, "\(what): expected \(expected == 4 ? "array" : "map")", offset: headAt)
        }
        let n = try argument(initial & 0x1F, headAt: headAt)
        // Every item takes at least one byte.
        guard n <= UInt64(bytes.count - index) else {
            throw CBORError(.truncated, "\(what): \(n) items in \(bytes.count - index) byte(s)", offset: headAt)
        }
        return Int(n)
    }

    /// One whole item (validated like `decode`), as the bytes it occupies.
    fileprivate mutating func rawItem() throws(CBORError) -> (CBOR, ArraySlice<UInt8>) {
        let start = index
        let item = try decodeItem(depth: 1)
        return (item, bytes[start..<index])
    }

    fileprivate func finished() throws(CBORError) {
        guard index == bytes.count else {
            throw CBORError(.trailingBytes, "\(bytes.count - index) byte(s) after the item", offset: index)
        }
    }
}

extension CBOR {
    /// The entries of the map that fills `bytes`, each value as the exact bytes it arrived in
    /// (so an embedded document is passed on verbatim, never re-encoded).
    public static func rawMapEntries(_ bytes: [UInt8], options: CBORDecoder.Options = .init())
        throws(CBORError) -> [(key: CBOR, value: CBOR, raw: [UInt8])] {
        var d = CBORDecoder(bytes, options: options)
        let n = try d.containerHead(major: 5, "map")
        var out: [(key: CBOR, value: CBOR, raw: [UInt8])] = []
        for _ in 0..<n {
            let (key, _) = try d.rawItem()
            guard !out.contains(where: { $0.key == key }) else { throw CBORError(.duplicateMapKey, "map key \(key) repeated") }
            let (value, raw) = try d.rawItem()
            out.append((key, value, Array(raw)))
        }
        try d.finished()
        return out
    }

    /// The items of the array that fills `bytes`, each as the exact bytes it arrived in.
    public static func rawArrayItems(_ bytes: [UInt8], options: CBORDecoder.Options = .init()) throws(CBORError) -> [[UInt8]] {
        var d = CBORDecoder(bytes, options: options)
        let n = try d.containerHead(major: 4, "array")
        var out: [[UInt8]] = []
        for _ in 0..<n { out.append(Array(try d.rawItem().1)) }
        try d.finished()
        return out
    }

    /// Writes an array head for `count` items (the caller appends the items' bytes).
    public static func arrayHead(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        writeHead(major: 4, UInt64(count), &out)
        return out
    }

    /// Writes a map head for `count` entries.
    public static func mapHead(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        writeHead(major: 5, UInt64(count), &out)
        return out
    }
}

extension CBOR {
    /// Decodes exactly one item filling all of `bytes`.
    public init<C: Collection>(parsing bytes: C, options: CBORDecoder.Options = .init()) throws(CBORError)
    where C.Element == UInt8 {
        var decoder = CBORDecoder(Array(bytes), options: options)
        self = try decoder.decodeOne()
    }
}

extension String {
    /// nil unless `bytes` is well-formed UTF-8.
    init?<C: Collection>(validatingUTF8Bytes bytes: C) where C.Element == UInt8 {
        var it = bytes.makeIterator()
        var decoder = UTF8()
        var scalars = String.UnicodeScalarView()
        loop: while true {
            switch decoder.decode(&it) {
            case .scalarValue(let s): scalars.append(s)
            case .emptyInput: break loop
            case .error: return nil
            }
        }
        self = String(scalars)
    }
}
