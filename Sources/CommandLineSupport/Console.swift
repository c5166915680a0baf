import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Whether a command's stdin console (`lock run`, `nfc virtual-reader`, `phone run`) reads stdin.
/// A job started with `&` from an interactive shell keeps the terminal as its stdin but is not in
/// the terminal's foreground process group: one read and the kernel stops it (SIGTTIN), and the
/// next command the user types finds a stopped lock or phone. So the console reads stdin only when
/// it is a pipe or file, or a terminal whose foreground group is this process's; never with
/// `--no-console`.
public enum Console {
    public enum Decision: Equatable, Sendable {
        case read
        /// Not read, and why (said once on stderr).
        case off(String)
    }

    public static func decide(noConsole: Bool, descriptor: Int32 = STDIN_FILENO) -> Decision {
        if noConsole { return .off("--no-console") }
        guard isatty(descriptor) == 1 else { return .read }
        let foreground = tcgetpgrp(descriptor)
        if foreground >= 0 && foreground != getpgrp() {
            return .off("stdin is a terminal this background job does not own (reading it would stop the job)")
        }
        return .read
    }

    /// The decision, with the one line that says the console is off and how to reach the command
    /// instead (`alternatives`: its FIFO, signals).
    public static func start(noConsole: Bool, command: String, alternatives: String) -> Bool {
        switch decide(noConsole: noConsole) {
        case .read: return true
        case .off(let why):
            if !noConsole {
                FileHandle.standardError.write(Data("\(command): console off: \(why); \(alternatives)\n".utf8))
            }
            return false
        }
    }

    /// The console's lines: stdin's when it reads, else a stream that never ends (the command runs
    /// until a signal stops it).
    public static func lines(reading: Bool) -> AsyncStream<String> {
        if reading { return standardInputLines() }
        // The stream ends when its last continuation goes: this one holds itself.
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        continuation.onTermination = { _ in _ = continuation }
        return lines
    }
}
