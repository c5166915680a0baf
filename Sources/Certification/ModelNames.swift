// Model names as people type them: `nde`, `Schlage NDE`, `NDE Locks`, `AD-300`, `MTK15 reader`.

enum ModelNames {
    /// Trailing words that describe the product type, not the model.
    static let typeWords: Set<String> = [
        "lock", "locks", "reader", "readers", "module", "modules", "controller", "controllers",
        "enrollment", "enrolment",
    ]

    /// Lowercased ASCII words, split at anything that is not a letter or digit.
    static func words(_ text: String) -> [String] {
        var result: [String] = []
        var current: [UInt8] = []
        for c in text.utf8 {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): current.append(c + 32)
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): current.append(c)
            default:
                if c >= 0x80 { current.append(c); continue }  // keep non-ASCII letters as they are
                if !current.isEmpty { result.append(String(decoding: current, as: UTF8.self)); current.removeAll() }
            }
        }
        if !current.isEmpty { result.append(String(decoding: current, as: UTF8.self)) }
        return result
    }

    /// The matching key of a typed name: words without a leading vendor name, without trailing
    /// product-type words, and without anything in parentheses, joined with nothing between them
    /// (`Schlage NDEB Si Locks` → `ndebsi`, `AD-300` → `ad300`).
    static func key(_ text: String, vendors: [[String]]) -> String {
        var text = text
        if let open = text.firstIndex(of: "(") { text = String(text[..<open]) }
        var w = words(text)
        for vendor in vendors where !vendor.isEmpty && w.count > vendor.count && Array(w.prefix(vendor.count)) == vendor {
            w.removeFirst(vendor.count)
            break
        }
        while w.count > 1, let last = w.last, typeWords.contains(last) { w.removeLast() }
        return w.joined()
    }

    /// Edit distance over bytes (insert, delete, substitute, swap two neighbours: `MTK51` → `MTK15` is 1).
    static func distance(_ a: String, _ b: String) -> Int {
        let x = Array(a.utf8), y = Array(b.utf8)
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: y.count + 1), count: x.count + 1)
        for i in 0...x.count { d[i][0] = i }
        for j in 0...y.count { d[0][j] = j }
        for i in 1...x.count {
            for j in 1...y.count {
                let cost = x[i - 1] == y[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, x[i - 1] == y[j - 2], x[i - 2] == y[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[x.count][y.count]
    }
}

extension CertificationTables {
    /// The row a typed model name selects, or nil.
    public func row(named text: String) -> CertificationRow? {
        index[ModelNames.key(text, vendors: vendorKeys)].map { rows[$0] }
    }

    /// Up to five names close to an unknown one: small edit distance, or starting with it.
    public func suggestions(for text: String) -> [String] {
        let key = ModelNames.key(text, vendors: vendorKeys)
        guard !key.isEmpty else { return [] }
        var scored: [(distance: Int, name: String)] = []
        var seen = Set<String>()
        for name in names {
            let d = ModelNames.distance(key, name.key)
            let close = d <= max(1, min(3, name.key.count / 3))
            let prefix = key.count >= 2 && name.key.hasPrefix(key)
            guard close || prefix, seen.insert(name.display).inserted else { continue }
            scored.append((prefix ? min(d, 1) : d, name.display))
        }
        return scored.sorted { ($0.distance, $0.name) < ($1.distance, $1.name) }.prefix(5).map(\.name)
    }

    /// True when `reader` names one of the requirement's products.
    public func satisfies(_ requirement: Requirement, reader: String?) -> Bool {
        guard let reader else { return false }
        let key = ModelNames.key(reader, vendors: vendorKeys)
        guard !key.isEmpty else { return false }
        return requirement.names.contains { ModelNames.key($0, vendors: vendorKeys) == key }
    }
}
