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
        var text = text
        return text.withUTF8 { u -> [String]? in
            guard u.count >= 2, u.first == 0x5B, u.last == 0x5D else { return nil }   // [ … ]
            if u.count == 2 { return [] }
            // Each item: a quote, bytes that are neither a quote, a backslash nor a control
            // character, a quote; items separated by one comma.
            var items = [String]()
            var i = 1
            while true {
                guard i < u.count - 1, u[i] == 0x22 else { return nil }
                var j = i + 1
                while j < u.count - 1, u[j] != 0x22 {
                    guard u[j] != 0x5C, u[j] >= 0x20 else { return nil }
                    j += 1
                }
                guard j < u.count - 1 else { return nil }
                items.append(String(decoding: UnsafeBufferPointer(rebasing: u[(i + 1)..<j]), as: UTF8.self))
                if j + 1 == u.count - 1 { return items }
                guard u[j + 1] == 0x2C else { return nil }
                i = j + 2
            }
        }
    }
}
