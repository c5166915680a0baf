import Foundation

/// A node of a wake-up namespace's data tree: JSON values, objects keyed by child name.
public indirect enum WakeUpValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([WakeUpValue])
    case object([String: WakeUpValue])

    /// Parses JSON text (at most 1 MiB).
    public init(parsing text: String) throws(WakeUpError) {
        guard text.utf8.count <= 1 << 20 else { throw WakeUpError(.badRequest, "the value is larger than 1 MiB") }
        do {
            self = try JSONDecoder().decode(WakeUpValue.self, from: Data(text.utf8))
        } catch {
            throw WakeUpError(.badRequest, "the body is not JSON (RFC 8259)")
        }
    }

    /// Compact JSON, keys sorted, slashes unescaped: the form sizes are measured in.
    public func encoded() -> String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let d):
            if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
            return d.isFinite ? "\(d)" : "null"
        case .string(let s): return CompactJSON.string(s)
        case .array(let a): return CompactJSON.array(a.map { $0.encoded() })
        case .object(let o): return CompactJSON.object(o.sorted { $0.key < $1.key }.map { ($0.key, $0.value.encoded()) })
        }
    }

    public var children: [String: WakeUpValue] {
        if case .object(let o) = self { return o }
        return [:]
    }

    /// The node at `segments` below this one (nil: absent).
    public func child(at segments: ArraySlice<String>) -> WakeUpValue? {
        guard let first = segments.first else { return self }
        guard case .object(let o) = self, let c = o[first] else { return nil }
        return c.child(at: segments.dropFirst())
    }

    /// This tree with the node at `segments` replaced (nil or `.null` removes it; empty objects
    /// on the way are removed too, as a data tree without leaves has no node).
    public func setting(_ value: WakeUpValue?, at segments: ArraySlice<String>) -> WakeUpValue? {
        guard let first = segments.first else { return value == .null ? nil : value }
        var o = children
        o[first] = (o[first] ?? .object([:])).setting(value, at: segments.dropFirst())
        if o[first] == .object([:]) { o[first] = nil }
        return o.isEmpty ? nil : .object(o)
    }
}

extension WakeUpValue: Decodable {
    /// JSON's types as they are: a boolean is not a number (the decoder is strict either way).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let d = try? c.decode(Double.self) { self = .number(d) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([WakeUpValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: WakeUpValue].self)) }
    }
}
