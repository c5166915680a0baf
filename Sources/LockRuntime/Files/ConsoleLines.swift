import Foundation

/// Prints a line at once, even when stdout is a pipe (both command-line products use it).
public func emitLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Prints a line on stderr at once.
public func emitError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
