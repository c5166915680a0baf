import ArgumentParser
import CommandLineSupport
import Foundation
import LockRuntime

/// The server side of LockBench: the trust service, the push relay, virtual phones, scenarios and
/// fleets. A product of its own so that the lock binary (`lockbench`) builds and starts without the
/// HTTP and database stack; `lockbench trust …` (and phone, scenario, push, fleet) runs this binary,
/// which sits beside it.
@main
struct LockBenchServer: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            // Reached as `lockbench trust …`: help and errors read as the user typed them.
            commandName: "lockbench",
            abstract: "LockBench's server side: the trust service, the push relay, virtual phones, scenarios and fleets.",
            discussion: """
            Run through `lockbench trust|phone|scenario|push|fleet …`, or directly as lockbench-server. \
            Exit codes as `lockbench`'s: 0 success; 1 a negative answer (a refused login); 2 bad usage or \
            input; 3 an environment failure (a port in use, a service that does not answer); `fleet` \
            stopped by Ctrl-C: 130.
            """,
            version: "LockBench \(LockBenchVersion.current) (server)",
            subcommands: [TrustCommand.self, PhoneCommand.self, ScenarioCommand.self, PushCommand.self, FleetCommand.self, ConsoleCommand.self]
        )
    }

    static func main() async { await runWithExitCodes() }
}
