import Foundation

/// A list column (a grant's readers and schedules) as every backend stores it: a JSON array of
/// strings in a text column, so the backends read each other's dumps.
package enum StoredList {
    package static func encode(_ items: [String]) -> String {
        String(decoding: (try? JSONEncoder().encode(items)) ?? Data("[]".utf8), as: UTF8.self)
    }

    package static func decode(_ text: String) throws -> [String] {
        if let plain = plainList(text) { return plain }
        do { return try JSONDecoder().decode([String].self, from: Data(text.utf8)) } catch {
            throw TrustStorageError("a list column is not a JSON array of strings")
        }
    }

    /// What `encode` writes for strings that need no escape (`[]`, `["a","b"]`), read without a
    /// JSON decoder: every poll decodes its user's grants' readers and schedules. Nil for anything
    /// else (an escape, spaces, another shape), which the decoder reads.
    static func plainList(_ text: String) -> [String]? {
        if text == "[]" { return [] }
        let u = text.utf8
        guard u.count >= 4, u.starts(with: #"[""#.utf8), u.reversed().starts(with: #"]""#.utf8),
              !u.contains(0x5C) else { return nil }   // no backslash: no escapes
        // Cut as bytes (a combining mark after a quote must not fuse with it); an item left with
        // a quote, or a control character, is not this shape.
        let items = Substring(u.dropFirst(2).dropLast(2)).split(separator: #"",""#, omittingEmptySubsequences: false)
        guard items.allSatisfy({ !$0.utf8.contains(0x22) && !$0.utf8.contains { $0 < 0x20 } }) else { return nil }
        return items.map(String.init)
    }
}
