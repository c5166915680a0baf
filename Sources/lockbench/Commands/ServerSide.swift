import ArgumentParser
import Foundation
import LockRuntime
#if canImport(Glibc)
import Glibc
#endif

/// `lockbench trust|phone|scenario|push|fleet …`: the server side lives in its own executable,
/// `lockbench-server`, beside this one (as `git` finds `git-foo`), so the lock binary neither
/// compiles nor links the HTTP and database stack. The arguments pass through unchanged and the
/// server's process replaces this one: stdin, signals and the exit status are the server's.
protocol ServerSideCommand: ParsableCommand {
    var arguments: [String] { get }
}

extension ServerSideCommand {
    func run() throws {
        let name = Self.configuration.commandName ?? ""
        let server = try ServerSide.executable()
        let argv = [server, name] + arguments
        var cArgs = argv.map { strdup($0) } + [nil]
        execv(server, &cArgs)
        let why = String(cString: strerror(errno))
        throw UserError(message: "cannot run \(server): \(why)", code: ExitCodes.environment)
    }
}

enum ServerSide {
    static let executableName = "lockbench-server"

    /// `lockbench-server` beside this binary, else on PATH.
    static func executable() throws -> String {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var candidates = [me.deletingLastPathComponent().appendingPathComponent(executableName).path]
        if let selfPath = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.insert(URL(fileURLWithPath: selfPath).deletingLastPathComponent().appendingPathComponent(executableName).path, at: 0)
        }
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            candidates.append(String(dir) + "/" + executableName)
        }
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
        throw UserError(message: """
            this command is LockBench's server side, a separate executable (\(executableName)) that was not found \
            beside \(me.path) nor on PATH. Build it: swift build --product \(executableName) (or swift build for everything)
            """, code: ExitCodes.environment)
    }
}

struct TrustForward: ServerSideCommand {
    static let configuration = CommandConfiguration(commandName: "trust",
        abstract: "The trust service that keeps short-lived keys current (runs lockbench-server; `lockbench trust --help` for its commands).")
    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
}

struct PhoneForward: ServerSideCommand {
    static let configuration = CommandConfiguration(commandName: "phone",
        abstract: "A virtual phone that logs in, polls, gets pushed and serves locks (runs lockbench-server).")
    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
}

struct ScenarioForward: ServerSideCommand {
    static let configuration = CommandConfiguration(commandName: "scenario",
        abstract: "Scenarios that run service, relay, phones and locks on one virtual clock (runs lockbench-server).")
    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
}

struct ConsoleForward: ServerSideCommand {
    static let configuration = CommandConfiguration(commandName: "console",
        abstract: "A bench console in the browser for a running lock (`lock run --events`; runs lockbench-server).")
    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
}

struct PushForward: ServerSideCommand {
    static let configuration = CommandConfiguration(commandName: "push",
        abstract: "The APNs/FCM-shaped push relay and wake-up subscriptions (runs lockbench-server).")
    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
}

struct FleetForward: ServerSideCommand {
    static let configuration = CommandConfiguration(commandName: "fleet",
        abstract: "Many locks and phones in one process (runs lockbench-server).")
    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
}
