import AccessProtocol
import ArgumentParser
import ByteCore
import Codecs
import Foundation
import Lock
import LockRuntime
import OfflineUnlock

/// `lockbench clock …`: the lock's virtual clock and trusted time, for CI.
struct ClockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clock",
        abstract: "Show, set or advance a lock's virtual clock; simulate power loss.",
        discussion: """
        `set` is an operator setting the time: the clock becomes trusted and its high-water mark \
        follows. `set --untrusted` and `advance` only move the time, as a drifting or tampered clock \
        would: moving below the high-water mark makes the lock deny with clock_rollback. `power-loss` \
        leaves the clock untrusted (clock_untrusted) until an operator sets it or a credential presents \
        a document signed after the high-water mark (not one whose MSO asks for time verification, key 7: \
        while the clock is untrusted such a document is refused, time_not_verified).
        """,
        subcommands: [Show.self, Set.self, Advance.self, PowerLoss.self])

    struct Info: Encodable { var time: String; var trusted: Bool; var highWaterMark: String?; var mode: String }

    static func report(_ lock: EmulatedLock, json: Bool) {
        let c = lock.engine.state.clock
        let mode: String
        if case .frozen = lock.clock.mode { mode = "frozen" } else { mode = "running" }
        let info = Info(time: RFC3339.format(lock.clock.now()), trusted: c.trusted, highWaterMark: c.highWaterMark.map(RFC3339.format), mode: mode)
        if json { print(KeyFiles.json(info)) } else {
            print("\(info.time) (\(mode), \(c.trusted ? "trusted" : "UNTRUSTED"), high-water mark \(info.highWaterMark ?? "none"))")
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the lock's time and clock trust.")
        @OptionGroup var config: LockConfigOption
        @Flag(help: "Print as JSON.") var json = false
        func run() throws { ClockCommand.report(try config.open(), json: json) }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set the lock's time (ISO-8601).")
        @OptionGroup var config: LockConfigOption
        @Argument(help: ArgumentHelp("The new time, e.g. 2026-03-02T09:00:00Z.", valueName: "time")) var time: String
        @Flag(help: "Move the time without making it trusted (a tampered or drifting clock).") var untrusted = false
        @Flag(help: "Print as JSON.") var json = false
        func run() throws {
            let t = try KeyFiles.time(time, flag: "time")
            let lock = try config.open()
            do { try lock.setClock(t, trusted: !untrusted) } catch { throw UserError(lockError: error) }
            ClockCommand.report(lock, json: json)
        }
    }

    struct Advance: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move the lock's time forward (or back with a leading minus: -- -1h).")
        @OptionGroup var config: LockConfigOption
        @Argument(help: ArgumentHelp("A duration: 90s, 30m, 8h, 7d; -8h moves back.", valueName: "duration")) var by: String
        @Flag(help: "Print as JSON.") var json = false
        func run() throws {
            let negative = by.hasPrefix("-")
            let d = try KeyFiles.duration(negative ? String(by.dropFirst()) : by, flag: "duration", within: 0...DurationText.maximum)
            let lock = try config.open()
            do { try lock.advanceClock(negative ? -d : d); try lock.tick() } catch { throw UserError(lockError: error) }
            ClockCommand.report(lock, json: json)
        }
    }

    struct PowerLoss: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "power-loss", abstract: "Simulate a power loss: the clock is untrusted until trusted time arrives.")
        @OptionGroup var config: LockConfigOption
        @Flag(help: "Print as JSON.") var json = false
        func run() throws {
            let lock = try config.open()
            do { try lock.powerLoss() } catch { throw UserError(message: error.description, code: ExitCodes.environment) }
            ClockCommand.report(lock, json: json)
        }
    }
}
