import ArgumentParser
import Lock

/// One exit code per meaning, the same in every subcommand, so CI can branch on them.
enum ExitCodes {
    /// Certified, granted, done.
    static let success: Int32 = 0
    /// A negative answer: not certified, access denied, audit found failures.
    static let negative: Int32 = 1
    /// Bad usage or input: unknown model, malformed file, bad flag.
    static let usage: Int32 = 2
    /// The environment failed: no reader, permission denied, controller unreachable.
    static let environment: Int32 = 3

    static func exit(_ code: Int32) -> ExitCode { ExitCode(code) }
}

/// A user-facing error: what was wrong, where, and what to do. Exits with `code`.
struct UserError: Error, CustomStringConvertible {
    var message: String
    var code: Int32 = ExitCodes.usage
    var description: String { message }
}

extension UserError {
    /// A lock's error: exit 3 when the machine failed (I/O, state in use), 2 when the input was bad.
    init(lockError error: LockError) {
        self.init(message: error.description, code: error.code.isEnvironment ? ExitCodes.environment : ExitCodes.usage)
    }
}
