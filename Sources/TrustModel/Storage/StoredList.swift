import Foundation

/// A list column (a grant's readers and schedules) as every backend stores it: a JSON array of
/// strings in a text column, so the backends read each other's dumps.
package enum StoredList {
    package static func encode(_ items: [String]) -> String {
        String(decoding: (try? JSONEncoder().encode(items)) ?? Data("[]".utf8), as: UTF8.self)
    }

    package static func decode(_ text: String) throws -> [String] {
        do { return try JSONDecoder().decode([String].self, from: Data(text.utf8)) } catch {
            throw TrustStorageError("a list column is not a JSON array of strings")
        }
    }
}
