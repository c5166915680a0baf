import ByteCore

/// The one error type of the virtual PN532: a stable code to match on, a human reason that says
/// what to do, and the source site that raised it.
public struct PN532Error: CodedError, CustomStringConvertible, Equatable {
    public enum Code: String, Sendable, Equatable {
        /// posix_openpt/grantpt/unlockpt/ptsname or opening the slave failed.
        case ptyUnavailable
        /// The stable symlink could not be created (a non-symlink file is in the way, or no permission).
        case linkUnavailable
        /// A card's identity is inconsistent (UID length, ATQA UID-size bits, SAK).
        case invalidCard
        /// The reader is not running (stopped, or its pty closed).
        case notRunning
        /// A frame on the wire was malformed (checksum, length, TFI).
        case malformedFrame
        /// An external reader (target mode) got no answer in time.
        case timeout
    }

    public let code: Code
    public let reason: String
    public let file: String
    public let line: Int

    public init(_ code: Code, _ reason: String, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }


    public static func == (a: PN532Error, b: PN532Error) -> Bool { a.code == b.code && a.reason == b.reason }
}
