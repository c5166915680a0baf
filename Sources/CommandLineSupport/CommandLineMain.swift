import ArgumentParser
import Foundation
import LockRuntime

extension ParsableCommand {
    /// Parses and runs the command line with LockBench's exit codes, for both products: usage
    /// errors exit 2 (ArgumentParser's default is 64) and a `UserError` exits with its own code, so
    /// CI scripts get one code per meaning. A subcommand that is an `AsyncParsableCommand` runs on
    /// the caller's task, no thread blocked waiting for it; a synchronous one runs as it is.
    public static func runWithExitCodes() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exitWithCode(for: error)
        }
    }

    private static func exitWithCode(for error: any Error) -> Never {
        if let error = error as? UserError {
            FileHandle.standardError.write(Data(("Error: " + error.message + "\n").utf8))
            Foundation.exit(error.code)
        }
        if exitCode(for: error) == .validationFailure {
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(ExitCodes.usage)
        }
        exit(withError: error)
    }
}
