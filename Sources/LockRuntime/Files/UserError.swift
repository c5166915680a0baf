import Lock

/// One exit code per meaning, the same in every command, so CI can branch on them.
public enum ExitCodes {
    /// Certified, granted, done.
    public static let success: Int32 = 0
    /// A negative answer: not certified, access denied, audit found failures.
    public static let negative: Int32 = 1
    /// Bad usage or input: unknown model, malformed file, bad flag.
    public static let usage: Int32 = 2
    /// The environment failed: no reader, permission denied, controller unreachable.
    public static let environment: Int32 = 3
}

/// A user-facing error: what was wrong, where, and what to do; `code` is the exit code it means.
/// The runtime throws it for what a user handed it (files, flags' values); the CLI prints it.
public struct UserError: Error, CustomStringConvertible {
    public var message: String
    public var code: Int32
    public var description: String { message }

    public init(message: String, code: Int32 = ExitCodes.usage) {
        self.message = message
        self.code = code
    }

    /// A lock's error: exit 3 when the machine failed (I/O, state in use), 2 when the input was bad.
    public init(lockError error: LockError) {
        self.init(message: error.description, code: error.code.isEnvironment ? ExitCodes.environment : ExitCodes.usage)
    }
}
