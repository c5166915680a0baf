import ArgumentParser
import Foundation
import LockRuntime

extension ParsableCommand {
    /// Parses and runs the command line with LockBench's exit codes, for both products: usage
    /// errors exit 2 (ArgumentParser's default is 64) and a `UserError` exits with its own code, so
    /// CI scripts get one code per meaning.
    public static func runWithExitCodes() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let error as UserError {
            FileHandle.standardError.write(Data(("Error: " + error.message + "\n").utf8))
            Foundation.exit(error.code)
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(ExitCodes.usage)
            }
            exit(withError: error)
        }
    }
}
