import ByteCore

/// A bounded cache of Kpersistent with least-recently-used eviction. The reader keys it by the
/// credential's long-term public key (65 bytes), the credential by the reader id (32 bytes).
/// Codable, so a lock can persist it with its state.
public struct FastCache: Codable, Equatable, Sendable {
    /// Bytes in memory (the FAST path tries every entry), hex on disk.
    public struct Entry: Codable, Equatable, Sendable {
        /// The key: a credential public key or a reader id.
        public var key: [UInt8]
        /// The 32-byte Kpersistent.
        public var persistentKey: [UInt8]
        /// Recency stamp; the smallest is evicted first.
        public var lastUsed: UInt64

        init(key: [UInt8], persistentKey: [UInt8], lastUsed: UInt64) {
            self.key = key; self.persistentKey = persistentKey; self.lastUsed = lastUsed
        }

        enum CodingKeys: String, CodingKey { case key, persistentKey, lastUsed }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            func bytes(_ k: CodingKeys) throws -> [UInt8] {
                guard let b = Hex.decode(try c.decode(String.self, forKey: k)) else {
                    throw DecodingError.dataCorruptedError(forKey: k, in: c, debugDescription: "not hex")
                }
                return b
            }
            key = try bytes(.key)
            persistentKey = try bytes(.persistentKey)
            lastUsed = try c.decode(UInt64.self, forKey: .lastUsed)
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(key.hex, forKey: .key)
            try c.encode(persistentKey.hex, forKey: .persistentKey)
            try c.encode(lastUsed, forKey: .lastUsed)
        }
    }

    public private(set) var capacity: Int
    public private(set) var entries: [Entry] = []
    private var clock: UInt64 = 0

    public init(capacity: Int = 64) {
        precondition(capacity >= 1)
        self.capacity = capacity
    }

    public var count: Int { entries.count }

    /// Stores (or refreshes) `persistent` for `key`, evicting the least recently used entry when full.
    public mutating func store(_ persistent: [UInt8], for key: [UInt8]) {
        clock += 1
        if let i = entries.firstIndex(where: { $0.key == key }) {
            entries[i].persistentKey = persistent
            entries[i].lastUsed = clock
            return
        }
        if entries.count >= capacity, let oldest = entries.indices.min(by: { entries[$0].lastUsed < entries[$1].lastUsed }) {
            entries.remove(at: oldest)
        }
        entries.append(Entry(key: key, persistentKey: persistent, lastUsed: clock))
    }

    /// The Kpersistent for `key`, marking it used.
    public mutating func lookup(_ key: [UInt8]) -> [UInt8]? {
        guard let i = entries.firstIndex(where: { $0.key == key }) else { return nil }
        clock += 1
        entries[i].lastUsed = clock
        return entries[i].persistentKey
    }

    public mutating func touch(_ key: [UInt8]) { _ = lookup(key) }

    public mutating func remove(_ key: [UInt8]) {
        entries.removeAll { $0.key == key }
    }

    /// All (key, Kpersistent) pairs, most recently used first (the order the reader tries them).
    public var all: [(key: [UInt8], persistent: [UInt8])] {
        entries.sorted { $0.lastUsed > $1.lastUsed }.map { ($0.key, $0.persistentKey) }
    }
}

/// The reader's memory of recently seen device ephemeral keys: a credential must use a fresh
/// ephemeral key in every AUTH0 response, so a repeated one is a replayed answer. Bounded FIFO;
/// Codable as the list, oldest first.
public struct ReplayGuard: Codable, Equatable, Sendable {
    public private(set) var capacity: Int
    public private(set) var seen: [String] = []
    private var index: Set<String> = []

    private enum CodingKeys: String, CodingKey { case capacity, seen }

    public init(capacity: Int = 1024) {
        precondition(capacity >= 1)
        self.capacity = capacity
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        capacity = max(1, try c.decode(Int.self, forKey: .capacity))
        seen = Array(try c.decode([String].self, forKey: .seen).suffix(capacity))
        index = Set(seen)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(capacity, forKey: .capacity)
        try c.encode(seen, forKey: .seen)
    }

    public static func == (a: ReplayGuard, b: ReplayGuard) -> Bool { a.capacity == b.capacity && a.seen == b.seen }

    public func contains(_ value: [UInt8]) -> Bool { index.contains(value.hex) }

    public mutating func insert(_ value: [UInt8]) {
        let h = value.hex
        guard !index.contains(h) else { return }
        if seen.count >= capacity { index.remove(seen.removeFirst()) }
        seen.append(h)
        index.insert(h)
    }
}
