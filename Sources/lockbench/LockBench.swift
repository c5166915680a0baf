import ArgumentParser
import CommandLineSupport
import Foundation
import LockRuntime
import NFC

/// The root command only configures; every job is a subcommand owned by its layer's file. The
/// root is async so an async subcommand runs on the main task; the lock's subcommands are
/// synchronous (their radios run on threads of their own) and run as they are.
@main
struct LockBench: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "lockbench",
            abstract: "A lock and reader emulator for access-control engineers: emulated locks on NFC and BLE, mobile keys, firmware certification checks.",
            discussion: """
            Exit codes: 0 success (certified, granted); 1 a negative answer (not certified, denied); 2 \
            bad usage or input (unknown model, malformed file, missing file, unknown NFC driver, a \
            duration without its unit); 3 an environment failure (reader missing, permission denied).
            """,
            version: "LockBench \(LockBenchVersion.current) (libnfc \(LibNFC.version))",
            subcommands: [
                // One line per noun; each lives in Commands/<Noun>.swift.
                FirmwareCommand.self, KeyCommand.self, DocCommand.self, ConfigCommand.self, DecideCommand.self,
                ClockCommand.self, AuditCommand.self, CredentialCommand.self, LockCommand.self, DemoCommand.self,
                NFCCommand.self, DoctorCommand.self, PCSCCommand.self, BLECommand.self, ConformanceCommand.self, TraceCommand.self,
                // The server side: a sibling executable (Commands/ServerSide.swift).
                TrustForward.self, PhoneForward.self, ScenarioForward.self, PushForward.self, FleetForward.self, ConsoleForward.self,
            ]
        )
    }

    /// Usage errors exit 2 (ArgumentParser's default is 64) and a `UserError` exits with its own code,
    /// so CI scripts get one code per meaning.
    static func main() async { await runWithExitCodes() }
}
