import Foundation
import XCTest

extension XCTestCase {
    /// A fresh temporary directory, removed when the test ends.
    public func temporaryDirectory(_ prefix: String = "lockbench") throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }
}
