import Foundation

/// Where the repository and the build products are, found from this file's own path and from the
/// running test bundle: no test reads anything outside the checkout.
public enum Repository {
    /// The repository root (the folder holding Package.swift).
    public static let root: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        fatalError("Package.swift not found above \(#filePath)")
    }()

    /// A file or folder of the repository, by its path from the root (`"firmware-tables"`).
    public static func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    /// The build products folder holding this test bundle (…/.build/<triple>/debug).
    public static var buildDirectory: URL {
        var dir = Bundle.main.bundleURL
        for _ in 0..<3 {
            if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Modules/Crypto.swiftmodule").path) { return dir }
            dir.deleteLastPathComponent()
        }
        return root.appendingPathComponent(".build/debug")
    }

    /// A built executable of this package (`lockbench`, `lockbench-bench`) beside the test bundle.
    /// The test target that runs it must depend on its target, so that `swift build --build-tests`
    /// builds it.
    public static func builtProduct(_ name: String) -> URL {
        var dir = Bundle.main.bundleURL
        for _ in 0..<3 {
            let candidate = dir.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir.deleteLastPathComponent()
        }
        fatalError("\(name) not found near \(Bundle.main.bundleURL.path): the test target must depend on it; run `swift build --build-tests`")
    }
}
