/// A tool the README installs is missing or did not start: a failure, never a skip, so CI cannot
/// pass without having run the test (.ci/run installs every tool).
public struct MissingTool: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description + " — install what the README lists" }
}
